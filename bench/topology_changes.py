#!/usr/bin/env python3
"""Benchmark: how soon a change of the fabric is served, and what it costs
the fabric (issues 37 and 49). On
fabricsim's fat tree of HOSTS hosts (radix 64, NDR), ibsnmpd in direct mode
on host-1; each change is made on the simulator's console and timed from the
console command to the agent serving it (GETs every 50 ms), RUNS times:
- a host's link back: Unlink, then ReLink of host-K; served when its leaf
  port's ibsnmpdFabricPortLinkState is active(4);
- a new switch with hosts: a radix-64 switch with two hosts behind it
  (cabled first) on a free port of the last leaf: served when
  ibsnmpdNodeTable has its second host;
- a new host on a free port of the first new switch (Add, Link): served
  when ibsnmpdNodeTable has it;
- a moved cable: host-K from its leaf to a free port of the first new
  switch: served when that port's row names host-K as the other end.
The last leaf needs RUNS free ports: give HOSTS as 32 times the leaves and
one (e.g. 1985, 9985, 39969).
What each change costs the fabric is fabricsim's count of the MADs it
answered across it, by class: SMPs, vendor MADs (NVIDIA's class 0x0A and
vendor-attribute SMPs: register reads by the switches' management
processors) and PerfMgt MADs. The configuration is the default one (the
vitals on) but for the periodic sweeps' lifetimes, an hour, so that nothing
else is read meanwhile; a change's reads are compared with what ibsnmpd's
own start cost (a discovery, an inventory and readings of every node, a
counter sweep: fabricsim's counts from start until they stand still) and
with a full discovery's SMPs (ibnetdiscover's, run alone on the same fabric).
--vitals no turns the vitals off (as the bench was before issue 49).

With --source sa ibsnmpd reads the subnet from the SM's SA (discoverySource
sa): a change then costs the switches no SMP (fabricsim's SA is as current
as the simulator; a real SM's is as current as its last sweep).

With --storm N (after the runs; --runs 0 for the storm alone): N hosts'
links down (Unlink) spread over the first half of --window seconds, up again
(ReLink) over the second half, while a manager GETs every 50 ms; printed:
the MADs of each class the storm cost against ibsnmpd's start, the seconds
from the last ReLink until every one of those hosts is served again (its leaf port
active, its node in ibsnmpdNodeTable as reached), and the GETs' latency.

Usage: bench/topology_changes.py [--hosts 2000] [--runs 5] [--source auto|smp|sa]
                                 [--vitals yes|no] [--storm 500 --window 60]
"""
import argparse
import os
import re
import statistics
import subprocess
import threading
import time

from benchlib import (GROUP_DURATION, GROUP_NAME, TestBed, env, fabricsim_answered,
                      get_latencies, stop_on_sigterm)
from simfabric import PERIODIC_GROUPS

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "build"))
MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
LINK_STATE = MIB + "1.5.1.1.6."
REMOTE_DESC = MIB + "1.5.1.1.16."
NODE_DESC = MIB + "1.6.1.1.2."
NODE_REACHABLE = MIB + "1.6.1.1.7."


def index(guid, port=None):
    arcs = ".".join(str(b) for b in guid.to_bytes(8, "big"))
    return arcs if port is None else "%s.%d" % (arcs, port)


def get(target, oid):
    out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", "-t", "2", target, oid],
                         capture_output=True, text=True, env=env())
    return out.stdout.strip().strip('"')


def column(target, oid):
    """{last arc of the index: value} of a table's column"""
    out = subprocess.run(["snmpwalk", "-v2c", "-c", "public", "-On", "-Oq", target, oid],
                         capture_output=True, text=True, env=env()).stdout
    return dict((o.rsplit(".", 1)[1], v.strip('"'))
                for o, _, v in (line.partition(" ") for line in out.splitlines()))


def get_many(target, oids):
    """[value] of many OIDs, 40 to a request"""
    out = []
    for k in range(0, len(oids), 40):
        r = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", "-t", "5", target] +
                           oids[k:k + 40], capture_output=True, text=True, env=env())
        vals = r.stdout.splitlines()
        out += vals if len(vals) == len(oids[k:k + 40]) else [""] * len(oids[k:k + 40])
    return out


CLASSES = ("smp", "vendor", "pma")
CLASS_NAMES = {"smp": "SMPs", "vendor": "vendor MADs", "pma": "PerfMgt MADs"}


def answered(bed):
    """fabricsim's counts by class so far"""
    return fabricsim_answered(bed)


def spent(bed, before):
    after = answered(bed)
    return {c: after[c] - before[c] for c in CLASSES}


def settled(bed):
    """fabricsim's counts once it is quiet"""
    return bed.answered_when_quiet()


