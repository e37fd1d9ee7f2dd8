#!/usr/bin/env python3
"""A gate script's text as the gate sends it, from the working tree or a git
revision, for the benchmarks that load or edit the scripts themselves.

  bench/gate_lua.py [--rev REV] [--bare] NAME     (NAME: admit, configure, ...)

Prints "-- NAME.lua: prelude.lua, then NAME.lua\\n", prelude.lua, then the
script's files (NAME.lua, or the files lib/gate/lua/parts.txt lists for it,
in order): the C++ build's text, byte for byte (docs/protocol.md, "Loading
the scripts"). --bare leaves out the naming line (a script wrapped in a
function library, or edited before loading). --rev REV reads the files of
git revision REV: from lib/gate/lua/, else lib/lua/ (revisions before the
gate library), without a prelude or parts.txt when REV has none (then the
script is its one file, with no naming line). parts.txt is read with the
Python client's reader (clients/python/backpressure/scripts.py).
"""
import argparse
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
_spec = importlib.util.spec_from_file_location(
    'bp_scripts', os.path.join(ROOT, 'clients', 'python', 'backpressure', 'scripts.py'))
_scripts = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_scripts)


def _read(rev, path):
    """The text of path (from ROOT) in the working tree (rev '') or at rev;
    None when absent."""
    if not rev:
        full = os.path.join(ROOT, path)
        return open(full).read() if os.path.isfile(full) else None
    r = subprocess.run(['git', '-C', ROOT, 'show', '%s:%s' % (rev, path)],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def parts(name, rev=''):
    """(prelude text or None, body): the script's files after the prelude,
    joined. Exits when no lua directory of rev has NAME.lua."""
    for d in ('lib/gate/lua', 'lib/lua'):
        if _read(rev, '%s/%s.lua' % (d, name)) is None:
            continue
        listed = _scripts.parse_parts(_read(rev, d + '/parts.txt') or '')
        texts = [_read(rev, '%s/%s' % (d, f)) for f in listed.get(name + '.lua', [name + '.lua'])]
        if None in texts:
            sys.exit('gate_lua: a file %s/parts.txt lists for %s.lua is missing' % (d, name))
        return _read(rev, d + '/prelude.lua'), ''.join(texts)
    sys.exit('gate_lua: no %s.lua at %s' % (name, rev or 'the working tree'))


def text(name, rev='', bare=False):
    """The text sent for script NAME (see the module's help)."""
    prelude, body = parts(name, rev)
    if prelude is None:
        return body
    head = '' if bare else '-- %s.lua: prelude.lua, then %s.lua\n' % (name, name)
    return head + prelude + body


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rev', default='')
    ap.add_argument('--bare', action='store_true')
    ap.add_argument('name')
    a = ap.parse_args()
    sys.stdout.write(text(a.name, a.rev, a.bare))


if __name__ == '__main__':
    main()
