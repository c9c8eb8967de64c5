#!/usr/bin/env python3
"""Benchmark: one sweep of every port's counters, ibsnmpd against its peers.

All in one run on tests/topologies/fattree-612.net (612 nodes, 1,872 ports;
--topology FILE --node NODE for another, e.g. fattree3-2030.net h1-1-1):
- ibsnmpd's sweep time (ibsnmpdCacheLastDuration of the pmCounters group,
  from the first MAD to the last answer), for several sweeps;
- `ibqueryerrors` over all ports, timed as a process, same fabric;
- a loop of `perfquery LID PORT` processes over the first N ports;
- bench-pipelined-pma (bench/pipelined_pma.c): a bare libibumad client
  sending the sweep's MADs (PortCounters and PortCountersExtended of every
  port of the table), the same number in flight, attached like a diag
  tool: what the MADs themselves take; run once right after each of
  ibsnmpd's sweeps (turn by turn: the simulator's pace drifts between runs),
  the ratio the median of the turns' ratios;
- then an snmpbulkwalk of ibsnmpdPmPortTable through snmpd: varbinds/s,
  MADs sent during the walk, ibsnmpd's resident memory.
Prints the ratios; the aim is a sweep in at most half of ibqueryerrors' time.

Usage: bench/pm_sweep.py [--sweeps 5] [--perfquery-ports 100] [--outstanding 256]
                         [--per-destination 4] [--topology fattree-612.net --node h1-1]
"""
import argparse
import os
import re
import statistics
import subprocess
import time

from benchlib import (MADS_SENT, PM_TABLE, SMA_GROUPS, STATS, TestBed, bare_pipelined,
                      env, snmpget, sweep_ports)

TOPOLOGY = "fattree-612.net"
PM_GROUP_INDEX = 14  # ibsnmpdCacheIndex of pmCounters (src/pm/pm_area.c)


def timed(cmd):
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env())
    return time.perf_counter() - started, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", type=int, default=5)
    ap.add_argument("--perfquery-ports", type=int, default=100)
    ap.add_argument("--outstanding", type=int, default=256)
    ap.add_argument("--per-destination", type=int, default=4)
    ap.add_argument("--topology", default=TOPOLOGY)
    ap.add_argument("--node", default="h1-1")
    args = ap.parse_args()

    conf = ["madMaxOutstanding %d" % args.outstanding,
            "madMaxPerDestination %d" % args.per_destination, "cacheLifetime pmCounters 2",
            "nodeContextTypes none"]
    conf += ["cacheLifetime %s 3600" % g for g in SMA_GROUPS + ("fabricPorts",)]
    with TestBed(args.topology, args.node, conf=conf) as bed:
        target = bed.target
        duration = "%s.6.1.7.%d" % (STATS, PM_GROUP_INDEX)
        refreshes = "%s.6.1.5.%d" % (STATS, PM_GROUP_INDEX)
        # ibsnmpd: wait for the sweeps that follow discovery, record each,
        # and right after it (the next comes 2 s after it began) the bare
        # client once
        sweeps, bare = [], []
        pairs = None
        seen = snmpget(target, refreshes)
        while len(sweeps) < args.sweeps:
            time.sleep(0.05)
            n = snmpget(target, refreshes)
            if n > seen:
                seen = n
                sweeps.append(snmpget(target, duration) / 1000.0)
                if pairs is None:
                    pairs = sweep_ports(target)
                bare += bare_pipelined(bed, target, args.outstanding, runs=1, pairs=pairs)
                seen = snmpget(target, refreshes)  # one that overlapped it is not counted
        walk_rows = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", target,
                                    PM_TABLE + ".1.9"], capture_output=True, text=True,
                                   env=env()).stdout.count("\n")

        # ibqueryerrors over all ports, same fabric, same run
        iqe = []
        for _ in range(3):
            t, out = timed(bed.command("ibqueryerrors"))
            iqe.append(t)
        m = re.search(r"(\d+) ports checked", out.stdout + out.stderr)
        iqe_ports = int(m.group(1)) if m else -1

        # perfquery, one process per port
        lids = []
        disc = subprocess.run(bed.command("ibnetdiscover", "-p"), capture_output=True, text=True,
                              env=env()).stdout
        for line in disc.splitlines():
            f = line.split()
            if len(f) > 3 and f[0] in ("SW", "CA"):
                lids.append((f[1], f[2]))
            if len(lids) >= args.perfquery_ports:
                break
        started = time.perf_counter()
        for lid, port in lids:
            subprocess.run(bed.command("perfquery", lid, port), capture_output=True, env=env())
        pq = time.perf_counter() - started

        # the 64-bit table through snmpd, cached: stop the 2 s sweeps first
        # (SIGHUP re-reads the configuration)
        conf_path = os.path.join(bed.dir, "ibsnmpd.conf")
        with open(conf_path) as f:
            text = f.read().replace("cacheLifetime pmCounters 2", "cacheLifetime pmCounters 3600")
        with open(conf_path, "w") as f:
            f.write(text)
        os.kill(bed.pid, 1)
        time.sleep(1)
        before = snmpget(target, MADS_SENT)
        t, out = timed(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr50", target,
                        PM_TABLE])
        after = snmpget(target, MADS_SENT)
        varbinds = out.stdout.count("\n")
        rss = bed.rss_kib()

    sweep = statistics.median(sweeps)
    iq = statistics.median(iqe)
    print("fabric: %s; ports in ibsnmpd's table: %d; ibqueryerrors checked %d ports"
          % (args.topology, walk_rows, iqe_ports))
    print("ibsnmpd sweep (PortCounters/Extended of every port, %d MADs in flight, %d per "
          "LID): median %.3f s of %d sweeps (%s)" % (args.outstanding, args.per_destination,
                                                     sweep, len(sweeps),
                                               ", ".join("%.3f" % s for s in sweeps)))
    print("ibqueryerrors, all ports: median %.3f s of 3 runs" % iq)
    print("perfquery loop: %d ports in %.3f s = %.1f ms/port; extrapolated to %d ports: %.1f s"
          % (len(lids), pq, pq / max(len(lids), 1) * 1000, walk_rows,
             pq / max(len(lids), 1) * walk_rows))
    bare_t = statistics.median(b[0] for b in bare)
    turns = [s / b[0] for s, b in zip(sweeps, bare)]
    print("bare pipelined client (PortCounters and PortCountersExtended, %d in flight), right "
          "after each sweep: %d of %d answered, median %.3f s of %d runs (%s)"
          % (args.outstanding, bare[0][1], bare[0][2], bare_t, len(bare),
             ", ".join("%.3f" % b[0] for b in bare)))
    print("ratio ibsnmpd sweep / ibqueryerrors: %.2f (aim <= 0.5)" % (sweep / iq))
    print("ratio ibsnmpd sweep / bare pipelined client, turn by turn: median %.2f (%s; "
          "aim <= 1.2)" % (statistics.median(turns), ", ".join("%.2f" % r for r in turns)))
    print("ratio ibsnmpd sweep / perfquery loop (extrapolated): %.3f"
          % (sweep / (pq / max(len(lids), 1) * walk_rows)))
    print("snmpbulkwalk of ibsnmpdPmPortTable: %d varbinds in %.3f s = %.0f varbinds/s; "
          "MADs sent during the cached walk: %d (aim 0); ibsnmpd RSS %d KiB"
          % (varbinds, t, varbinds / t, after - before, rss))


if __name__ == "__main__":
    main()
