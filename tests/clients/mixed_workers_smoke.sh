#!/usr/bin/env bash
# scripts/mixed-workers.sh end to end, short: 8 s, one Python and one Node
# worker beside loadgen's four tenants. Checks the structure only (every
# process ran, the report has a row per tenant and the target table), never
# the figures, which a loaded test machine moves; docs/mixed-workers.md has
# the measured run. Exits 77 (skipped) when clients/node/node_modules is absent.
set -uo pipefail
cd "$(dirname "$0")/../.."
[ -d clients/node/node_modules/openai ] || { echo "SKIP: clients/node/node_modules is absent"; exit 77; }
out=$(mktemp -d -t bp-mixed-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
scripts/mixed-workers.sh --out "$out/run" --seconds 8 --python 1 --node 1 --slots 2 >"$out/stdout" 2>"$out/stderr"
rc=$?
cat "$out/stdout"
# 3: the run finished and a target was missed (a busy machine); anything else is a failure.
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { echo "FAIL: exit $rc"; cat "$out/stderr"; exit 1; }
for row in "| lg-0 | loadgen" "| lg-3 | loadgen" "| py-0 | python" "| node-0 | node" "| 429 share" "| achievement-Jain"; do
  grep -qF -- "$row" "$out/stdout" || { echo "FAIL: no row '$row' in the report"; exit 1; }
done
echo "ok: the mixed run's report counts loadgen's, the Python and the Node tenants"
