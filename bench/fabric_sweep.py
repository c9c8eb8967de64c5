#!/usr/bin/env python3
"""Benchmark: the links of the whole subnet, ibsnmpd against its peers.

All in one run on tests/topologies/fattree-1122.net (1,122 nodes), ibsnmpd
attached to h1-1 (the SA's trap 128 reaches it: tests/tools/sim_issm_shim.c
is preloaded, as in the integration tests):
- ibsnmpd's PortInfo sweep of every port (ibsnmpdCacheLastDuration of the
  fabricPorts group: first SMP to last answer), several sweeps, and the MADs
  one sweep costs (ibsnmpdMadsSent between two sweeps; the counter sweeps
  and the SMA groups are set to an hour, so what else is sent is the SM
  watch's SMInfo every 2 s);
- `iblinkinfo` and `ibnetdiscover` over the same fabric, timed as processes,
  several runs each (both discover the fabric themselves, then read every
  port's PortInfo: the same question ibsnmpd answers from its cache);
- the time from an `Unlink` (ibsim's console) to ibsnmpdLinkDown in
  snmptrapd's log, and from `ReLink` to ibsnmpdLinkUp, over several links
  (switch-to-switch links, each seen down from both ends: one notification),
  with the periodic sweep set to 10 minutes (SIGHUP) so that the trap's
  re-read (1 s after the trap, TRAP_DELAY_S in fabric_sweep.c) reports it.
Prints medians and the ratios.

Usage: bench/fabric_sweep.py [--runs 5] [--links 8]
"""
import argparse
import os
import signal
import statistics
import subprocess
import threading
import time

from benchlib import MADS_SENT, SMA_GROUPS, STATS, TOP, TestBed, env, snmpget, stop_on_sigterm

TOPOLOGY = "fattree-1122.net"
BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
SHIM = os.path.join(BUILD, "tests", "sim_issm_shim.so")
NOTIFY = ".1.3.6.1.4.1.8072.9999.9999.117.0."


def timed(cmd):
    started = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env())
    return time.perf_counter() - started, out


def cache_row(target, name):
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", target,
                          STATS + ".6.1.2"], capture_output=True, text=True, env=env()).stdout
    for line in out.splitlines():
        if '"%s"' % name in line:
            return int(line.split(" = ")[0].rsplit(".", 1)[1])
    raise SystemExit("no cache group %s in ibsnmpdCacheTable" % name)


def watch(path, lines, stop):
    with open(path) as f:
        f.seek(0, 2)
        while not stop.is_set():
            line = f.readline()
            if line:
                lines.append((time.monotonic(), line))
            else:
                time.sleep(0.005)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--links", type=int, default=8)
    args = ap.parse_args()
    stop_on_sigterm()

    conf = ["cacheLifetime fabricPorts 3", "cacheLifetime pmCounters 3600",
            "notificationLimit 0 60", "fabricStateFile {dir}/links.state"]
    conf += ["cacheLifetime %s 3600" % g for g in SMA_GROUPS]
    with TestBed(TOPOLOGY, "h1-1", conf=conf, preload=SHIM) as bed:
        target = bed.target
        log = os.path.join(bed.dir, "ibsnmpd.log")
        while "subscribed to trap 128" not in open(log).read():
            time.sleep(0.2)
        row = cache_row(target, "fabricPorts")
        duration, refreshes = "%s.6.1.7.%d" % (STATS, row), "%s.6.1.5.%d" % (STATS, row)
        sweeps, mads, seen = [], [], snmpget(target, refreshes)
        sent = None
        while len(sweeps) < args.runs:
            time.sleep(0.1)
            n = snmpget(target, refreshes)
            if n > seen:
                seen = n
                sweeps.append(snmpget(target, duration) / 1000.0)
                now = snmpget(target, MADS_SENT)
                if sent is not None:
                    mads.append(now - sent)
                sent = now
        rows = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", target,
                               ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1.1.6"],
                              capture_output=True, text=True, env=env()).stdout.count("\n")
        peers = {}
        for tool in ("iblinkinfo", "ibnetdiscover"):
            peers[tool] = []
            for _ in range(args.runs):
                t, out = timed(bed.command(tool))
                if out.returncode:
                    raise SystemExit("%s failed: %s" % (tool, out.stderr))
                peers[tool].append(t)
        # Unlink / ReLink -> notification: the periodic sweep set to 10 minutes
        # (SIGHUP), so that what reports the change is trap 128's re-read
        conf_file = os.path.join(bed.dir, "ibsnmpd.conf")
        with open(conf_file) as f:
            text = f.read()
        with open(conf_file, "w") as f:
            f.write(text.replace("cacheLifetime fabricPorts 3\n", "cacheLifetime fabricPorts 600\n"))
        os.kill(bed.pid, signal.SIGHUP)
        time.sleep(4)  # a sweep under way ends
        lines, stop = [], threading.Event()
        watcher = threading.Thread(target=watch, args=(os.path.join(bed.dir, "traps.log"),
                                                       lines, stop), daemon=True)
        watcher.start()
        down, up, counts = [], [], []
        for k in range(args.links):
            leaf, uplink = 2 + k, 31 + k % 6  # leaf L port 30+S is cabled to spine S
            for command, number, into in (("Unlink", 1, down), ("ReLink", 2, up)):
                n0 = len(lines)
                started = time.monotonic()
                bed.sim('%s "leaf%d"[%d]' % (command, leaf, uplink))
                hit = None
                while hit is None and time.monotonic() - started < 60:
                    hit = next((w for w, l in lines[n0:] if "OID: %s%d\t" % (NOTIFY, number)
                                in l.replace("\n", "\t")), None)
                    time.sleep(0.01)
                if hit is None:
                    raise SystemExit("no notification %d after %s leaf%d[%d]"
                                     % (number, command, leaf, uplink))
                into.append(hit - started)
                time.sleep(4)  # the other end's view, the rediscovery (2 s after the trap)
                # and the sweep that follows it: nothing more expected
                counts.append(sum(1 for _, l in lines[n0:] if "OID: %s%d" % (NOTIFY, number)
                                  in l))
        stop.set()

    med = statistics.median
    print("fabric: %s, %d rows in ibsnmpdFabricPortTable" % (TOPOLOGY, rows))
    print("ibsnmpd PortInfo sweep of every port: median %.3f s (min %.3f, max %.3f, %d sweeps)"
          % (med(sweeps), min(sweeps), max(sweeps), len(sweeps)))
    if mads:
        print("MADs sent from one sweep to the next: least %d, median %d (one PortInfo per "
              "port: %d; a counter sweep after a discovery may fall in between)"
              % (min(mads), med(mads), rows))
    for tool, times in peers.items():
        print("%-13s median %.3f s (min %.3f, max %.3f, %d runs); ibsnmpd's sweep / it: %.2f"
              % (tool, med(times), min(times), max(times), len(times), med(sweeps) / med(times)))
    print("Unlink -> ibsnmpdLinkDown in snmptrapd's log: median %.2f s (min %.2f, max %.2f, "
          "%d links)" % (med(down), min(down), max(down), len(down)))
    print("ReLink -> ibsnmpdLinkUp:                      median %.2f s (min %.2f, max %.2f)"
          % (med(up), min(up), max(up)))
    print("notifications per change (one per link, not per end): %s" % sorted(set(counts)))


if __name__ == "__main__":
    main()
