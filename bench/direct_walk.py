#!/usr/bin/env python3
"""Benchmark: a bulk walk of the 64-bit counters table of every port of the
subnet (IBSNMPD-MIB::ibsnmpdPmPortTable), ibsnmpd in direct mode (its own
agent, agentaddress) against the same table through snmpd (ibsnmpd as
AgentX subagent) and against a native snmpd table, in one run.

tests/topologies/fattree-612.net (1,872 ports, about 43,000 varbinds):
scripts/simfabric up --direct starts ibsnmpd as its own agent on h1-1; a
second ibsnmpd, attached to h1-2 as snmpd's subagent (the default mode),
serves the same table through snmpd; snmpd's own nsExtendOutLine table
(an `extend` of 10,000 lines) is the native reference. Counter sweeps are
set to an hour so that the walks read a still cache. snmpbulkwalk -Cr50,
medians of --runs walks each. Prints varbinds per second and the ratios.

Usage: bench/direct_walk.py [--runs 5]
"""
import argparse
import os
import statistics
import sys
import time

from benchlib import TestBed, spawn_subagent, stop_on_sigterm, walk

TOPOLOGY = "fattree-612.net"
PM_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1"
EXTEND_LINES = ".1.3.6.1.4.1.8072.1.3.2.4.1.2"  # nsExtendOutLine
NATIVE_ROWS = 10000


def rate(target, oid, runs):
    res = [walk(target, oid) for _ in range(runs)]
    return res[0][0], statistics.median(n / t for n, t in res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    stop_on_sigterm()
    rows_file = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                             "ibsnmpd-bench-rows.%d" % os.getpid())
    with open(rows_file, "w") as f:
        f.writelines("r%d\n" % i for i in range(NATIVE_ROWS))
    slow = ["cacheLifetime pmCounters 3600", "cacheLifetime fabricPorts 3600"]
    with TestBed(TOPOLOGY, "h1-1", conf=slow, direct=True,
                 snmpd_conf=["extend benchrows /bin/cat %s" % rows_file]) as bed:
        direct = bed.env["SNMP_DIRECT_TARGET"]
        spawn_subagent(bed, "h1-2", slow)
        for target in (direct, bed.target):
            for _ in range(240):
                if walk(target, PM_TABLE)[0] > 40000:
                    break
                time.sleep(0.5)
            else:
                sys.exit("the table was not filled at %s" % target)
        walk(bed.target, EXTEND_LINES)  # warm-up: runs the command
        n_direct, r_direct = rate(direct, PM_TABLE, args.runs)
        n_agentx, r_agentx = rate(bed.target, PM_TABLE, args.runs)
        n_native, r_native = rate(bed.target, EXTEND_LINES, args.runs)
        print("%s: ibsnmpdPmPortTable, snmpbulkwalk -Cr50, median of %d walks"
              % (TOPOLOGY, args.runs))
        print("  direct mode (ibsnmpd's own agent):   %6d varbinds, %8.0f varbinds/s"
              % (n_direct, r_direct))
        print("  through snmpd (AgentX subagent):     %6d varbinds, %8.0f varbinds/s"
              % (n_agentx, r_agentx))
        print("  snmpd's native nsExtendOutLine:      %6d varbinds, %8.0f varbinds/s"
              % (n_native, r_native))
        print("  direct / native: %.2f (goal >= 0.8); AgentX / native: %.2f; direct / AgentX: %.1f"
              % (r_direct / r_native, r_agentx / r_native, r_direct / r_agentx))
    os.unlink(rows_file)


if __name__ == "__main__":
    main()
