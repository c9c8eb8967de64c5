#!/usr/bin/env python3
"""Two builds of ibsnmpd, alternated in one run: a bench (sma_walk, pm_sweep,
trap_latency) runs ROUNDS times with each build, old and new in turn (old,
new, old, new, ...: the machine's noise falls on both), and its key figures
are printed as medians per build with the ratio new / old.

The base build is another tree's build directory (e.g. a checkout of an
earlier commit, built with `cmake -S . -B build`); only ibsnmpd differs
between the runs (IBSNMPD_BIN): the test tools, the bare client and the
bench itself are this tree's.

Usage: bench/compare.py --base BUILD [--rounds 3] BENCH [ARGS...]
   e.g. bench/compare.py --base /tmp/old/build --rounds 5 pm_sweep --sweeps 7"""
import argparse
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

# per bench: (figure, regex of its value in the output, which way is better)
FIGURES = {
    "sma_walk": [
        ("SMA-MIB walk through snmpd, s", r"ibsnmpd SMA-MIB walk: \d+ varbinds in ([\d.]+) s",
         "lower"),
        ("snmpgetnext at row 1, ms", r"at row 1 of ibSmaSL2VLMapTable: ([\d.]+) ms", "lower"),
        ("snmpgetnext at the last row, ms", r"at its last row: ([\d.]+) ms", "lower"),
        ("resident memory, KiB", r"ibsnmpd resident memory: (\d+) KiB", "lower"),
    ],
    "pm_sweep": [
        ("counter sweep, s", r"ibsnmpd sweep \(.*\): median ([\d.]+) s", "lower"),
        ("sweep / bare client", r"ratio ibsnmpd sweep / bare pipelined client: ([\d.]+)",
         "lower"),
        ("walk of ibsnmpdPmPortTable, s",
         r"snmpbulkwalk of ibsnmpdPmPortTable: \d+ varbinds in ([\d.]+) s", "lower"),
        ("resident memory, KiB", r"ibsnmpd RSS (\d+) KiB", "lower"),
    ],
    "trap_latency": [
        ("trap latency median, ms", r"^  median ([\d.]+) ms", "lower"),
        ("burst notifications per s", r"logged, (\d+) per second end to end", "higher"),
        ("GET while flapping, median ms", r"([\d.]+) ms while flapping", "lower"),
    ],
}


def run(bench, args, binary):
    env = dict(os.environ, IBSNMPD_BIN=binary, MIBS="", PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, os.path.join(HERE, bench + ".py")] + args,
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("%s with %s failed:\n%s%s" % (bench, binary, out.stdout[-2000:],
                                               out.stderr[-2000:]))
    res = {}
    for name, regex, _ in FIGURES[bench]:
        m = re.search(regex, out.stdout, re.M)
        if m:
            res[name] = float(m.group(1))
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="the other build directory")
    ap.add_argument("--new", default=os.path.join(TOP, "build"), help="this build (default)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("bench", choices=sorted(FIGURES))
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    builds = {"old": os.path.join(a.base, "ibsnmpd"), "new": os.path.join(a.new, "ibsnmpd")}
    for b in builds.values():
        if not os.access(b, os.X_OK):
            sys.exit("no ibsnmpd at %s" % b)
    got = {"old": [], "new": []}
    for r in range(a.rounds):
        for which in ("old", "new"):
            res = run(a.bench, a.args, builds[which])
            got[which].append(res)
            print("round %d %s: %s" % (r + 1, which, ", ".join("%s %g" % kv
                                                               for kv in res.items())),
                  flush=True)
    print("\n%s, %d rounds alternated (old %s, new %s); medians:" % (
        a.bench, a.rounds, builds["old"], builds["new"]))
    for name, _, better in FIGURES[a.bench]:
        old = [g[name] for g in got["old"] if name in g]
        new = [g[name] for g in got["new"] if name in g]
        if not old or not new:
            continue
        mo, mn = statistics.median(old), statistics.median(new)
        print("  %-34s old %10.3f  new %10.3f  new/old %.2f (%s is better)" % (
            name, mo, mn, mn / mo if mo else float("nan"), better))


if __name__ == "__main__":
    main()
