#!/usr/bin/env python3
"""Benchmark: the routing checks (ibsnmpdRouting) on fabricsim's NDR fat
tree, against their peer in the same run:
- ibsnmpd's runs, one after the other (routingCheckInterval 10): the read of
  every switch's LinearForwardingTable (ibsnmpdRoutingReadDuration, its SMPs
  ibsnmpdRoutingMads) and the checks (ibsnmpdRoutingCheckDuration, on their
  own thread), medians of --runs;
- bench-pipelined-pma in its lft mode, a bare libibumad client, reading the
  same blocks (every switch's LID, blocks 0 .. the highest LID / 64) with the
  same window (madMaxOutstanding 256), once ibsnmpd's runs are stopped
  (routingCheckInterval a week, by SIGHUP);
- a manager's GETNEXT latency of ibsnmpdRouteCheckTable through snmpd while
  the runs go, and snmpd's own sysUpTime polled in the same seconds;
- the resident memory of ibsnmpd against a second bed with routingCheck no
  (--no-memory: not);
- from a console fault (an LFT entry of a leaf set to none) to its row in
  ibsnmpdAlarmTable, in seconds and in runs;
- the subnet checks (duplicates, links, sm, cabling against an ibnetdiscover
  dump of the same fabric), run on a worker thread after each link sweep:
  their time, from the log's debug lines (-D ibsnmpd:route), and the time
  ibnetdiscover takes to make the dump.

With --source sa, the tables are the SA's copy (routingSource sa: one
GetTable through the discovery helper, then a sixteenth of the blocks read
from the switches and compared): its read time and SMPs against the same
bare client reading every block by SMP.

Usage: bench/routing.py [--hosts 2000] [--radix 64] [--runs 5] [--no-memory] [--source sa]
                        [--peer-runs 3] [--fault-only]
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import threading
import time

from benchlib import TOP, TestBed, env, get_latencies, log_match, snmpget, stop_on_sigterm

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
MIB = ".1.3.6.1.4.1.8072.9999.9999.117.1."
ROUTING = MIB + "12."
READ_MS, CHECK_MS, SWITCHES, SWITCHES_READ, MADS, RUNS = (
    ROUTING + "%d.0" % n for n in (3, 4, 5, 6, 7, 8))
CHECK_STATUS = ROUTING + "11.1.3"
ALARM_DESC = MIB + "9.3.1.9"
SYS_UPTIME = ".1.3.6.1.2.1.1.3.0"


INTERVAL_S = 10


def conf(enabled, source="smp"):
    return ["routingCheck %s" % ("yes" if enabled else "no"),
            "routingCheckInterval %d" % INTERVAL_S,
            "routingSource %s" % source,
            "madTimeout 1000", "cacheLifetime pmCounters 3600", "cacheLifetime fabricPorts 3600",
            "vitalsEnable no", "expectedTopology {dir}/plan.net"]


def generated(bed):
    """(switch LIDs, the highest LID) from what fabricsim generated"""
    switches, top = [], 0
    with open(bed.env["SIMFABRIC_TOPOLOGY"]) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "node":
                top = max(top, int(parts[4]))
                if parts[1] == "switch":
                    switches.append(int(parts[4]))
    return switches, top


def runs_now(target):
    """ibsnmpdRoutingRuns; 0 before the first run (no instance yet)"""
    try:
        return snmpget(target, RUNS)
    except ValueError:
        return 0


def wait_run(target, after, limit=3600):
    end = time.monotonic() + limit
    while runs_now(target) <= after:
        if time.monotonic() > end:
            raise SystemExit("no routing run in %d s" % limit)
        time.sleep(0.5)


def bare(bed, switches, top, window=256):
    lines = "".join("%d %d\n" % (lid, b) for lid in switches for b in range(top // 64 + 1))
    tool = os.path.join(BUILD, "bench-pipelined-pma")
    res = subprocess.run(bed.command(tool, str(window), "lft"), input=lines,
                         capture_output=True, text=True, env=env())
    m = re.search(r"answers (\d+) of (\d+) in ([\d.]+) s", res.stdout)
    if not m:
        raise SystemExit("bench-pipelined-pma: " + res.stdout + res.stderr)
    return float(m.group(3)), int(m.group(1)), int(m.group(2))


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def rss_without(args):
    with TestBed(None, None, conf=conf(False), big={"hosts": args.hosts, "radix": args.radix},
                 binary=os.path.join(BUILD, "ibsnmpd")) as bed:
        log_match(bed.path("ibsnmpd.log"), r"subnet discovered", 3600)
        time.sleep(30)
        return rss_kib(bed.pid_of("ibsnmpd"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--source", choices=("smp", "sa"), default="smp")
    ap.add_argument("--peer-runs", type=int, default=3,
                    help="reads of the bare client (40,000 hosts: minutes each)")
    ap.add_argument("--fault-only", action="store_true",
                    help="the first run, then the console fault to its alarm only (40,000 hosts:"
                    " a read there takes minutes)")
    args = ap.parse_args()
    if args.fault_only:
        return fault_only(args)
    stop_on_sigterm()

    with TestBed(None, None, conf=conf(True, args.source),
                 big={"hosts": args.hosts, "radix": args.radix},
                 binary=os.path.join(BUILD, "ibsnmpd"), debug="ibsnmpd:route") as bed:
        target = bed.target
        m = log_match(bed.path("ibsnmpd.log"),
                      r"subnet discovered: (\d+) nodes, (\d+) ports in ([\d.]+) s", 3600)
        nodes = int(m.group(1))
        switches, top = generated(bed)
        t0 = time.monotonic()
        dump = bed.run_on_node("ibnetdiscover", timeout=3600)
        dump_s = time.monotonic() - t0
        with open(bed.path("plan.net"), "w") as f:
            f.write(dump)
        wait_run(target, 0)
        reads, checks, mads = [], [], []
        polled, done = {}, threading.Event()

        def poll(name, oid):
            lat, lost = [], 0
            while not done.is_set():
                got, missed = get_latencies(target, oid, 5, interval=0.02)
                lat += got
                lost += missed
            polled[name] = (lat, lost)
        threads = [threading.Thread(target=poll, args=a)
                   for a in (("ibsnmpd", CHECK_STATUS), ("snmpd", SYS_UPTIME))]
        for th in threads:
            th.start()
        for _ in range(args.runs):
            wait_run(target, runs_now(target))
            reads.append(snmpget(target, READ_MS) / 1000.0)
            checks.append(snmpget(target, CHECK_MS) / 1000.0)
            mads.append(snmpget(target, MADS))
        done.set()
        for th in threads:
            th.join()
        read_of = (snmpget(target, SWITCHES_READ), snmpget(target, SWITCHES))
        rss = rss_kib(bed.pid_of("ibsnmpd"))
        # a link sweep with the plan read: the subnet checks' lines after it
        bed.simfabric("sim", 'Unlink "%s"' % "host-2")
        bed.simfabric("sim", 'ReLink "%s"' % "host-2")
        log_match(bed.path("ibsnmpd.log"), r"expectedTopology .*: \d+ nodes", 600)
        subnet = [(int(m.group(1)), int(m.group(2)), float(m.group(3))) for m in re.finditer(
            r"subnet checks of (\d+) ports, (\d+) SMs: ([\d.]+) s",
            open(bed.path("ibsnmpd.log"), errors="replace").read())]
        fault_s, fault_runs = fault_to_alarm(bed, target, top)
        # the bare client once ibsnmpd reads no more
        path = bed.path("ibsnmpd.conf")
        with open(path) as f:
            text = f.read().replace("routingCheckInterval %d" % INTERVAL_S,
                                    "routingCheckInterval 604800")
        with open(path, "w") as f:
            f.write(text)
        os.kill(bed.pid_of("ibsnmpd"), signal.SIGHUP)
        last = runs_now(target)
        time.sleep(3)
        wait_run(target, last - 1)  # a run begun before the SIGHUP ends
        time.sleep(2)
        peers = [bare(bed, switches, top) for _ in range(args.peer_runs)]
    without = None if args.no_memory else rss_without(args)

    read, check, sent = statistics.median(reads), statistics.median(checks), statistics.median(mads)
    peer = statistics.median(p[0] for p in peers)
    print("fabric: fabricsim fat tree, %d hosts, radix %d, NDR: %d nodes, %d switches, "
          "highest LID %d" % (args.hosts, args.radix, nodes, len(switches), top))
    print("tables read whole: %d of %d switches" % read_of)
    print("ibsnmpd's read (routingSource %s): median %.3f s (%s), %d SMPs (%s)" % (
        args.source, read, ", ".join("%.3f" % x for x in reads), sent,
        ", ".join(str(x) for x in mads)))
    print("bare pipelined client, the same %d blocks: median %.3f s (%s); answered %d of %d"
          % (peers[0][2], peer, ", ".join("%.3f" % p[0] for p in peers), peers[0][1],
             peers[0][2]))
    print("ratio read / bare: %.2f (aim: at most 1.2)" % (read / peer if peer else 0))
    print("checks (on their own thread): median %.3f s (%s) (aim: at most 2 s at 40,000 hosts)"
          % (check, ", ".join("%.3f" % x for x in checks)))
    for name in ("ibsnmpd", "snmpd"):
        lat, lost = polled[name]
        lat.sort()
        if lat:
            print("GETNEXT latency of %s during the runs: median %.1f ms, p99 %.1f ms, max %.1f ms,"
                  " %d samples, %d unanswered" % (
                      name, 1000 * lat[len(lat) // 2], 1000 * lat[int(len(lat) * 0.99)],
                      1000 * lat[-1], len(lat), lost))
    print("from a console fault (one LFT entry) to its alarm: %.1f s, %d run(s) ended meanwhile"
          % (fault_s, fault_runs))
    if subnet:
        times = sorted(x[2] for x in subnet)
        print("subnet checks (their own thread, %d ports, %d SMs, cabling of a %.1f MB dump): "
              "median %.3f s, max %.3f s of %d runs; ibnetdiscover made the dump in %.1f s"
              % (subnet[-1][0], subnet[-1][1], len(dump) / 1e6, times[len(times) // 2],
                 times[-1], len(times), dump_s))
    if without:
        print("resident memory: %.1f MB with the routing checks, %.1f MB without: %.1f MB more "
              "(aim: at most 100 MB at 40,000 hosts)" % (rss / 1024, without / 1024,
                                                        (rss - without) / 1024))


def fault_to_alarm(bed, target, top):
    """(seconds, runs ended meanwhile) from an LFT entry of a leaf set to none
    on fabricsim's console to its row in ibsnmpdAlarmTable"""
    leaf = next(line.split()[5] for line in open(bed.env["SIMFABRIC_TOPOLOGY"])
                if line.startswith("node switch"))
    run_before = runs_now(target)
    t0 = time.monotonic()
    bed.simfabric("sim", 'Lft "%s" %d none' % (leaf, top // 2 if top // 2 else 1))
    while not any("has no port for LID" in v for v in walk_values(target, ALARM_DESC)):
        if time.monotonic() - t0 > 3600:
            raise SystemExit("no alarm in an hour")
        time.sleep(0.2 if top < 20000 else 2)
    fault_s, fault_runs = time.monotonic() - t0, runs_now(target) - run_before
    bed.simfabric("sim", 'Lft "%s" auto' % leaf)
    return fault_s, fault_runs


def fault_only(args):
    with TestBed(None, None, conf=conf(True, args.source),
                 big={"hosts": args.hosts, "radix": args.radix},
                 binary=os.path.join(BUILD, "ibsnmpd"), debug="ibsnmpd:route") as bed:
        target = bed.target
        t0 = time.monotonic()
        log_match(bed.path("ibsnmpd.log"), r"subnet discovered", 3600)
        discovered = time.monotonic() - t0
        switches, top = generated(bed)
        wait_run(target, 0)
        read = snmpget(target, READ_MS) / 1000.0
        mads = snmpget(target, MADS)
        fault_s, fault_runs = fault_to_alarm(bed, target, top)
    print("fabric: fabricsim fat tree, %d hosts, radix %d: %d switches, highest LID %d; "
          "discovered in %.0f s" % (args.hosts, args.radix, len(switches), top, discovered))
    print("ibsnmpd's first read (routingSource %s): %.1f s, %d SMPs" % (args.source, read, mads))
    cycle = INTERVAL_S + read
    print("from a console fault (one LFT entry) to its alarm: %.1f s, %d run(s) ended meanwhile;"
          " ratio to one cycle (routingCheckInterval %d s + the read) %.2f (aim: 1)"
          % (fault_s, fault_runs, INTERVAL_S, fault_s / cycle))


def walk_values(target, oid):
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Oqv", "-t", "5",
                          target, oid], capture_output=True, text=True, env=env()).stdout
    return out.splitlines()


if __name__ == "__main__":
    main()
