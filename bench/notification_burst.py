#!/usr/bin/env python3
"""A burst of notifications through the real snmpd, with figures: on a rail
bed of 64 servers, a rail dead and 384 modules out at once (about 2,000
notifications of five families), while a manager GETs and walks
(tests/simfabric/burst.py says what and how). Prints what ibsnmpd sent and
snmptrapd logged, by family, how long they took, the manager's slowest GET
and ibsnmpd's longest main-loop pass; --runs N repeats it on a new bed and
prints the medians.

Usage: bench/notification_burst.py [--runs N] [--rate PER_SECOND] [--json FILE]
(--rate: ibsnmpd's notificationRate, 0 for none; the default is its own)
Environment: IBSNMPD_BIN (else build/ibsnmpd), SIM_ISSM_SHIM (else under
build/tests)."""
import argparse
import json
import os
import statistics
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from simfabric import burst  # noqa: E402
from simfabric.bed import stop_all_on_sigterm  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--rate", type=int)
    ap.add_argument("--json")
    args = ap.parse_args()
    stop_all_on_sigterm()
    results = []
    for k in range(args.runs):
        conf = [] if args.rate is None else ["notificationRate %d" % args.rate]
        r = burst.run_burst(progress=lambda t: print(t, file=sys.stderr), extra_conf=conf)
        print("run %d:" % (k + 1))
        burst.print_result(r)
        results.append(r)
    if args.runs > 1:
        def med(key):
            return statistics.median(r[key] for r in results if r[key] is not None)
        print("median of %d: %d notifications, %.1f s first to last, slowest GET %d ms, "
              "longest pass %d ms" % (args.runs, med("sent_total"), med("spread_s"),
                                      med("longest_get_ms"), med("longest_pass_ms")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
