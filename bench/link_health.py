#!/usr/bin/env python3
"""Benchmark: the counter sweep with PortExtendedSpeedsCounters (the link
health's FEC counters), on fabricsim's NDR fat tree, against its peers in
the same run:
- ibsnmpd's counter sweep (pmCounters: PortCounters, PortCountersExtended and
  PortExtendedSpeedsCounters of every port), ibsnmpdCacheLastDuration, and
  the MADs it sent (ibsnmpdMadsSent across the sweep: nothing else sweeps);
- bench-pipelined-pma, a bare libibumad client, with the same three
  attributes of the same ports ("fec") and with the first two only ("ext"),
  one run of each a second after each sweep: what the MADs take, and what
  the third attribute adds;
- a loop of `perfquery -T LID PORT` processes (what exporters built on
  infiniband-diags run) over the first N ports, extrapolated to all;
then the medians and their ratios.

Usage: bench/link_health.py [--hosts 2000] [--radix 64] [--sweeps 5]
                            [--perfquery-ports 50] [--lifetime 30]
"""
import argparse
import os
import statistics
import subprocess
import time

from benchlib import (SMA_GROUPS, TOP, TestBed, bare_pipelined, env, group_index, log_match,
                      next_sweep, sweep_ports, walk)

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))

FEC_LAYOUT = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.3.1.1"  # ibsnmpdPmFecLayout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--sweeps", type=int, default=5)
    ap.add_argument("--perfquery-ports", type=int, default=50)
    ap.add_argument("--lifetime", type=int, default=30,
                    help="seconds between sweeps: the bare client's two runs fit between")
    args = ap.parse_args()

    conf = ["nodeContextTypes none", "dcbxEnable no", "cacheLifetime pmCounters %d" % args.lifetime,
            "cacheLifetime fabricPorts 3600"]
    conf += ["cacheLifetime %s 3600" % g for g in SMA_GROUPS]
    with TestBed(None, None, conf=conf, big={"hosts": args.hosts, "radix": args.radix},
                 binary=os.path.join(BUILD, "ibsnmpd")) as bed:
        target = bed.target
        m = log_match(bed.path("ibsnmpd.log"),
                     r"subnet discovered: (\d+) nodes, (\d+) ports in ([\d.]+) s", 900)
        nodes, ports = int(m.group(1)), int(m.group(2))
        pm = group_index(target, "pmCounters")
        next_sweep(target, pm)  # the one after discovery asks every ClassPortInfo too
        pairs = sweep_ports(target)
        fec_rows, _ = walk(target, FEC_LAYOUT)
        sweeps, mads, bare_fec, bare_ext = [], [], [], []
        for _ in range(args.sweeps):
            took, sent = next_sweep(target, pm)
            sweeps.append(took)
            mads.append(sent)
            time.sleep(1)  # the sweep's publication is done; the next is --lifetime away
            t, answered, asked = bare_pipelined(bed, None, runs=1, pairs=pairs, attrs="fec")[0]
            if answered < asked:
                raise SystemExit("bare client (fec): %d of %d answered" % (answered, asked))
            bare_fec.append(t)
            bare_ext.append(bare_pipelined(bed, None, runs=1, pairs=pairs, attrs="ext")[0][0])
        # perfquery -T, one process per port
        started = time.perf_counter()
        for line in pairs[:args.perfquery_ports]:
            lid, port = line.split()
            subprocess.run(bed.command("perfquery", "-T", lid, port), capture_output=True,
                           env=env())
        pq = (time.perf_counter() - started) / max(1, min(len(pairs), args.perfquery_ports))

    sweep, fec, ext = (statistics.median(x) for x in (sweeps, bare_fec, bare_ext))
    per_sweep = statistics.median(mads)
    print("fabric: fabricsim fat tree, %d hosts, radix %d, NDR: %d nodes, %d ports; "
          "rows of ibsnmpdPmFecTable (ports read in the RS-FEC layout): %d"
          % (args.hosts, args.radix, nodes, ports, fec_rows))
    print("MADs per counter sweep: median %d (%.2f per port; %s)"
          % (per_sweep, per_sweep / ports, ", ".join(str(x) for x in mads)))
    print("ibsnmpd counter sweep with PortExtendedSpeedsCounters: median %.3f s (%s)"
          % (sweep, ", ".join("%.3f" % x for x in sweeps)))
    print("bare pipelined client, the same 3 attributes: median %.3f s (%s)"
          % (fec, ", ".join("%.3f" % x for x in bare_fec)))
    print("bare pipelined client, PortCounters and PortCountersExtended only: median %.3f s (%s)"
          % (ext, ", ".join("%.3f" % x for x in bare_ext)))
    print("perfquery -T loop: %.1f ms a port; extrapolated to %d ports: %.1f s"
          % (pq * 1000, ports, pq * ports))
    print("ratio ibsnmpd sweep / bare client (same MADs): %.2f" % (sweep / fec))
    print("ratio bare client 3 attributes / 2 attributes: %.2f (what the FEC counters add)"
          % (fec / ext))
    print("ratio ibsnmpd sweep / perfquery -T loop (extrapolated): %.4f" % (sweep / (pq * ports)))


if __name__ == "__main__":
    main()
