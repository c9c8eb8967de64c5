#!/usr/bin/env python3
"""Benchmark: ibsnmpd measured at AI-cluster sizes, on fabricsim's three-level
fat trees of radix 64 (NDR), each figure from a run at that size.

For each size (hosts; default 2,000, 10,000, 20,000, 30,000 and 40,000), one
bed (scripts/simfabric up --big HOSTS --direct) with ibsnmpd in direct mode on
host-1, node contexts off (nodeContextTypes none), sweeps every 5 s:
- discovery: ibsnmpd's own "subnet discovered ... in S s"; peer: ibnetdiscover
  on the same fabric, same run;
- one counter sweep (pmCounters) and one PortInfo sweep (fabricPorts):
  ibsnmpdCacheLastDuration, median of 3; peer: bench-pipelined-pma sending the
  sweep's PortCounters and PortCountersExtended to the same ports (256 in
  flight), median of 3;
- resident memory after those sweeps, per port;
- a bulk walk (snmpbulkwalk -Cr50) of the 64-bit counters table (direct);
- node contexts: two more ibsnmpd, snmpd's AgentX subagents, one with
  nodeContextTypes switch (this bench's and README's choice for big fabrics),
  one without: the time to register them; the difference of their heap in
  use (-Dibsnmpd:memory), per context;
- nothing waits: one more ibsnmpd in each mode, sweeping every 5 s and
  rediscovering every 10 s, polled by a manager (a GETNEXT every 50 ms):
  median, 95th percentile and longest answer.

Usage: bench/scale.py [--hosts 2000,10000,20000,30000,40000] [--contexts TYPES]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

from benchlib import (PM_TABLE, STATS, TOP, TestBed, bare_pipelined, env, get_latencies,
                      snmpget, stop_on_sigterm, walk)

GROUP_NAME, GROUP_REFRESHES, GROUP_DURATION = STATS + ".6.1.2", STATS + ".6.1.5", STATS + ".6.1.7"
BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))


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
    deadline = time.monotonic() + 300 * count
    while len(out) < count and time.monotonic() < deadline:
        time.sleep(0.2)
        n = snmpget(target, "%s.%d" % (GROUP_REFRESHES, index))
        if n > seen:
            seen = n
            out.append(snmpget(target, "%s.%d" % (GROUP_DURATION, index)) / 1000.0)
    return out


def log_match(path, pattern, seconds):
    for _ in range(seconds * 2):
        try:
            with open(path) as f:
                m = re.search(pattern, f.read())
            if m:
                return m
        except OSError:
            pass
        time.sleep(0.5)
    sys.exit("%s: no '%s' after %d s" % (path, pattern, seconds))


def subagent(bed, name, conf, args):
    """Another ibsnmpd on the bed's node, snmpd's AgentX subagent (or, with
    an agentaddress line, in direct mode); its log's path."""
    path = os.path.join(bed.dir, name + ".conf")
    with open(path, "w") as f:
        direct = any(line.startswith("agentaddress") for line in conf)
        f.write("%smadTimeout 500\ndcbxEnable no\nfabricStateFile %s/%s-links.state\n%s\n"
                % ("" if direct else "agentxPingInterval 2\n", bed.dir, name, "\n".join(conf)))
    log = os.path.join(bed.dir, name + ".log")
    bed.spawn(name, os.path.join(BUILD, "ibsnmpd"), "-f", "-Lf", log, "-c", path,
              "-x", "unix:%s/agentx.sock" % bed.dir, *args, node=bed.node)
    return log


def settled_heap(path, settle=10):
    """The heap in use (octets) in the last -Dibsnmpd:memory line of a log,
    `settle` s after its counter and PortInfo sweeps were published."""
    for _ in range(1800):
        with open(path) as f:
            text = f.read()
        if "after PM counters sweep" in text and "after fabric ports sweep" in text:
            break
        time.sleep(1)
    time.sleep(settle)
    with open(path) as f:
        found = re.findall(r"(\d+) octets in use after", f.read())
    if not found:
        sys.exit("%s: no heap figure (-Dibsnmpd:memory)" % path)
    return int(found[-1])


def free_udp_port():
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def timed(argv):
    started = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env())
    return time.perf_counter() - started, out


