#!/usr/bin/env python3
"""Benchmark: the SMPs one switch gets while its context's SMA-MIB is walked,
by attribute, for two builds of ibsnmpd side by side in the same run.

On tests/topologies/fattree-612.net, ibsnmpd attached to h1-1 with its
default lifetimes and -Dibsnmpd:mad (every MAD sent is logged): a manager
walks SMA-MIB in spine5's context every 10 s; after a 30 s warm-up, the
LID-routed SMPs sent to spine5 over M minutes are counted by attribute. They
include the subnet-wide sweeps' own (the fabric sweep's PortInfo of its 36
ports every 15 s). Two beds run side by side, one per build, so both see the
same machine.

Usage: bench/context_smps.py [--minutes 3] [--base DIR] [--build DIR]
  --base: a build directory to compare with (e.g. of an older commit);
          without it, only --build (default: the tree's build) is measured.
"""
import argparse
import collections
import os
import re
import subprocess
import threading
import time

from benchlib import TOP, TestBed, env, stop_on_sigterm

TOPOLOGY = "fattree-612.net"
SWITCH = "spine5"
SMA_MIB = ".1.3.6.1.3.117.3"
ATTRS = {0x10: "NodeDesc", 0x11: "NodeInfo", 0x12: "SwitchInfo", 0x14: "GUIDInfo",
         0x15: "PortInfo", 0x16: "P_KeyTable", 0x17: "SLtoVL", 0x18: "VLArb", 0x19: "LFT",
         0x1a: "RFT", 0x1b: "MFT", 0x20: "SMInfo", 0x30: "VendorDiag", 0x31: "LedInfo"}
SENT = re.compile(r"sent class 0x01 attr 0x([0-9a-f]{4}) mod 0x[0-9a-f]+ tid 0x[0-9a-f]+ "
                  r"to lid (\d+)")


def switch_lid_and_context(bed):
    out = subprocess.run(bed.command("ibnetdiscover"), capture_output=True, text=True).stdout
    m = re.search(r'^Switch\s+\d+\s+"S-([0-9a-f]+)"\s+# "%s".* lid (\d+)' % SWITCH, out, re.M)
    return int(m.group(2)), "ib-" + m.group(1)


def measure(bed, minutes, result):
    lid, context = switch_lid_and_context(bed)
    stop = threading.Event()

    def walk():
        while not stop.is_set():
            subprocess.run(["snmpbulkwalk"] + bed.env["SNMP_V3_ARGS"].split() +
                           ["-n", context, "-On", bed.target, SMA_MIB],
                           capture_output=True, env=env())
            stop.wait(10)
    walker = threading.Thread(target=walk)
    walker.start()
    time.sleep(30)  # its groups' first reads are done
    log = os.path.join(bed.dir, "ibsnmpd.log")
    start = os.path.getsize(log)
    time.sleep(minutes * 60)
    stop.set()
    walker.join()
    with open(log) as f:
        f.seek(start)
        sent = collections.Counter(int(a, 16) for a, to in SENT.findall(f.read())
                                   if int(to) == lid)
    result[bed] = {a: n / minutes for a, n in sent.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--base")
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    args = ap.parse_args()
    stop_on_sigterm()
    builds = ([("base", args.base)] if args.base else []) + [("build", args.build)]
    beds = [TestBed(TOPOLOGY, "h1-1", debug="ibsnmpd:mad",
                    binary=os.path.join(d, "ibsnmpd")) for _, d in builds]
    result = {}
    for bed in beds:
        bed.__enter__()
    try:
        time.sleep(20)  # discovery and the first sweeps
        threads = [threading.Thread(target=measure, args=(bed, args.minutes, result))
                   for bed in beds]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for bed in beds:
            bed.__exit__()
    print("%s: SMPs a minute to %s while its context's SMA-MIB is walked every 10 s "
          "(%.1f min; the fabric sweep's PortInfo included)" % (TOPOLOGY, SWITCH, args.minutes))
    attrs = sorted(set(a for bed in beds for a in result[bed]))
    print("  %-12s" % "attribute" + "".join("%10s" % name for name, _ in builds))
    for a in attrs:
        print("  %-12s" % ATTRS.get(a, "0x%04x" % a) +
              "".join("%10.0f" % result[bed].get(a, 0) for bed in beds))
    totals = [sum(result[bed].values()) for bed in beds]
    print("  %-12s" % "all" + "".join("%10.0f" % t for t in totals))
    if len(beds) == 2:
        print("  build / base: %.2f" % (totals[1] / totals[0]))


if __name__ == "__main__":
    main()
