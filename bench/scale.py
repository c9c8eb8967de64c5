#!/usr/bin/env python3
"""Benchmark: ibsnmpd measured at AI-cluster sizes, on fabricsim's three-level
fat trees of radix 64 (NDR), each figure from a run at that size; or the same
measures on one of ibsim's fabrics (--ibsim TOPOLOGY, e.g. the largest it
holds, fattree3-2030.net, with opensm).

For each size (hosts; default 2,000, 10,000, 20,000, 30,000 and 40,000):
- in each mode, one ibsnmpd on host-1 (direct: the bed's own, its own agent;
  agentx: snmpd's subagent), node contexts off (nodeContextTypes none): its
  discovery ("subnet discovered ... in S s"); its resident memory sampled
  every 0.25 s while both sweeps run every 5 s (least, median, most) and its
  heap in use (-Dibsnmpd:memory, least and most); the counter sweep
  (pmCounters) alone, ibsnmpdCacheLastDuration, five times, each followed
  a second later by a run of bench-pipelined-pma on the idle fabric (the
  sweep's PortCounters and PortCountersExtended to the same ports, and on
  fabricsim's NDR links PortExtendedSpeedsCounters too, 256 in flight): the
  medians; the PortInfo sweep (fabricPorts) alone, median of 3;
- a bulk walk (snmpbulkwalk -Cr50) of the 64-bit counters table (direct);
- ibnetdiscover, on the fabric once the direct one is stopped;
- the resident memory of a daemon that knows no fabric (its discovery helper
  /bin/false): what memory per port is counted above;
- node contexts: two more subagents, one with nodeContextTypes switch (the
  default), one without, each sweeping once: the time to register them, the
  difference of their heap in use once settled, per context;
- nothing waits: one more ibsnmpd in each mode, sweeping every 5 s and
  rediscovering every 10 s (or twice a discovery's time, if longer), polled
  by a manager (a GETNEXT every 50 ms): median, 95th percentile and longest
  answer.

Usage: bench/scale.py [--hosts 2000,10000,20000,30000,40000] [--contexts TYPES]
       bench/scale.py --ibsim fattree3-2030.net [--node h1-1-1]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

from benchlib import (PM_TABLE, TOP, TestBed, bare_pipelined, env, get_latencies, group_index,
                      log_match,
                      stop_on_sigterm, sweep_durations, sweep_ports, walk)

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))


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


class RssSampler:
    """The resident memory of pid, sampled every 0.25 s in a thread while
    the with block runs: (least, median, most) KiB."""

    def __init__(self, pid):
        self.pid, self.samples, self.stop = pid, [], False

    def __enter__(self):
        import threading
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def _run(self):
        while not self.stop:
            try:
                self.samples.append(rss_kib(self.pid))
            except (OSError, AttributeError):
                pass
            time.sleep(0.25)

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()

    def figures(self):
        return min(self.samples), statistics.median(self.samples), max(self.samples)


def heaps(path):
    """The least and most heap in use (octets) after the sweeps began, from
    a log with -Dibsnmpd:memory."""
    with open(path) as f:
        text = f.read()
    text = text[text.find("subnet discovered"):]
    found = [int(x) for x in re.findall(r"(\d+) octets in use after", text)]
    return (min(found), max(found)) if found else (0, 0)


SWEEPING = ["cacheLifetime pmCounters 5", "cacheLifetime fabricPorts 5",
            "nodeContextTypes none", "dcbxEnable no"]


def set_lifetimes(conf, pid, pm, fabric):
    """Rewrites the sweeps' lifetimes in an ibsnmpd's configuration file and
    has it read again (SIGHUP)."""
    import signal
    with open(conf) as f:
        lines = [l for l in f.read().splitlines()
                 if not l.startswith(("cacheLifetime pmCounters", "cacheLifetime fabricPorts"))]
    lines += ["cacheLifetime pmCounters %d" % pm, "cacheLifetime fabricPorts %d" % fabric]
    with open(conf, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.kill(pid, signal.SIGHUP)


def sweeping(bed, target, pid, log, conf, pairs, attrs="ext"):
    """Discovery, sweeps and memory of one ibsnmpd: its resident memory while
    both sweeps run every 5 s (and the counter sweep's time then); then the
    counter sweep alone (the PortInfo sweep's lifetime an hour, its own long
    enough for a bare client's run between two sweeps), five times, each
    followed by a run of the bare pipelined client on the idle fabric (the
    same MADs to the same ports: `pairs`, or the table's LID column); then
    the PortInfo sweep alone. The first sweep after a change of lifetimes is
    left out (the other may still be running)."""
    m = log_match(log, r"subnet discovered: (\d+) nodes, (\d+) ports in ([\d.]+) s", 900)
    pm_group, fabric_group = group_index(target, "pmCounters"), group_index(target, "fabricPorts")
    with RssSampler(pid) as rss:
        both = sweep_durations(target, pm_group, 3)
    pairs = pairs or sweep_ports(target)
    set_lifetimes(conf, pid, max(5, int(3 * max(both)) + 3), 3600)
    sweep_durations(target, pm_group, 1)
    pm, bare = [], []
    for _ in range(5):
        pm += sweep_durations(target, pm_group, 1)
        time.sleep(1)  # what follows a sweep's publication (views, trim) is done
        t, answered, sent = bare_pipelined(bed, None, runs=1, pairs=pairs, attrs=attrs)[0]
        if answered < sent or sent != (3 if attrs == "fec" else 2) * int(m.group(2)):
            sys.exit("the bare client did not get the sweep's answers (%s ports): %d of %d"
                     % (m.group(2), answered, sent))
        bare.append(t)
    set_lifetimes(conf, pid, 3600, 5)
    fabric = sweep_durations(target, fabric_group, 4)[1:]
    return {"nodes": int(m.group(1)), "ports": int(m.group(2)),
            "discovery_s": float(m.group(3)), "pm_sweep_s": statistics.median(pm),
            "bare_s": statistics.median(bare), "pm_both_s": statistics.median(both),
            "pm_runs": pm, "bare_runs": bare,
            "fabric_sweep_s": statistics.median(fabric), "rss_kib": rss.figures(),
            "heap": heaps(log), "pairs": pairs}


def measure(hosts, topology, node, contexts):
    big = {"hosts": hosts} if hosts else None
    # fabricsim's NDR links: the sweep reads PortExtendedSpeedsCounters too,
    # and so does the bare client (ibsim's QDR links have none)
    attrs = "fec" if big else "ext"
    with TestBed(topology, node, conf=SWEEPING, direct=True, big=big, debug="ibsnmpd:memory",
                 binary=os.path.join(BUILD, "ibsnmpd")) as bed:
        direct = bed.env["SNMP_DIRECT_TARGET"]
        mode = {"direct": sweeping(bed, direct, bed.pid, os.path.join(bed.dir, "ibsnmpd.log"),
                                   os.path.join(bed.dir, "ibsnmpd.conf"), None, attrs)}
        ports = mode["direct"]["ports"]
        n_walks = 3 if ports < 100000 else 1
        walks = [walk(direct, PM_TABLE) for _ in range(n_walks)]
        varbinds, walk_s = walks[0][0], statistics.median(t for _, t in walks)
        bed.stop("ibsnmpd")  # ibnetdiscover alone on the fabric; then other instances
        ibnd, out = timed(bed.command("ibnetdiscover"))
        if out.returncode:
            sys.exit("ibnetdiscover: " + out.stderr[-500:])
        sub_log = subagent(bed, "agentx", SWEEPING, ["-Dibsnmpd:memory"])
        mode["agentx"] = sweeping(bed, bed.env["SNMP_TARGET"], bed.pid_of("agentx"), sub_log,
                                  os.path.join(bed.dir, "agentx.conf"), mode["direct"]["pairs"],
                                  attrs)
        bed.stop("agentx")
        # what a daemon holds before it knows any fabric (its libraries,
        # net-snmp, the MAD engine): one whose discovery fails
        sub_log = subagent(bed, "fixed", ["pmDiscoveryHelper /bin/false"], [])
        log_match(sub_log, r"subnet discovery failed", 120)
        time.sleep(2)
        fixed_kib = rss_kib(bed.pid_of("fixed"))
        bed.stop("fixed")
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
        # 50 ms) while the agent sweeps every 5 s and rediscovers as often
        # as a discovery lets it (every 10 s, or twice a discovery's time:
        # one running longer than pmDiscoveryInterval is killed), in direct
        # mode and through snmpd
        latency = {}
        port = free_udp_port()
        interval = max(10, int(2 * max(m["discovery_s"] for m in mode.values())) + 5)
        busy = ["nodeContextTypes none", "cacheLifetime pmCounters 5",
                "cacheLifetime fabricPorts 5", "pmDiscoveryInterval %d" % interval]
        for name, target, extra in (
                ("direct", "udp:127.0.0.1:%d" % port,
                 ["agentaddress udp:127.0.0.1:%d" % port, "rocommunity public 127.0.0.1"]),
                ("agentx", bed.env["SNMP_TARGET"], [])):
            sub_log = subagent(bed, "busy-" + name, busy + extra, [])
            m = log_match(sub_log, r"subnet discovered: .* in ([\d.]+) s", 900)
            seconds = max(30.0, 2.5 * interval + 10)
            lat, lost = get_latencies(target, PM_TABLE, seconds)
            with open(sub_log) as f:
                rediscoveries = f.read().count("subnet discovered") - 1
            latency[name] = (statistics.median(lat), sorted(lat)[int(0.95 * (len(lat) - 1))],
                             max(lat), len(lat), lost, rediscoveries, interval)
            bed.stop("busy-" + name)
    return {"hosts": hosts, "topology": topology, "nodes": mode["direct"]["nodes"],
            "ports": ports, "mode": mode, "ibnetdiscover_s": ibnd, "walk_s": walk_s,
            "fixed_kib": fixed_kib, "walk_varbinds": varbinds,
            "contexts": n_ctx, "contexts_s": ctx_s, "contexts_heap": ctx_heap,
            "latency": latency}


def report(r, contexts):
    m = r["mode"]
    if r["hosts"]:
        print("%6d hosts: %5d nodes %6d ports" % (r["hosts"], r["nodes"], r["ports"]))
    else:
        print("%s (ibsim, opensm): %d nodes %d ports" % (os.path.basename(r["topology"]),
                                                         r["nodes"], r["ports"]))
    for name in ("direct", "agentx"):
        x = m[name]
        print("  %-6s discovery %.2f s (ibnetdiscover %.2f s, ratio %.2f, aim <= 2); "
              "counter sweep %.3f s (bare pipelined client between sweeps %.3f s, %d ports; "
              "ratio %.2f, aim <= 1.5; %.3f s beside the PortInfo sweep); PortInfo sweep %.3f s"
              % (name, x["discovery_s"], r["ibnetdiscover_s"],
                 x["discovery_s"] / r["ibnetdiscover_s"], x["pm_sweep_s"], x["bare_s"],
                 r["ports"], x["pm_sweep_s"] / x["bare_s"], x["pm_both_s"],
                 x["fabric_sweep_s"]))
        print("         counter sweeps %s; bare client %s"
              % (" ".join("%.3f" % t for t in x["pm_runs"]),
                 " ".join("%.3f" % t for t in x["bare_runs"])))
    for name in ("direct", "agentx"):
        lo, med, hi = m[name]["rss_kib"]
        hlo, hhi = m[name]["heap"]
        print("  %-6s resident memory while sweeping every 5 s, no node contexts: least %.1f, "
              "median %.1f, most %.1f MiB = %.2f KiB per port at most (aim <= 1); above the "
              "%.1f MiB of a daemon without a fabric, %.2f KiB per port; heap in use %.1f-%.1f "
              "MiB" % (name, lo / 1024.0, med / 1024.0, hi / 1024.0, hi / r["ports"],
                       r["fixed_kib"] / 1024.0, (hi - r["fixed_kib"]) / r["ports"],
                       hlo / 2.0 ** 20, hhi / 2.0 ** 20))
    print("  bulk walk of the 64-bit table (direct): %d varbinds in %.2f s"
          % (r["walk_varbinds"], r["walk_s"]))
    print("  node contexts (%s): %d registered in %.2f s (AgentX); heap %.1f MiB more than "
          "without: %.1f KiB per context (aim <= 8)"
          % (contexts, r["contexts"], r["contexts_s"], r["contexts_heap"] / 2.0 ** 20,
             r["contexts_heap"] / 1024.0 / max(r["contexts"], 1)))
    for name, (med, p95, top, n, lost, redisc, every) in sorted(r["latency"].items()):
        print("  GETNEXT while sweeping and rediscovering (%s): median %.1f ms, 95th %.1f ms, "
              "max %.1f ms; %d answered, %d unanswered, %d rediscoveries, one every %d s "
              "(aim: median < 50)" % (name, med * 1000, p95 * 1000, top * 1000, n, lost, redisc,
                                      every))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", default="2000,10000,20000,30000,40000")
    ap.add_argument("--ibsim", metavar="TOPOLOGY",
                    help="one of ibsim's fabrics (tests/topologies/) instead of fabricsim's")
    ap.add_argument("--node", default="h1-1-1", help="with --ibsim: where ibsnmpd runs")
    ap.add_argument("--contexts", default="switch",
                    help="nodeContextTypes of the second ibsnmpd (default: switch)")
    args = ap.parse_args()
    stop_on_sigterm()
    if args.ibsim:
        report(measure(None, args.ibsim, args.node, args.contexts), args.contexts)
        return
    for hosts in (int(h) for h in args.hosts.split(",")):
        report(measure(hosts, None, None, args.contexts), args.contexts)


if __name__ == "__main__":
    main()
