#!/usr/bin/env python3
"""Benchmark: Slurm's topology.conf and topology.yaml (slurmTopologyFile,
slurmTopologyYaml) at scale. On
fabricsim's fat tree of HOSTS hosts (radix 64, NDR; give HOSTS as 32 times
the leaves and one, e.g. 39969, so that the last leaf has free ports) or its
rail layout (--layout rail: HOSTS servers of 8 adapters), ibsnmpd with the
defaults (slurmSettle 10; the routing checks and the vitals off) on host-1,
as snmpd's subagent. Printed:
- the files at start: their sizes, switches, hosts, and the worker's time
  to build them (ibsnmpd's log);
- RUNS moved cables (fat tree): host-K unplugged from its leaf and plugged
  into a free port of the last leaf (Unlink, Link on the simulator's
  console); timed from the Link to the file naming host-K under the last
  leaf (polled every 100 ms), against slurmSettle (the wait that is
  configured, not work) and against the peer: one `ibnetdiscover` of the
  same fabric, what the operators' scripts (slurmibtopology.sh, ib2slurm)
  parse to write the file by hand, timed in the same run.

Usage: bench/slurm_topology.py [--hosts 39969] [--layout fattree3|rail] [--runs 3]
Environment: IBSNMPD_BIN (else build/ibsnmpd), FABRICSIM."""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

from benchlib import TestBed, stop_on_sigterm

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "build"))
SETTLE_S = 10


def wait(predicate, seconds, step=0.1):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        got = predicate()
        if got:
            return got
        time.sleep(step)
    return None


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def under(text, host):
    """The switch whose Nodes= line names host (expanded by Slurm's own
    rules: scontrol when there is one, else a plain match of the simple
    forms this fabric's names take)."""
    for line in text.splitlines():
        m = re.match(r"SwitchName=(\S+) Nodes=(\S+)", line)
        if not m:
            continue
        for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?", m.group(2)):
            item = item.lstrip(",")
            b = re.match(r"(.*)\[(.*)\]$", item)
            if not b:
                if item == host:
                    return m.group(1)
                continue
            prefix = b.group(1)
            if not host.startswith(prefix) or not host[len(prefix):].isdigit():
                continue
            n = int(host[len(prefix):])
            for r in b.group(2).split(","):
                lo, _, hi = r.partition("-")
                if int(lo) <= n <= int(hi or lo):
                    return m.group(1)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=39969)
    ap.add_argument("--layout", choices=("fattree3", "rail"), default="fattree3")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    stop_on_sigterm()
    work = tempfile.mkdtemp(prefix="ibsnmpd-slurm-bench.")
    path = os.path.join(work, "topology.conf")
    yaml = os.path.join(work, "topology.yaml")
    # the default configuration, but for what the file does not follow and
    # what would only load the machine meanwhile (the routing checks' read
    # of every table is minutes at 40,000 hosts; the vitals' registers)
    conf = ["slurmTopologyFile " + path, "slurmTopologyYaml " + yaml, "dcbxEnable no",
            "routingCheck no", "vitalsEnable no"]
    big = {"hosts": args.hosts, "layout": args.layout}
    if args.layout == "rail":
        big["names"] = "real"  # srv-N mlx5_K: a server's adapters, one host
    with TestBed(None, None, conf=conf, binary=os.path.join(BUILD, "ibsnmpd"), big=big) as bed:
        log = os.path.join(bed.dir, "ibsnmpd.log")
        began = time.monotonic()
        line = wait(lambda: re.search(r"slurm topology: \S+\.yaml written: (\d+) switches, "
                                      r"(\d+) hosts.*in ([\d.]+) s", read(log)), 1800, 1)
        if not line:
            raise SystemExit("no topology.conf in 1800 s; see %s" % log)
        text = read(path)
        print("%s, %d %s: topology.conf %d octets, topology.yaml %d octets, %s switches, %s "
              "hosts, built in %s s on the worker (%.0f s after the bed was up)"
              % (args.layout, args.hosts, "servers" if args.layout == "rail" else "hosts",
                 len(text), len(read(yaml)), line.group(1), line.group(2), line.group(3),
                 time.monotonic() - began))
        t = time.monotonic()
        subprocess.run(bed.command("ibnetdiscover"), capture_output=True, timeout=1800)
        peer = time.monotonic() - t
        print("peer: one ibnetdiscover of the same fabric (what the hand-run scripts parse): "
              "%.1f s" % peer)
        if args.layout == "rail" or args.runs <= 0:
            return
        nodes, links = {}, []
        with open(bed.env["SIMFABRIC_TOPOLOGY"]) as f:
            for ln in f:
                p = ln.split()
                if p[0] == "node":
                    nodes[" ".join(p[5:])] = (int(p[2], 16), int(p[3]))
                elif p[0] == "link":
                    links.append((int(p[1], 16), int(p[2]), int(p[3], 16), int(p[4])))
        used = {(g, p) for a, pa, b, pb in links for g, p in ((a, pa), (b, pb))}
        leaves = sorted((n for n in nodes if n.startswith("leaf-")), key=lambda n: nodes[n][0])
        last = leaves[-1]
        free = [p for p in range(1, nodes[last][1] // 2 + 1) if (nodes[last][0], p) not in used]
        if len(free) < args.runs:
            raise SystemExit("the last leaf %s has %d free ports: give --hosts as 32 x leaves "
                             "+ 1" % (last, len(free)))
        follow = []
        for k in range(args.runs):
            host = "host-%d" % (2 + k)
            bed.sim('Unlink "%s"' % host)
            time.sleep(1)
            bed.sim('Link "%s"[1] "%s"[%d]' % (host, last, free[k]))
            t = time.monotonic()
            if not wait(lambda: under(read(path), host) == last, 600):
                raise SystemExit("%s not under %s in the file after 600 s" % (host, last))
            follow.append(time.monotonic() - t)
            print("a cable moved: %s under %s in the file %.1f s after the Link"
                  % (host, last, follow[-1]))
        med = statistics.median(follow)
        print("median %.1f s to follow a moved cable: %.1f s beyond slurmSettle (%d s), "
              "%.2f x one ibnetdiscover (%.1f s)" % (med, med - SETTLE_S, SETTLE_S,
                                                     med / peer if peer else 0, peer))


if __name__ == "__main__":
    main()
