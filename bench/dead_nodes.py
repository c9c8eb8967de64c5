#!/usr/bin/env python3
"""Benchmark: nodes that stop answering on a big fabric. On fabricsim's
rail-optimized layout (SERVERS servers of 8 HCAs, HCA K on rail K's leaves),
ibsnmpd in direct mode on srv-1-hca1 sweeps every port's counters; its
sweeps' times (ibsnmpdCacheLastDuration of pmCounters) and the log lines it
writes, with every node answering, with one leaf switch dead, with a whole
rail dead (its leaves and spines, and every server's HCA on it), and once
they answer again. A dead node answers nothing (fabricsim's Dead); each
request to it costs madTimeout x (madRetries + 1) (here 500 ms x 3) before
the node is taken for silent and what waits for it fails at once; when its
silence is over the MAD engine probes it itself (the request that failed,
once, in a sixteenth of the window, beside the sweeps), and a node that
does not answer the probe stays silent twice as long, up to a minute. The
sweeps never wait on it. The ratio of each condition's sweeps to the sweeps
with every node answering is printed against the limit of 1.2 (issue 37).

Usage: bench/dead_nodes.py [--servers 1000] [--sweeps 3]
"""
import argparse
import os
import re
import statistics
import sys
import time

from benchlib import TestBed, group_index, stop_on_sigterm, sweep_durations

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "build"))
SILENT = re.compile(r"counter sweep: \d+ of \d+ nodes do not answer")
AGAIN = "counter sweep: every node answers again"


def sweeps(target, group, count, skip=1):
    """The durations (s) of the next `count` sweeps after `skip` more (the
    one under way when a condition began)."""
    return sweep_durations(target, group, count + skip)[skip:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int, default=1000)
    ap.add_argument("--sweeps", type=int, default=3)
    args = ap.parse_args()
    stop_on_sigterm()
    conf = ["cacheLifetime pmCounters 5", "cacheLifetime fabricPorts 3600",
            "nodeContextTypes none", "dcbxEnable no", "madTimeout 500", "madRetries 2"]
    with TestBed(None, None, conf=conf, direct=True, binary=os.path.join(BUILD, "ibsnmpd"),
                 big={"hosts": args.servers, "layout": "rail"}) as bed:
        target, log = bed.env["SNMP_DIRECT_TARGET"], os.path.join(bed.dir, "ibsnmpd.log")
        m = None
        for _ in range(900):
            m = re.search(r"subnet discovered: (\d+) nodes, (\d+) ports", open(log).read())
            if m:
                break
            time.sleep(1)
        group = group_index(target, "pmCounters")
        print("rail layout, %d servers: %s nodes, %s ports; ibsnmpd on srv-1-hca1, "
              "madTimeout 500 ms, madRetries 2" % (args.servers, m.group(1), m.group(2)))
        phases = [("every node answers", None, None),
                  ("leaf-r2.1-1 dead", 'Dead "leaf-r2.1-1"', 'Alive "leaf-r2.1-1"'),
                  ("rail 2 dead (its switches, every HCA 2)",
                   ['Dead "*-r2.*"', 'Dead "srv-*-hca2"'],
                   ['Alive "*-r2.*"', 'Alive "srv-*-hca2"'])]
        base = None
        for name, dead, alive in phases:
            before = open(log).read()
            for cmd in ([dead] if isinstance(dead, str) else dead or []):
                bed.sim(cmd)
            t = sweeps(target, group, args.sweeps)
            during = open(log).read()[len(before):]
            back = ""
            if alive:
                for cmd in [alive] if isinstance(alive, str) else alive:
                    bed.sim(cmd)
                started = time.monotonic()
                while AGAIN not in open(log).read()[len(before):] and \
                        time.monotonic() - started < 180:
                    time.sleep(0.5)
                back = "; alive again: 'answers again' after %.0f s, then a sweep of %.2f s" % (
                    time.monotonic() - started, sweeps(target, group, 1)[0])
            after = open(log).read()[len(before):]
            print("%-42s counter sweep median %.2f s (%s)%s; log lines: %d 'do not answer', "
                  "%d 'answers again'"
                  % (name, statistics.median(t), " ".join("%.2f" % x for x in t), back,
                     len(SILENT.findall(during)), after.count(AGAIN)))
            if base is None:
                base = statistics.median(t)
            else:
                print("%-42s median / every node answering's: %.2f (limit 1.2); slowest / that "
                      "median: %.2f" % ("", statistics.median(t) / base, max(t) / base))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
