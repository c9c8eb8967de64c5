#!/usr/bin/env python3
"""Benchmark: how ibsnmpd's figures grow with the fabric, up to the largest
fat tree ibsim holds, and what that predicts for 50,000 ports.

For each fabric (tests/topologies: fattree-612, fattree-1122 and
fattree3-2030, the last 2,030 nodes of ibsim's 2,048), one test bed with
ibsnmpd in direct mode (its own agent) on the first HCA and, beside it, a
second ibsnmpd as snmpd's AgentX subagent (the default mode) for the walk
through snmpd; both with their defaults but for 5 s sweeps. Measured:
- discovery: ibsnmpd's own "subnet discovered ... in S s" (libibnetdisc in
  the helper);
- one counter sweep (pmCounters) and one PortInfo sweep (fabricPorts):
  ibsnmpdCacheLastDuration, median of 3 sweeps each;
- resident memory of the direct-mode ibsnmpd after those sweeps (node
  contexts included);
- a bulk walk (snmpbulkwalk -Cr50) of the 64-bit counters table in both
  modes, median of 3.
Then a least-squares line per figure against the number of ports, and its
value at 50,000 ports.

Usage: bench/scale.py [--sizes fattree-612.net,fattree-1122.net,fattree3-2030.net]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

from benchlib import STATS, TestBed, env, snmpget, spawn_subagent, stop_on_sigterm, walk

PM_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1"
GROUP_NAME, GROUP_REFRESHES, GROUP_DURATION = STATS + ".6.1.2", STATS + ".6.1.5", STATS + ".6.1.7"
FABRICS = {"fattree-612.net": "h1-1", "fattree-1122.net": "h1-1",
           "fattree3-2030.net": "h1-1-1"}
PREDICT_PORTS = 50000


def group_index(target, name):
    out = subprocess.run(["snmpwalk", "-v2c", "-c", "public", "-On", "-Oq", target, GROUP_NAME],
                         capture_output=True, text=True, env=env()).stdout
    for line in out.splitlines():
        oid, _, value = line.partition(" ")
        if value.strip('"') == name:
            return int(oid.rsplit(".", 1)[1])
    sys.exit("no cache group %s at %s" % (name, target))


def sweep_durations(target, index, count):
    """The next `count` refreshes' durations (s)."""
    seen, out = snmpget(target, "%s.%d" % (GROUP_REFRESHES, index)), []
    deadline = time.monotonic() + 60 * count
    while len(out) < count and time.monotonic() < deadline:
        time.sleep(0.2)
        n = snmpget(target, "%s.%d" % (GROUP_REFRESHES, index))
        if n > seen:
            seen = n
            out.append(snmpget(target, "%s.%d" % (GROUP_DURATION, index)) / 1000.0)
    return out


def wait_for_table(target, rows):
    for _ in range(600):
        if walk(target, PM_TABLE + ".1.4")[0] >= rows:
            return
        time.sleep(0.5)
    sys.exit("the 64-bit table was not filled at %s" % target)


def measure(topology):
    fast = ["cacheLifetime pmCounters 5", "cacheLifetime fabricPorts 5"]
    with TestBed(topology, FABRICS[topology], conf=fast, direct=True) as bed:
        direct = bed.env["SNMP_DIRECT_TARGET"]
        log = open(os.path.join(bed.dir, "ibsnmpd.log")).read()
        for _ in range(600):
            m = re.search(r"subnet discovered: (\d+) nodes, (\d+) ports in ([\d.]+) s", log)
            if m:
                break
            time.sleep(0.5)
            log = open(os.path.join(bed.dir, "ibsnmpd.log")).read()
        else:
            sys.exit("%s: no discovery in the log" % topology)
        nodes, ports, discovery = int(m.group(1)), int(m.group(2)), float(m.group(3))
        pm = sweep_durations(direct, group_index(direct, "pmCounters"), 3)
        fabric = sweep_durations(direct, group_index(direct, "fabricPorts"), 3)
        rss = bed.rss_kib()
        spawn_subagent(bed, FABRICS[topology], ["cacheLifetime pmCounters 3600",
                                                "cacheLifetime fabricPorts 3600"])
        rows = walk(direct, PM_TABLE + ".1.4")[0]
        wait_for_table(bed.target, rows)
        walks = {}
        for name, target in (("direct", direct), ("agentx", bed.target)):
            res = [walk(target, PM_TABLE) for _ in range(3)]
            walks[name] = (res[0][0], statistics.median(t for _, t in res))
    return {"topology": topology, "nodes": nodes, "ports": ports, "table_rows": rows,
            "discovery_s": discovery, "pm_sweep_s": statistics.median(pm),
            "fabric_sweep_s": statistics.median(fabric), "rss_mib": rss / 1024.0,
            "walk_direct_s": walks["direct"][1], "walk_agentx_s": walks["agentx"][1],
            "walk_varbinds": walks["direct"][0]}


def fit(xs, ys):
    """Least squares y = a + b x."""
    mx, my = statistics.mean(xs), statistics.mean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    return my - b * mx, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default=",".join(FABRICS))
    args = ap.parse_args()
    stop_on_sigterm()
    results = []
    for topology in args.sizes.split(","):
        r = measure(topology)
        results.append(r)
        print("%-18s %4d nodes %5d ports (%5d rows): discovery %.2f s, counter sweep %.3f s, "
              "PortInfo sweep %.3f s, RSS %.1f MiB, walk of %d varbinds: direct %.2f s, "
              "AgentX %.2f s" % (topology, r["nodes"], r["ports"], r["table_rows"],
                                 r["discovery_s"], r["pm_sweep_s"], r["fabric_sweep_s"],
                                 r["rss_mib"], r["walk_varbinds"], r["walk_direct_s"],
                                 r["walk_agentx_s"]), flush=True)
    if len(results) < 2:
        return
    xs = [r["table_rows"] for r in results]
    print("per 1,000 ports (least squares over %d sizes), and at %d ports:"
          % (len(results), PREDICT_PORTS))
    for key, unit in (("discovery_s", "s"), ("pm_sweep_s", "s"), ("fabric_sweep_s", "s"),
                      ("rss_mib", "MiB"), ("walk_direct_s", "s"), ("walk_agentx_s", "s")):
        a, b = fit(xs, [r[key] for r in results])
        print("  %-15s %+8.3f %s per 1,000 ports (intercept %.3f); at %d ports: %.2f %s"
              % (key, b * 1000, unit, a, PREDICT_PORTS, a + b * PREDICT_PORTS, unit))


if __name__ == "__main__":
    main()
