#!/usr/bin/env python3
"""Benchmark: every node as an SNMP device (one context per node), what it
costs the fabric and how fast a context answers.

All in one run on tests/topologies/fattree-612.net (612 nodes, 612 contexts),
ibsnmpd attached to h1-1 with its default lifetimes:
- MADs per minute (ibsnmpdMadsSent) while a manager polls nothing; while it
  GETs sysUpTime and every port's ifOperStatus, ifHCInOctets and
  ifHCOutOctets in every switch context (36) every 10 s, as an NMS's items
  do (served from the subnet-wide sweeps: no MAD of their own); while it
  walks each of N switch contexts whole every 10 s (--polled, default 36:
  system, IF-MIB and SMA-MIB), which keeps their SMA-MIB groups read at
  each group's lifetime;
- a bulk walk of one leaf switch's ifTable and ifXTable in its context
  (SNMPv3, the bed's user), against a walk of snmpd's own ifTable and
  ifXTable (the host's interfaces) with the same user and tool, in
  varbinds per second, several runs each.
Prints medians and the ratios.

Usage: bench/contexts.py [--minutes 1] [--polled 36] [--runs 7]
"""
import argparse
import re
import statistics
import subprocess
import threading
import time

from benchlib import MADS_SENT, TestBed, env, snmpget, stop_on_sigterm

TOPOLOGY = "fattree-612.net"
NODE_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.6.1.1"
IF_TABLE = ".1.3.6.1.2.1.2.2"
IFX_TABLE = ".1.3.6.1.2.1.31.1.1"
SMA_MIB = ".1.3.6.1.3.117.3"


def v3(bed, tool, context, *args):
    cmd = [tool] + bed.env["SNMP_V3_ARGS"].split() + (["-n", context] if context else []) + \
        ["-On", "-t", "5", "-r", "1", bed.target] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, env=env())


def switch_contexts(bed):
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", bed.target,
                          NODE_TABLE], capture_output=True, text=True, env=env()).stdout
    desc, ctx = {}, {}
    for line in out.splitlines():
        m = re.match(r"^%s\.(\d+)\.([\d.]+) = STRING: \"(.*)\"$" % re.escape(NODE_TABLE), line)
        if m and m.group(1) == "2":
            desc[m.group(2)] = m.group(3)
        elif m and m.group(1) == "6":
            ctx[m.group(2)] = m.group(3)
    return {desc[i]: ctx[i] for i in desc if desc[i].startswith(("leaf", "spine"))}


NS_MODULE_NAME = ".1.3.6.1.4.1.8072.1.2.1.1.4."  # NET-SNMP-AGENT-MIB::nsModuleName


def registrations(bed, context):
    """The registration points snmpd holds in context (nsModuleTable, indexed
    by context, point, priority), but for its own 0, 1 and 2."""
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", bed.target,
                          NS_MODULE_NAME[:-1]], capture_output=True, text=True, env=env()).stdout
    points = []
    for line in out.splitlines():
        name = line.split(" = ")[0]
        if not name.startswith(NS_MODULE_NAME):
            continue
        arcs = [int(a) for a in name[len(NS_MODULE_NAME):].split(".")]
        rest = arcs[1 + arcs[0]:]
        point = ".".join(map(str, rest[1:1 + rest[0]]))
        if "".join(chr(a) for a in arcs[1:1 + arcs[0]]) == context and \
                point not in ("0", "1", "2"):
            points.append(point)
    return sorted(points)


def mads_per_minute(bed, minutes, poll):
    stop = threading.Event()
    worker = threading.Thread(target=poll, args=(stop,)) if poll else None
    if worker:
        worker.start()
        time.sleep(15)  # the polled contexts' first reads are done
    before = int(snmpget(bed.target, MADS_SENT))
    started = time.monotonic()
    time.sleep(minutes * 60)
    sent = int(snmpget(bed.target, MADS_SENT)) - before
    elapsed = time.monotonic() - started
    stop.set()
    if worker:
        worker.join()
    return sent * 60.0 / elapsed


def poller(bed, contexts, walk):
    items = [".1.3.6.1.2.1.1.3.0"] + ["%s%d.%d" % (oid, col, port)
                                      for port in range(1, 37)
                                      for oid, col in ((IF_TABLE + ".1.", 8),
                                                       (IFX_TABLE + ".1.", 6),
                                                       (IFX_TABLE + ".1.", 10))]

    def run(stop):
        while not stop.is_set():
            started = time.monotonic()
            for c in contexts:
                if walk:
                    for root in (".1.3.6.1.2.1.1", IF_TABLE, IFX_TABLE, SMA_MIB):
                        v3(bed, "snmpbulkwalk", c, root)
                else:
                    for k in range(0, len(items), 40):
                        v3(bed, "snmpget", c, *items[k:k + 40])
            stop.wait(max(0.0, 10 - (time.monotonic() - started)))
    return run


def walk_rate(bed, context, runs):
    rates = []
    for _ in range(runs):
        n = 0
        started = time.perf_counter()
        for table in (IF_TABLE, IFX_TABLE):
            out = v3(bed, "snmpbulkwalk", context, table)
            if out.returncode != 0:
                raise SystemExit("walk failed: " + out.stderr)
            n += len(out.stdout.splitlines())
        rates.append((n, n / (time.perf_counter() - started)))
    return rates[0][0], statistics.median(r for _, r in rates)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=1.0)
    ap.add_argument("--polled", type=int, default=36)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    stop_on_sigterm()
    with TestBed(TOPOLOGY, "h1-1", conf=["nodeContextTypes switch ca router"]) as bed:
        for _ in range(120):
            if "node contexts: 612 registered" in open(bed.dir + "/ibsnmpd.log").read():
                break
            time.sleep(1)
        log = open(bed.dir + "/ibsnmpd.log").read()
        took = re.search(r"node contexts: (\d+) registered in ([\d.]+) s", log)
        switches = switch_contexts(bed)
        points = registrations(bed, sorted(switches.values())[0])
        print("%s: %s contexts registered in %s s (%d AgentX registrations each: %s)"
              % (TOPOLOGY, took.group(1), took.group(2), len(points), ", ".join(points)))
        idle = mads_per_minute(bed, args.minutes, None)
        items = mads_per_minute(bed, args.minutes,
                                poller(bed, sorted(switches.values()), walk=False))
        polled = sorted(switches.values())[:args.polled]
        walked = mads_per_minute(bed, args.minutes, poller(bed, polled, walk=True))
        print("MADs per minute, whole subnet (ibsnmpdMadsSent over %.1f min):" % args.minutes)
        print("  no context polled:                            %8.0f" % idle)
        print("  IF-MIB items (GETs) of %2d switch contexts:    %8.0f  (x%.2f)"
              % (len(switches), items, items / idle))
        print("  %2d switch contexts walked whole (SMA-MIB too): %8.0f  (x%.2f; %.0f per context)"
              % (len(polled), walked, walked / idle, (walked - idle) / max(1, len(polled))))
        leaf = switches["leaf12"]
        n, ctx_rate = walk_rate(bed, leaf, args.runs)
        m, own_rate = walk_rate(bed, None, args.runs)
        print("bulk walk of ifTable + ifXTable, SNMPv3, median of %d:" % args.runs)
        print("  leaf12's context (%d varbinds):     %8.0f varbinds/s" % (n, ctx_rate))
        print("  snmpd's own IF-MIB (%d varbinds):    %8.0f varbinds/s" % (m, own_rate))
        print("  ratio context / snmpd's own:          %8.2f" % (ctx_rate / own_rate))


if __name__ == "__main__":
    main()