def storm(bed, target, hosts, nodes, leaf_of, window, start_cost):
    """N hosts down over the first half of window, up over the second"""
    oids = []
    for h in hosts:
        leaf, port = leaf_of[h]
        oids += [LINK_STATE + index(nodes[leaf][1], port), NODE_REACHABLE + index(nodes[h][1])]
    latencies = []
    poller = threading.Thread(target=lambda: latencies.extend(
        get_latencies(target, MIB + "1.5.1.1.6", window + 120, interval=0.05)[0]))
    before = answered(bed)
    t_start = time.monotonic()
    poller.start()
    half = window / 2.0
    for i, h in enumerate(hosts):
        due = t_start + half * i / len(hosts)
        time.sleep(max(0.0, due - time.monotonic()))
        bed.sim('Unlink "%s"' % h)
    for i, h in enumerate(hosts):
        due = t_start + half + half * i / len(hosts)
        time.sleep(max(0.0, due - time.monotonic()))
        bed.sim('ReLink "%s"' % h)
    t_last = time.monotonic()
    while True:
        vals = get_many(target, oids)
        if all(v == ("4" if k % 2 == 0 else "1") for k, v in enumerate(vals)):
            break
        if time.monotonic() - t_last > 600:
            raise SystemExit("the storm's hosts not served after 600 s")
        time.sleep(0.5)
    matched = time.monotonic() - t_last
    settled(bed)
    cost = spent(bed, before)
    poller.join()
    lat = sorted(latencies)
    print("\nstorm: %d hosts down within %.0f s and up within the next %.0f s" %
          (len(hosts), half, half))
    for c in CLASSES:
        print("  %-13s %9d  (%.3f of ibsnmpd's start, %d)" % (
            CLASS_NAMES[c] + ":", cost[c], cost[c] / start_cost[c] if start_cost[c] else 0,
            start_cost[c]))
    print("  served again %.1f s after the last ReLink" % matched)
    if lat:
        print("  GET latency during it: median %.1f ms, 99th %.1f ms, worst %.1f ms (%d GETs)" %
              (1000 * statistics.median(lat), 1000 * lat[int(0.99 * (len(lat) - 1))],
               1000 * lat[-1], len(lat)))


def added_guid(bed, name):
    with open(os.path.join(bed.dir, "fabricsim.out")) as f:
        m = re.findall(r"# %s: GUID (0x[0-9a-f]+)" % re.escape(name), f.read())
    return int(m[-1], 16)


