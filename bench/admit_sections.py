#!/usr/bin/env python3
"""Where admit.lua's server time goes, section by section (docs/gate.md,
"Cost per admission").

  bench/admit_sections.py [--queues 1000] [--iters 2000] [--rounds 9] [--rev REV]

(--rev: the scripts of git revision REV instead of the working tree's.)

Starts the server scripts/lib/servers.sh finds on a free loopback port,
configures a target as bench/admit_script_compare.sh does (3 classes, caps
raised after the queues were registered and backlogged under a tiny cap),
then runs one EVAL that calls a copy of prelude.lua + admit.lua (its files
in the order of lib/gate/lua/parts.txt, read by bench/gate_lua.py) ITERS times
round-robin over the queues (all admitted, the common path of
bench/gate_bench.cpp). The copy has a mark (os.clock() on Valkey 9, where
TIME stands still inside a script; redis.call('TIME') on Redis 7) before each
section header of admit.lua ("---- arguments", "---- one read", ...) and
before the ticket's SET, the records' HSET and the ADMIT reply; each mark
records the time since the previous one for its section. The cost of a mark
(the time of the empty section between the prelude and admit.lua's first
header, about 1-3 us) is subtracted. Prints the median
over ROUNDS (a fresh target each) of each section's microseconds per call,
and the total (each a mean over the calls without the slowest 5 %,
so a preemption does not count). Hot loop, one EVAL: no network, no per-EVALSHA overhead, warm
caches, so the total is below the per-call server time of a real run; the
shares are what it is for. On a loaded machine use more rounds.
"""
import argparse
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import gate_lua  # bench/gate_lua.py: the scripts' texts, parts joined

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
KEY = 'bp:{sections}:state'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def marked_body(prelude, admit):
    """prelude + admit with __mark(i) calls; returns (text, section names)."""
    # names[i] is the code that ends at mark i
    names, out, current = ['prelude'], [], 'admit.lua head (comments)'
    for line in admit.split('\n'):
        m = re.match(r'^-{20,} (.*)$', line)
        name = None
        if m:
            name = m.group(1)
        elif re.match(r"^\s+redis\.call\('SET', P", line):
            name = 'ticket SET'
        elif re.match(r"^\s+local cr, ct = rec\(CREC", line):
            name = 'records + HSET'
        elif re.match(r"^\s+return \{'ADMIT'", line):
            name = 'reply'
        if name:
            out.append('__mark(%d)' % len(names))
            names.append(current)
            current = name
        out.append(line)
    # section i is the code between mark i - 1 and mark i; mark 0 ends the prelude
    return prelude + '\n__mark(0)\n' + '\n'.join(out), names


