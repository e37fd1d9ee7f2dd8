#!/usr/bin/env bash
# ctest driver for the Python client: pytest (Debian's python3-pytest, over
# Debian's python3-redis, both installed by scripts/setup.sh) with the system
# interpreter, whose dist-packages hold them. The tests start their own server.
set -euo pipefail
cd "$(dirname "$0")"
py=/usr/bin/python3
"$py" -c 'import redis, pytest' 2>/dev/null ||
  { echo "python3-redis / python3-pytest missing: run scripts/setup.sh" >&2; exit 1; }
exec "$py" -m pytest -q -p no:cacheprovider tests
