#!/usr/bin/env python3
"""DCBX: ibsnmpd against a fake kernel (tests/integration/fake_dcbnl.py) with
many DCB ports, measured in the same run against snmpd's own table.

Prints: the poll cycle of N ports (ibsnmpdCacheLastDuration of the "dcbx"
group: link dump + GSTATE, GNUMTCS, CEE_GET per port), a bulk walk of
LLDP-EXT-DCBX-MIB in varbinds/s against snmpd's native nsExtendOutLine table
of the same size (ratio), the median snmpget of one DCBX object against
snmpd's sysUpTime, and the median SET (PFC of one priority: PFC_SCFG +
SET_ALL to the fake kernel, delegated) against that snmpget.

    python3 bench/dcbx_walk.py [--ports 64] [--repeat 5]"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "integration"))
import fake_dcbnl as K  # noqa: E402
from benchlib import TestBed, env  # noqa: E402

DCBX = ".1.0.8802.1.1.2.1.5.6945"
EXTEND_LINES = ".1.3.6.1.4.1.8072.1.3.2.4.1.2"
CACHE_TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1"
SYS_UPTIME = ".1.3.6.1.2.1.1.3.0"


def run(*cmd):
    return subprocess.run(list(cmd), capture_output=True, text=True, env=env())


def walk(target, oid):
    started = time.perf_counter()
    out = run("snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Cr50", "-t", "10", target, oid)
    took = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit("walk failed: " + out.stderr)
    return out.stdout.count("\n"), took


def median_time(count, *cmd):
    times = []
    for _ in range(count):
        started = time.perf_counter()
        out = run(*cmd)
        times.append(time.perf_counter() - started)
        if out.returncode != 0:
            sys.exit("%s failed: %s" % (cmd[0], out.stderr))
    return statistics.median(times)


def dcbx_cache_row(target):
    out = run("snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Oqv", target,
              CACHE_TABLE + ".2").stdout.split()
    return out.index('"dcbx"') + 1 if '"dcbx"' in out else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ports", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="ibsnmpd-bench-dcb.")
    kernel = K.FakeKernel(os.path.join(tmp, "dcbnl.sock"))
    kernel.add(K.Port(1, "lo", dcb=False))
    for i in range(args.ports):
        kernel.add(K.Port(10 + i, "eth%d" % i))
    kernel.start()
    rows_file = os.path.join(tmp, "rows")
    open(rows_file, "w").close()
    try:
        with TestBed("switch-3ca.net", "hca1",
                     conf=["dcbxSocket " + kernel.path, "cacheLifetime dcbx 2"],
                     snmpd_conf=["extend benchrows /bin/cat %s" % rows_file]) as bed:
            t = bed.target
            deadline = time.time() + 60
            while walk(t, DCBX + ".1.1.1.2")[0] < args.ports and time.time() < deadline:
                time.sleep(0.5)
            n, _ = walk(t, DCBX)
            with open(rows_file, "w") as f:
                f.writelines("r%d\n" % i for i in range(n))
            walk(t, EXTEND_LINES)  # warm-up: runs the command
            row = dcbx_cache_row(t)
            durations = []
            for _ in range(args.repeat):
                time.sleep(2.2)
                out = run("snmpget", "-v2c", "-c", "public", "-Oqv", t,
                          "%s.7.%d" % (CACHE_TABLE, row))
                durations.append(int(out.stdout.split()[0]))
            ours = [walk(t, DCBX) for _ in range(args.repeat)]
            native = [walk(t, EXTEND_LINES) for _ in range(args.repeat)]
            get_ours = median_time(args.repeat * 20, "snmpget", "-v2c", "-c", "public", t,
                                   "%s.1.1.1.2.10" % DCBX)
            get_native = median_time(args.repeat * 20, "snmpget", "-v2c", "-c", "public", t,
                                     SYS_UPTIME)
            rw = bed.env["SNMP_RW_COMMUNITY"]
            sets = []
            for i in range(args.repeat * 4):
                started = time.perf_counter()
                out = run("snmpset", "-v2c", "-c", rw, t, "%s.2.3.2.1.2.10.%d" % (DCBX, i % 8),
                          "i", str(1 + i % 2))
                sets.append(time.perf_counter() - started)
                if out.returncode != 0:
                    sys.exit("snmpset failed: " + out.stderr)
    finally:
        kernel.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    ours_n, ours_t = ours[0][0], statistics.median(x for _, x in ours)
    nat_n, nat_t = native[0][0], statistics.median(x for _, x in native)
    print("fake kernel with %d DCB ports (and lo, which refuses dcbnl)" % args.ports)
    print("poll cycle (link dump + 3 requests per port): median %d ms over %d cycles"
          % (statistics.median(durations), len(durations)))
    print("ibsnmpd LLDP-EXT-DCBX-MIB walk: %d varbinds in %.3f s = %.0f varbinds/s"
          % (ours_n, ours_t, ours_n / ours_t))
    print("snmpd native nsExtendOutLine walk: %d varbinds in %.3f s = %.0f varbinds/s"
          % (nat_n, nat_t, nat_n / nat_t))
    print("ratio ibsnmpd / snmpd native: %.2f" % ((ours_n / ours_t) / (nat_n / nat_t)))
    print("snmpget: DCBX object %.2f ms, snmpd's sysUpTime %.2f ms (median, process start "
          "included); ratio %.2f" % (get_ours * 1000, get_native * 1000, get_ours / get_native))
    print("snmpset of one PFC priority (PFC_SCFG + SET_ALL): median %.2f ms; ratio to the "
          "snmpget of sysUpTime %.2f" % (statistics.median(sets) * 1000,
                                         statistics.median(sets) / get_native))


if __name__ == "__main__":
    main()