def wrapper(body, nsect):
    """One EVAL: N calls, then per section the mean of its per-call times
    with the slowest 5 % left out (a preemption lands in one section of one
    call; TIME's 1 us steps average out over the calls)."""
    return ('local NQ, N = tonumber(ARGV[10]), tonumber(ARGV[11])\n'
            'local smp, last = {}, 0\n'
            'for i = 0, NSECT do smp[i] = {} end\n'
            # Valkey 9 answers TIME with the command's start time inside a
            # script, so there the clock is os.clock() (the server's CPU time;
            # Redis 7.0's sandbox has no os, and its TIME moves).
            'local has_os = pcall(function() return os.clock() end)\n'
            'local function clock()\n'
            '  if has_os then return os.clock() * 1e6 end\n'
            '  local t = redis.call("TIME"); return t[1] * 1e6 + t[2]\n'
            'end\n'
            'local function __mark(i) local c = clock(); local s = smp[i]; s[#s + 1] = c - last; '
            'last = clock() end\n'
            'local function once()\nlast = clock()\n' + body + '\nend\n'
            'local names = {}\n'
            'for i = 0, NQ - 1 do names[i + 1] = string.format("tenant%012d", i) end\n'
            'for i = 1, N do ARGV[1] = names[(i % NQ) + 1]; ARGV[2] = tostring(1 + i % NQ % 3); '
            'once() end\n'
            'local res = {}\n'
            'for i = 0, NSECT do\n'
            '  local s = smp[i]\n'
            '  table.sort(s)\n'
            '  local keep, sum = math.floor(#s * 0.95), 0\n'
            '  for j = 1, keep do sum = sum + s[j] end\n'
            '  res[#res + 1] = (keep > 0 and tostring(sum / keep) or "0") .. " " .. #s\n'
            'end\n'
            'return res\n').replace('NSECT', str(nsect - 1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--queues', type=int, default=1000)
    ap.add_argument('--iters', type=int, default=2000)
    ap.add_argument('--rounds', type=int, default=9)
    ap.add_argument('--rev', default='')
    a = ap.parse_args()

    found = subprocess.run(['bash', '-c', 'source scripts/lib/servers.sh && bp_server_bin && bp_cli_bin'],
                           cwd=ROOT, capture_output=True, text=True)
    if found.returncode != 0:
        sys.exit('admit_sections: no server and cli: ' + found.stderr.strip())
    server, cli_bin = found.stdout.split()
    # admit: admit.lua's files after the prelude (parts.txt), as one text.
    prelude, admit = gate_lua.parts('admit', a.rev)
    configure = gate_lua.text('configure', a.rev, bare=True)
    body, names = marked_body(prelude, admit)
    wrap = wrapper(body, len(names))
    port = str(free_port())
    tmp = tempfile.mkdtemp(prefix='admit_sections.')
    proc = subprocess.Popen([server, '--port', port, '--bind', '127.0.0.1', '--save', '',
                             '--appendonly', 'no', '--dir', tmp],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def cli(*args, inp=None):
        r = subprocess.run([cli_bin, '-p', port, *args], input=inp, capture_output=True,
                           text=True)
        return r.stdout.strip()

    try:
        for _ in range(100):
            if cli('ping') == 'PONG':
                break
            time.sleep(0.05)
        print('uptime:', subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip())
        rows, marks = [], []
        for _ in range(a.rounds):
            cli('flushall')
            c = cli('script', 'load', configure)
            adm = cli('script', 'load', prelude + admit)
            w = cli('script', 'load', wrap)
            cli('evalsha', c, '1', KEY, 'set', 'omega:1', '0.5', 'omega:2', '0.3', 'omega:3',
                '0.2', 'omega_sum', '1', 'classes', '3', 'slack_ms', '50', 'lend_fraction', '0.5',
                'grace_ms', '600000', 'ticket_ttl_ms', '600000', 'requests_per_s', '1',
                'tokens_per_s', '0', 'burst_s', '1')
            cli(inp=''.join('EVALSHA %s 1 %s tenant%012d %d 1 0 0 reconcile none 3600000 0\n' %
                            (adm, KEY, i, 1 + i % 3) for i in range(a.queues)))
            cli('evalsha', c, '1', KEY, 'set', 'requests_per_s', '1e9', 'tokens_per_s', '1e12')
            out = cli('evalsha', w, '1', KEY, 'x', '1', '1', '100', '0', 'reconcile', 'none',
                      '3600000', '0', str(a.queues), str(a.iters)).split('\n')
            if len(out) != len(names):
                sys.exit('admit_sections: unexpected reply: %s' % out[:3])
            raw = [float(x.split()[0]) if int(x.split()[1]) else None for x in out]
            mark = raw[1]  # the head holds no code: a mark's own cost in place
            marks.append(mark)
            rows.append([None if i == 1 or x is None else x - mark for i, x in enumerate(raw)])
        print('%s: %d queues, %d calls per round, %d rounds; mark cost %.2f us (subtracted)' %
              (a.rev or 'working tree', a.queues, a.iters, a.rounds, statistics.median(marks)))
        print('| section (admit.lua) | us per call, median of rounds | min |')
        print('|---|---|---|')
        for i, n in enumerate(names):
            v = [r[i] for r in rows if r[i] is not None]
            if v:  # (sections after the ADMIT reply are not run)
                print('| %s | %.2f | %.2f |' % (n, statistics.median(v), min(v)))
        tot = [sum(x for x in r if x is not None) for r in rows]
        print('| total | %.2f | %.2f |' % (statistics.median(tot), min(tot)))
        print('uptime:', subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip())
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
