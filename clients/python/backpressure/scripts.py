"""The gate's Lua scripts as the server receives them (docs/protocol.md).

Each script is sent as one text: a comment line naming it, prelude.lua, then
the script's files (the one file <name>.lua, or the files parts.txt lists
for it, in order), byte for byte as the C++ build embeds it, so every client
of a server computes the same SHA1 and shares one cached script. The scripts are
read from BP_GATE_LUA_DIR, else the repository's lib/gate/lua/, else an
installed share directory.
"""

import hashlib
import os
import re
from pathlib import Path

# The protocol version this client implements; prelude.lua owns it.
PROTOCOL_VERSION = 1

SCRIPT_NAMES = ("admit", "release", "configure", "state", "reset_buckets")

_VERSION_LINE = re.compile(r"^local PROTOCOL_VERSION = (\d+)", re.MULTILINE)

# The list of the scripts sent as several files, beside the scripts.
PARTS_FILE = "parts.txt"


def default_lua_dir():
    """The first directory holding prelude.lua among BP_GATE_LUA_DIR, the
    repository's lib/gate/lua/ and the installed share directories."""
    candidates = []
    if os.environ.get("BP_GATE_LUA_DIR"):
        candidates.append(Path(os.environ["BP_GATE_LUA_DIR"]))
    candidates.append(Path(__file__).resolve().parents[3] / "lib" / "gate" / "lua")
    candidates += [Path("/usr/local/share/backpressure/lua"), Path("/usr/share/backpressure/lua")]
    for c in candidates:
        if (c / "prelude.lua").is_file():
            return c
    raise FileNotFoundError(
        "gate scripts not found: set BP_GATE_LUA_DIR to a directory holding prelude.lua "
        "(lib/gate/lua/ of the backpressure source tree); looked in "
        + ", ".join(str(c) for c in candidates))


def parse_parts(text):
    """{script file: [its files in order]} from the text of parts.txt: per
    line not blank and not starting with '#', file names separated by
    whitespace, the first naming the script. Scripts not listed are absent."""
    out = {}
    for line in text.splitlines():
        files = line.split()
        if len(files) >= 2 and not line.startswith("#"):
            out[files[0]] = files
    return out


def script_body(lua_dir, name, parts=None):
    """The text of script `name` (e.g. "admit") after the prelude: its files
    in parts.txt's order, or <name>.lua alone. parts: parse_parts's answer,
    read from lua_dir when None (FileNotFoundError without parts.txt)."""
    d = Path(lua_dir)
    if parts is None:
        parts = parse_parts((d / PARTS_FILE).read_text())
    files = parts.get(f"{name}.lua", [f"{name}.lua"])
    return "".join((d / f).read_text() for f in files)


class Script:
    """One script's text and SHA1 (hex)."""

    def __init__(self, name, text):
        self.name = name
        self.text = text
        self.sha = hashlib.sha1(text.encode()).hexdigest()


def load_scripts(lua_dir=None):
    """{name: Script} for SCRIPT_NAMES. Raises ValueError when prelude.lua
    names no protocol version or another one than PROTOCOL_VERSION."""
    d = Path(lua_dir) if lua_dir else default_lua_dir()
    prelude_path = d / "prelude.lua"
    prelude = prelude_path.read_text()
    m = _VERSION_LINE.search(prelude)
    found = int(m.group(1)) if m else None
    if found != PROTOCOL_VERSION:
        raise ValueError(
            f"{prelude_path}: protocol version {found if m else 'missing'}, this client "
            f"implements {PROTOCOL_VERSION} (docs/protocol.md)")
    parts = parse_parts((d / PARTS_FILE).read_text())
    out = {}
    for name in SCRIPT_NAMES:
        body = script_body(d, name, parts)
        out[name] = Script(name, f"-- {name}.lua: prelude.lua, then {name}.lua\n{prelude}{body}")
    return out