def timed(bed, commands, served):
    """(seconds from the last console command to served(), MADs by class
    until the fabric is quiet again)"""
    before = answered(bed)
    for c in commands:
        bed.sim(c)
    t0 = time.monotonic()
    while not served():
        if time.monotonic() - t0 > 300:
            raise SystemExit("not served after 300 s: %s" % commands)
        time.sleep(0.05)
    took = time.monotonic() - t0
    settled(bed)  # the rest of what the change set off
    return took, spent(bed, before)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--source", choices=("auto", "smp", "sa"), default="auto",
                    help="ibsnmpd's discoverySource (sa: the subnet from the SM's SA)")
    ap.add_argument("--vitals", choices=("yes", "no"), default="yes")
    ap.add_argument("--storm", type=int, default=0, help="hosts down and up in a storm")
    ap.add_argument("--window", type=float, default=60.0, help="the storm's seconds")
    args = ap.parse_args()
    stop_on_sigterm()
    # the default configuration but for the periodic reads' lifetimes (an
    # hour): what the fabric answers across a change is the change's
    conf = ["cacheLifetime %s 3600" % g for g in PERIODIC_GROUPS] + [
            "dcbxEnable no",
            "vitalsEnable " + args.vitals, "notificationLimit 0 60",
            "discoverySource " + args.source]
    with TestBed(None, None, conf=conf, direct=True, binary=os.path.join(BUILD, "ibsnmpd"),
                 big={"hosts": args.hosts}) as bed:
        target = bed.env["SNMP_DIRECT_TARGET"]
        log = os.path.join(bed.dir, "ibsnmpd.log")
        for _ in range(900):
            if "subnet discovered" in open(log).read():
                break
            time.sleep(1)
        start_cost = settled(bed)
        nodes, links = {}, []
        with open(bed.env["SIMFABRIC_TOPOLOGY"]) as f:
            for line in f:
                p = line.split()
                if p[0] == "node":
                    nodes[" ".join(p[5:])] = (p[1], int(p[2], 16), int(p[3]))
                elif p[0] == "link":
                    links.append((int(p[1], 16), int(p[2]), int(p[3], 16), int(p[4])))
        by_guid = {g: n for n, (_, g, _) in nodes.items()}
        used = {(g, p) for a, pa, b, pb in links for g, p in ((a, pa), (b, pb))}
        leaves = sorted((n for n in nodes if n.startswith("leaf-")),
                        key=lambda n: nodes[n][1])
        last = leaves[-1]
        free = [p for p in range(1, nodes[last][2] // 2 + 1) if (nodes[last][1], p) not in used]
        if len(free) < args.runs or args.runs > 30:
            raise SystemExit("the last leaf %s has %d free ports: give --hosts so that it "
                             "has %d (and --runs 30 at most)" % (last, len(free), args.runs))
        leaf_of = {by_guid[a]: (by_guid[b], pb) for a, pa, b, pb in links
                   if by_guid[a].startswith("host-")}
        print("fat tree, radix 64, %d hosts: %d nodes; ibsnmpd (direct mode, discoverySource "
              "%s) on host-1; %s has %d free ports" % (args.hosts, len(nodes), args.source, last,
                                                      len(free)))
        # a full discovery's SMPs: ibnetdiscover's, alone
        before = answered(bed)
        subprocess.run(bed.command("ibnetdiscover"), capture_output=True, timeout=600)
        full = answered(bed)["smp"] - before["smp"]
        results = {"a host's link back": [], "a new host": [], "a moved cable": [],
                   "a new switch, 2 hosts": []}
        for k in range(args.runs):
            host = "host-%d" % (2 + k)
            leaf, port = leaf_of[host]
            g_leaf = nodes[leaf][1]
            bed.sim('Unlink "%s"' % host)
            time.sleep(4)
            results["a host's link back"].append(timed(
                bed, ['ReLink "%s"' % host],
                lambda: get(target, LINK_STATE + index(g_leaf, port)) == "4"))
            # a switch with two hosts cabled to it, then to a free port of the last leaf
            sw, hosts = "switch-new-%d" % k, ["host-sw%d-%d" % (k, j) for j in (1, 2)]
            bed.sim('Add switch "%s" 64' % sw)
            for j, h in enumerate(hosts):
                bed.sim('Add ca "%s" 1' % h)
                bed.sim('Link "%s"[%d] "%s"[1]' % (sw, j + 1, h))
            time.sleep(0.3)
            g_host = added_guid(bed, hosts[-1])
            results["a new switch, 2 hosts"].append(timed(
                bed, ['Link "%s"[%d] "%s"[64]' % (last, free[k], sw)],
                lambda: get(target, NODE_DESC + index(g_host)) == hosts[-1]))
            # a new host and a moved cable on the first new switch's free ports
            g_sw0 = added_guid(bed, "switch-new-0")
            name = "host-new-%d" % k
            bed.sim('Add ca "%s" 1' % name)
            time.sleep(0.3)
            g_new = added_guid(bed, name)
            results["a new host"].append(timed(
                bed, ['Link "switch-new-0"[%d] "%s"[1]' % (3 + k, name)],
                lambda: get(target, NODE_DESC + index(g_new)) == name))
            mover, to = "host-%d" % (2 + args.runs + k), 3 + args.runs + k
            results["a moved cable"].append(timed(
                bed, ['Link "switch-new-0"[%d] "%s"[1]' % (to, mover)],
                lambda: get(target, REMOTE_DESC + index(g_sw0, to)) == mover))
        # what each group's last build took (the derived views are built
        # whole from their sources' snapshots after each publication)
        names, took = column(target, GROUP_NAME), column(target, GROUP_DURATION)
        print("the last build or sweep of each group after the runs (ibsnmpdCacheLastDuration): " +
              ", ".join("%s %s ms" % (names[i], took.get(i, "?")) for i in names))
        print("\nibsnmpd's start (vitals %s): %s" % (args.vitals, ", ".join(
            "%d %s" % (start_cost[c], CLASS_NAMES[c]) for c in CLASSES)))
        print("a full discovery (ibnetdiscover alone): %d SMPs" % full)
        print("\n%-24s %8s %8s %14s %14s %14s" % ("change", "median s", "worst s", "SMPs",
                                                  "vendor MADs", "PerfMgt MADs"))
        print("%-24s %8s %8s %14s %14s %14s" % ("", "", "", "median/worst", "median/worst",
                                                  "median/worst"))
        for what, runs in (results.items() if args.runs else ()):
            secs = [r[0] for r in runs]
            cols = ["%d/%d" % (statistics.median([r[1][c] for r in runs]),
                               max(r[1][c] for r in runs)) for c in CLASSES]
            print("%-24s %8.2f %8.2f %14s %14s %14s" % (
                what, statistics.median(secs), max(secs), *cols))
        if args.storm:
            # hosts of every leaf but host-1's, none of those the runs moved
            pool = sorted((h for h in leaf_of if h != "host-1" and leaf_of[h][0] != leaf_of["host-1"][0]
                           and not 2 <= int(h.split("-")[1]) < 2 + 2 * args.runs),
                          key=lambda h: int(h.split("-")[1]))
            step = max(1, len(pool) // args.storm)
            storm(bed, target, pool[::step][:args.storm], nodes, leaf_of, args.window,
                  start_cost)


if __name__ == "__main__":
    main()
