#!/usr/bin/env python3
"""Benchmark: bulk-walk the whole SMA-MIB tree of a switch through snmpd.

On a generated fat tree whose switches route over 1,000 LIDs
(tests/topologies/fattree-1122.net), ibsnmpd is attached to a leaf switch
with long cache lifetimes. In the same run, snmpd's own speed on a native
table (nsExtendOutLine of an `extend` with as many lines as the SMA walk has
varbinds, capped at 10,000 because snmpd 5.9.3 crashes on much larger extend
outputs) is measured as the ratio to beat.

Prints: varbinds, seconds and varbinds per second of both walks (median of
REPEAT runs), MADs ibsnmpd issued during its walks (ibsnmpdMadsSent before
and after), and the ratio ibsnmpd / snmpd native. Aim: ratio >= 0.5, 0 MADs.

Usage: bench/sma_walk.py [--repeat N] [--node leaf1] [--max-repetitions 50]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

from benchlib import MADS_SENT, SMA_GROUPS, TestBed, env, snmpget as get

TOPOLOGY = "fattree-1122.net"
SMA = ".1.3.6.1.3.117.3"
EXTEND_LINES = ".1.3.6.1.4.1.8072.1.3.2.4.1.2"  # nsExtendOutLine
NATIVE_CAP = 10000
LONG = ["cacheLifetime %s 3600" % g for g in SMA_GROUPS + ("pmCounters",)]


def walk(target, oid, reps):
    started = time.perf_counter()
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr%d" % reps,
                          "-t", "10", target, oid], capture_output=True, text=True, env=env())
    took = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit("walk failed: " + out.stderr)
    return out.stdout.count("\n"), took




def getnext_latency(target, oid, count):
    """Median seconds of one snmpgetnext (process start included), count runs."""
    times = []
    for _ in range(count):
        started = time.perf_counter()
        subprocess.run(["snmpgetnext", "-v2c", "-c", "public", target, oid],
                       capture_output=True, env=env())
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--node", default="leaf1")
    ap.add_argument("--max-repetitions", type=int, default=50)
    args = ap.parse_args()

    rows_file = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ibsnmpd-bench-rows.%d" % os.getpid())
    # the native table's size is fixed before snmpd starts: first a count
    with open(rows_file, "w") as f:
        f.write("")
    with TestBed(TOPOLOGY, args.node, conf=LONG,
                 snmpd_conf=["extend benchrows /bin/cat %s" % rows_file]) as bed:
        target = bed.target
        lft_top = get(target, SMA + ".1.2.4.0")
        n, _ = walk(target, SMA, args.max_repetitions)  # warm-up and count
        with open(rows_file, "w") as f:
            for i in range(min(n, NATIVE_CAP)):
                f.write("r%d\n" % i)  # short: snmpd truncates long extend output
        walk(target, EXTEND_LINES, args.max_repetitions)  # warm-up (runs the command)

        # GETNEXT cost at the first and at the last row of the biggest table
        first_row = SMA + ".1.7.1.1.4"
        last = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr50", target,
                               SMA + ".1.7.1.1.4"], capture_output=True, text=True,
                              env=env()).stdout.splitlines()[-2].split(" = ")[0]
        getnext_first = getnext_latency(target, first_row, args.repeat * 40)
        getnext_last = getnext_latency(target, last, args.repeat * 40)

        mads_before = get(target, MADS_SENT)
        ours = [walk(target, SMA, args.max_repetitions) for _ in range(args.repeat)]
        mads_after = get(target, MADS_SENT)
        native = [walk(target, EXTEND_LINES, args.max_repetitions) for _ in range(args.repeat)]
        rss_kib = bed.rss_kib()
    os.unlink(rows_file)

    ours_n = ours[0][0]
    ours_t = statistics.median(t for _, t in ours)
    nat_n = native[0][0]
    nat_t = statistics.median(t for _, t in native)
    ours_rate = ours_n / ours_t
    nat_rate = nat_n / nat_t
    print("topology: %s, ibsnmpd on %s (LinearFDBTop %d)" % (TOPOLOGY,
                                                           args.node, lft_top))
    print("ibsnmpd SMA-MIB walk: %d varbinds in %.3f s (median of %d) = %.0f varbinds/s"
          % (ours_n, ours_t, args.repeat, ours_rate))
    print("snmpd native nsExtendOutLine walk: %d varbinds in %.3f s = %.0f varbinds/s"
          % (nat_n, nat_t, nat_rate))
    print("ratio ibsnmpd / snmpd native: %.2f (aim >= 0.5)" % (ours_rate / nat_rate))
    print("MADs issued during %d cached walks: %d (aim 0)" % (args.repeat,
                                                             mads_after - mads_before))
    print("ibsnmpd resident memory: %d KiB" % rss_kib)
    print("snmpgetnext at row 1 of ibSmaSL2VLMapTable: %.2f ms; at its last row: %.2f ms (median)"
          % (getnext_first * 1000, getnext_last * 1000))
    print("note: snmpd (net-snmp 5.9) forwards each GETBULK repetition to a subagent as its\n"
          "own AgentX GetNext, so a walk through any subagent costs one socket round trip\n"
          "per varbind; the native table is answered inside snmpd.")


if __name__ == "__main__":
    main()