def measure(hosts, contexts):
    conf = ["cacheLifetime pmCounters 5", "cacheLifetime fabricPorts 5",
            "nodeContextTypes none", "dcbxEnable no"]
    with TestBed(None, None, conf=conf, direct=True, big={"hosts": hosts},
                 binary=os.path.join(BUILD, "ibsnmpd")) as bed:
        direct = bed.env["SNMP_DIRECT_TARGET"]
        log = os.path.join(bed.dir, "ibsnmpd.log")
        m = log_match(log, r"subnet discovered: (\d+) nodes, (\d+) ports in ([\d.]+) s", 900)
        nodes, ports, discovery = int(m.group(1)), int(m.group(2)), float(m.group(3))
        ibnd, out = timed(bed.command("ibnetdiscover"))
        if out.returncode:
            sys.exit("ibnetdiscover: " + out.stderr[-500:])
        pm = sweep_durations(direct, group_index(direct, "pmCounters"), 3)
        fabric = sweep_durations(direct, group_index(direct, "fabricPorts"), 3)
        rss = rss_kib(bed.pid)
        runs = bare_pipelined(bed, direct)
        bare, bare_ports = statistics.median(t for t, _, _ in runs), runs[0][2] // 2
        if bare_ports != ports or any(answered < sent for _, answered, sent in runs):
            sys.exit("the bare client did not get the sweep's answers (%d ports): %s"
                     % (ports, runs))
        walks = [walk(direct, PM_TABLE) for _ in range(3)]
        varbinds, walk_s = walks[0][0], statistics.median(t for _, t in walks)
        bed.stop("ibsnmpd")  # what follows measures other instances
        # node contexts: two more ibsnmpd, snmpd's subagents, alike but for
        # nodeContextTypes, each sweeping once; the difference of their heap
        # in use (mallinfo2, -Dibsnmpd:memory) once settled is the contexts'
        heap = {}
        for name, types in (("reference", "none"), ("contexts", contexts)):
            sub_log = subagent(bed, name, ["nodeContextTypes " + types,
                                           "cacheLifetime pmCounters 3600",
                                           "cacheLifetime fabricPorts 3600"], ["-Dibsnmpd:memory"])
            if types == "none":
                log_match(sub_log, r"subnet discovered", 900)
            else:
                m = log_match(sub_log, r"node contexts: (\d+) registered in ([\d.]+) s", 3600)
                n_ctx, ctx_s = int(m.group(1)), float(m.group(2))
        for name in ("reference", "contexts"):
            heap[name] = settled_heap(os.path.join(bed.dir, name + ".log"))
            bed.stop(name)
        ctx_heap = heap["contexts"] - heap["reference"]
        # nothing waits: a manager polling (GETNEXT of the 64-bit table, every
        # 50 ms) while the agent sweeps every 5 s and rediscovers every 10 s,
        # in direct mode and through snmpd
        latency = {}
        port = free_udp_port()
        busy = ["nodeContextTypes none", "cacheLifetime pmCounters 5",
                "cacheLifetime fabricPorts 5", "pmDiscoveryInterval 10"]
        for mode, target, extra in (
                ("direct", "udp:127.0.0.1:%d" % port,
                 ["agentaddress udp:127.0.0.1:%d" % port, "rocommunity public 127.0.0.1"]),
                ("agentx", bed.env["SNMP_TARGET"], [])):
            sub_log = subagent(bed, "busy-" + mode, busy + extra, [])
            m = log_match(sub_log, r"subnet discovered: .* in ([\d.]+) s", 900)
            seconds = max(30.0, 2.5 * float(m.group(1)) + 10)
            lat, lost = get_latencies(target, PM_TABLE, seconds)
            with open(sub_log) as f:
                rediscoveries = f.read().count("subnet discovered") - 1
            latency[mode] = (statistics.median(lat), sorted(lat)[int(0.95 * (len(lat) - 1))],
                             max(lat), len(lat), lost, rediscoveries)
            bed.stop("busy-" + mode)
    return {"hosts": hosts, "nodes": nodes, "ports": ports, "discovery_s": discovery,
            "ibnetdiscover_s": ibnd, "pm_sweep_s": statistics.median(pm),
            "bare_s": bare, "bare_ports": bare_ports,
            "fabric_sweep_s": statistics.median(fabric), "rss_kib": rss,
            "walk_s": walk_s, "walk_varbinds": varbinds, "contexts": n_ctx,
            "contexts_s": ctx_s, "contexts_heap": ctx_heap, "latency": latency}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="2000,10000,20000,30000,40000")
    ap.add_argument("--contexts", default="switch",
                    help="nodeContextTypes of the second ibsnmpd (default: switch)")
    args = ap.parse_args()
    stop_on_sigterm()
    for hosts in (int(h) for h in args.hosts.split(",")):
        r = measure(hosts, args.contexts)
        print("%6d hosts: %5d nodes %6d ports" % (r["hosts"], r["nodes"], r["ports"]))
        print("  discovery %.2f s; ibnetdiscover %.2f s; ratio %.2f (aim <= 2)"
              % (r["discovery_s"], r["ibnetdiscover_s"], r["discovery_s"] / r["ibnetdiscover_s"]))
        print("  counter sweep %.3f s; bare pipelined client %.3f s (%d ports); ratio %.2f "
              "(aim <= 1.5)" % (r["pm_sweep_s"], r["bare_s"], r["bare_ports"],
                                r["pm_sweep_s"] / r["bare_s"]))
        print("  PortInfo sweep %.3f s" % r["fabric_sweep_s"])
        print("  resident memory without node contexts %.1f MiB: %.2f KiB per port (aim <= 1)"
              % (r["rss_kib"] / 1024.0, r["rss_kib"] / r["ports"]))
        print("  bulk walk of the 64-bit table (direct): %d varbinds in %.2f s"
              % (r["walk_varbinds"], r["walk_s"]))
        print("  node contexts (%s): %d registered in %.2f s (AgentX); heap %.1f MiB more than "
              "without: %.1f KiB per context (aim <= 8)"
              % (args.contexts, r["contexts"], r["contexts_s"], r["contexts_heap"] / 2.0 ** 20,
                 r["contexts_heap"] / 1024.0 / max(r["contexts"], 1)))
        for mode, (med, p95, top, n, lost, redisc) in sorted(r["latency"].items()):
            print("  GETNEXT while sweeping and rediscovering (%s): median %.1f ms, 95th %.1f ms, "
                  "max %.1f ms; %d answered, %d unanswered, %d rediscoveries (aim: median < 50)"
                  % (mode, med * 1000, p95 * 1000, top * 1000, n, lost, redisc))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
