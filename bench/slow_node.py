#!/usr/bin/env python3
"""A slow or lossy node is not a changed fabric, with figures: on a
fabricsim fat tree (2,000 hosts by default), one leaf switch loses 30% of
the MADs to it, answers 500 ms +/- 200 ms late, answers at most 200 MADs a
second, and then every node answers late together (the simulator stopped
3 s of every 10 s), each held --hold seconds (300 by default) with
ibsnmpd's defaults; with --link-down (the default), a host of that leaf
has its link taken down in the middle of each fault and brought back at
its end. Prints, per fault, the notifications snmptrapd logged by name,
the alarm rows that came, the share of the leaf's ports read fresh in each
counter sweep, and how often the host's link was told down and up
(tests/simfabric/slow.py says how).

Usage: bench/slow_node.py [--hosts N] [--radix R] [--hold S] [--only FAULT,...]
                          [--no-link-down] [--json FILE]
Environment: IBSNMPD_BIN (else build/ibsnmpd), FABRICSIM."""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from simfabric import slow  # noqa: E402
from simfabric.bed import stop_all_on_sigterm  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--hold", type=float, default=300)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-link-down", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    stop_all_on_sigterm()
    faults = [f for f in args.only.split(",") if f] or list(slow.FAULTS)
    results, reports = slow.run(args.hosts, args.radix, faults, args.hold,
                                link_down=not args.no_link_down,
                                progress=lambda t: print(t, file=sys.stderr))
    slow.print_results(results)
    for r in results:
        false = slow.false_notifications(r)
        print("%s: %s" % (r["fault"], "no false notification" if not false else
                          "FALSE: %s" % false))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if reports:
        sys.exit("sanitizer reports from ibsnmpd:\n" + "\n".join(reports))


if __name__ == "__main__":
    main()
