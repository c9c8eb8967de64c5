#!/usr/bin/env python3
"""Benchmark: the subnet read from the SM's SA (discoverySource sa, and what
ibsnmpd does without the key on a protected fabric) against the discovery
by directed route (libibnetdisc, discoverySource smp). On fabricsim's fat
tree of HOSTS hosts (radix 64, NDR), the discovery helper (ibsnmpd-discover,
as the daemon runs it) is run RUNS times each way from host-1: its time
(median) and what it cost the fabric, fabricsim's count of SMPs and SA MADs
(RMPP segments) answered meanwhile. The two outputs are compared line for
line: the same nodes, ports, links, LIDs and routes.

Usage: bench/sa_view.py [--hosts 2000] [--runs 3]
"""
import argparse
import os
import statistics
import subprocess
import time

from benchlib import TestBed, fabricsim_answered, stop_on_sigterm

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "build"))
HELPER = os.path.join(BUILD, "ibsnmpd-discover")


def discover(bed, *mode):
    """(seconds, SMPs, SA MADs, the lines but the timing)"""
    before = fabricsim_answered(bed)
    t = time.monotonic()
    out = subprocess.run(bed.command(HELPER, *mode, "ibsim0", "1", "1000", "2", node="host-1"),
                         capture_output=True, text=True, timeout=1200)
    secs = time.monotonic() - t
    if out.returncode:
        raise SystemExit("the helper failed: %s" % out.stderr[-500:])
    after = fabricsim_answered(bed)
    lines = sorted(l for l in out.stdout.splitlines()
                   if not l.startswith(("done ", "source ", "pinfo ")))
    return secs, after["smp"] - before["smp"], after["sa"] - before["sa"], lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    stop_on_sigterm()
    # ibsnmpd discovers once and then keeps quiet: the counts are the helper's
    conf = ["cacheLifetime pmCounters 3600", "cacheLifetime fabricPorts 3600",
            "pmDiscoveryInterval 86400", "nodeContextTypes none", "dcbxEnable no",
            "vitalsEnable no"]
    with TestBed(None, None, conf=conf, binary=os.path.join(BUILD, "ibsnmpd"),
                 big={"hosts": args.hosts}) as bed:
        log = os.path.join(bed.dir, "ibsnmpd.log")
        for _ in range(1200):
            if "subnet discovered" in open(log).read():
                break
            time.sleep(1)
        time.sleep(2)
        res = {"smp": [], "sa": []}
        for _ in range(args.runs):
            res["smp"].append(discover(bed))
            res["sa"].append(discover(bed, "--sa"))
        same = res["smp"][0][3] == res["sa"][0][3]
        print("fabricsim fat tree, %d hosts: %d lines each (nodes, ports, routes); "
              "the SA's view %s the directed-route discovery's" % (
                  args.hosts, len(res["smp"][0][3]), "equals" if same else "DIFFERS FROM"))
        print("%-26s %10s %10s %12s" % ("discovery", "median s", "SMPs", "SA MADs"))
        for name, key in (("by directed route (smp)", "smp"), ("from the SA (sa)", "sa")):
            r = res[key]
            print("%-26s %10.2f %10d %12d" % (name, statistics.median(x[0] for x in r),
                                              r[0][1], r[0][2]))
        print("ratio sa / smp: time %.2f, SMPs %d against %d" % (
            statistics.median(x[0] for x in res["sa"]) /
            statistics.median(x[0] for x in res["smp"]), res["sa"][0][1], res["smp"][0][1]))
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
