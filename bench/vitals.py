#!/usr/bin/env python3
"""Benchmark: the vitals (NVIDIA's vendor MADs) on fabricsim's NDR fat tree,
against its peers in the same run:
- ibsnmpd's inventory (GeneralInfo, MGIR, MSGI, MTCAP, MFCR, MGPIR, PMLP,
  a module's PDDR; once a node) and its readings sweep (vitalsSensors: MGIR
  for the uptime, MTMP of each sensor, MFSM of each fan, FORE, PMAOS of
  each cage, PDDR of each module in), timed by ibsnmpd itself
  (ibsnmpdCacheLastDuration), and the MADs a readings sweep sends
  (ibsnmpdMadsSent across it: nothing else sweeps);
- bench-pipelined-pma in its vendor mode, a bare libibumad client, sending
  the same registers (the sweep's plan, read back from ibsnmpd's tables:
  every node read, sensor, fan, cage, and module in) one run a second after
  each sweep;
- `mstreg --get` of MTMP (Debian 13's mstflint through tests/tools/
  mstflint-run), one process per register, over N nodes, extrapolated to
  the sweep's registers;
- a manager's GETNEXT latency of ibsnmpdVitalsNodeTable through snmpd
  during the readings sweeps (their spans from ibsnmpdCacheRefreshes and
  ibsnmpdCacheLastDuration, to 0.1 s) and between them, and snmpd's own
  sysUpTime polled in the same seconds;
- the resident memory of ibsnmpd, and its heap in use (-Dibsnmpd:memory),
  with the vitals against a second run with vitalsEnable no on the same
  fabric: per node read and per module;
- one scrape of /metrics (prometheusListen): the whole of it, the vitals
  and modules collectors alone (collect[]), one shard of four, and the
  ports' collectors alone: series, size, time (the median of three);
then the medians and their ratios.

Usage: bench/vitals.py [--hosts 2000] [--radix 64] [--sweeps 5] [--lifetime 20]
                       [--mstreg-nodes 10] [--no-memory]
"""
import argparse
import os
import socket
import urllib.request
import re
import statistics
import subprocess
import threading
import time

from benchlib import (SMA_GROUPS, STATS, TOP, TestBed, bare_pipelined, env, get_latencies,
                      group_index, log_match, next_sweep, snmpget, stop_on_sigterm)

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
MIB = ".1.3.6.1.4.1.8072.9999.9999.117.1."
NODE_STATUS = MIB + "7.1.1.3"     # ibsnmpdVitalsNodeStatus (1 read)
TEMP_VALUE = MIB + "7.2.1.4"      # ibsnmpdTemperatureValue
FAN_RPM = MIB + "7.3.1.3"         # ibsnmpdFanRpm
MODULE_FIRST_PORT = MIB + "7.4.1.3"
MODULE_STATUS = MIB + "7.4.1.5"   # 1 plugged, 3 error
PM_LID = MIB + "3.1.1.4"          # ibsnmpdPmLid: a node's LID by its GUID and port
SYS_UPTIME = ".1.3.6.1.2.1.1.3.0"
MSTFLINT_RUN = os.path.join(TOP, "tests", "tools", "mstflint-run")
MSTFLINT_ROOT = "/var/cache/ibsnmpd-test/mstflint-4.31/root"

# The registers' IDs and their request images (index fields as
# src/vitals/vitals_decode.c sets them), hex
MGIR, MTMP, MFSM, FORE, PMAOS, PDDR = 0x9020, 0x900a, 0x9003, 0x9007, 0x5012, 0x5031


def image(dwords, size):
    """A register image from {dword offset: value}"""
    raw = bytearray(size)
    for off, value in dwords.items():
        raw[off:off + 4] = value.to_bytes(4, "big")
    return raw.hex()


def column(target, oid):
    """{index (a tuple of ints): value} of one column"""
    out = subprocess.run(["snmpbulkwalk", "-v2c", "-c", "public", "-On", "-Oq", "-Cr50",
                          "-t", "30", target, oid], capture_output=True, text=True,
                         env=env()).stdout
    rows = {}
    for line in out.splitlines():
        name, _, value = line.partition(" ")
        if name.startswith(oid + "."):
            rows[tuple(int(x) for x in name[len(oid) + 1:].split("."))] = value.strip('"')
    return rows


def sweep_plan(target):
    """The readings sweep's registers, "LID REGISTER HEX" lines, from the
    tables ibsnmpd serves: every node read (MGIR), every sensor (MTMP), fan
    (MFSM) and a node's fans' FORE, every cage (PMAOS) and module in (PDDR
    of its first port)"""
    lid = {}
    for index, value in column(target, PM_LID).items():
        lid.setdefault(index[:8], value)
    lines = []
    read = [g for g, s in column(target, NODE_STATUS).items() if s == "1"]
    for g in read:
        lines.append("%s %x %s" % (lid[g], MGIR, image({}, 160)))
    for index in column(target, TEMP_VALUE):
        lines.append("%s %x %s" % (lid[index[:8]], MTMP, image({0: index[8] - 1}, 32)))
    fans = column(target, FAN_RPM)
    for index in fans:
        t = index[8] - 1
        lines.append("%s %x %s" % (lid[index[:8]], MFSM,
                                   image({0: (t & 0xf) << 24 | (t >> 4) << 28}, 8)))
    for g in {i[:8] for i in fans}:
        lines.append("%s %x %s" % (lid[g], FORE, image({}, 12)))
    first_port = column(target, MODULE_FIRST_PORT)
    for index, status in column(target, MODULE_STATUS).items():
        g, m = index[:8], index[8] - 1
        lines.append("%s %x %s" % (lid[g], PMAOS, image({0: m << 16}, 16)))
        if status in ("1", "3"):
            p = int(first_port[index])
            lines.append("%s %x %s" % (lid[g], PDDR, image(
                {0: (p & 0xff) << 16 | (p >> 8) << 12 | 1 << 14, 4: 3 | 1 << 29}, 204)))
    return [line + "\n" for line in lines], len(read)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


METRICS_PORT = free_port()
SCRAPES = (("the whole fabric", ""), ("collect[]=vitals&collect[]=modules",
                                       "?collect[]=vitals&collect[]=modules"),
           ("shard=0&shards=4", "?shard=0&shards=4"),
           ("collect[]=counters&collect[]=links", "?collect[]=counters&collect[]=links"))


def scrape(query):
    """(series, octets, seconds) of one /metrics scrape, the median of three;
    read a megabyte at a time (a line at a time, Python would be the
    bottleneck), series counted as lines not starting with #"""
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics%s" % (METRICS_PORT, query),
                                    timeout=600) as r:
            octets = lines = comments = 0
            last = b"\n"
            while True:
                chunk = r.read(1 << 20)
                if not chunk:
                    break
                octets += len(chunk)
                lines += chunk.count(b"\n")
                comments += (last + chunk).count(b"\n#")
                last = chunk[-1:]
        runs.append((time.perf_counter() - started, lines - comments, octets))
    took, series, octets = sorted(runs)[1]
    return series, octets, took


def conf_of(args, vitals):
    # nothing else sweeps: no rediscovery (its counter and link sweeps
    # would fall into a readings sweep's count), no counter or link sweeps
    conf = ["nodeContextTypes none", "dcbxEnable no", "pmDiscoveryInterval 3600",
            "cacheLifetime pmCounters 3600",
            "cacheLifetime fabricPorts 3600", "cacheLifetime vitalsSensors %d" % args.lifetime,
            "prometheusListen 127.0.0.1:%d" % METRICS_PORT]
    conf += ["cacheLifetime %s 3600" % g for g in SMA_GROUPS]
    return conf + ([] if vitals else ["vitalsEnable no"])


def mstreg_seconds(bed, lids):
    """Seconds a `mstreg --get MTMP` process takes, over the LIDs given"""
    started = time.perf_counter()
    for lid in lids:
        out = subprocess.run(["env", "-C", bed.dir, "SIM_HOST=host-1",
                              "IBSIM_SOCKNAME=" + bed.ibsim_sockname, MSTFLINT_RUN, "mstreg",
                              "-d", "lid-%s" % lid, "--reg_name", "MTMP", "--get",
                              "--indexes", "sensor_index=0"], capture_output=True, text=True)
        if "temperature" not in out.stdout:
            raise SystemExit("mstreg: " + out.stdout + out.stderr)
    return (time.perf_counter() - started) / len(lids)


def heap_in_use(bed):
    """The heap in use after the last refresh (-Dibsnmpd:memory), octets"""
    found = re.findall(r"ibsnmpd:memory: (\d+) octets in use after",
                       open(bed.path("ibsnmpd.log"), errors="replace").read())
    return int(found[-1]) if found else 0


def memory_without_vitals(args):
    """(resident KiB, heap in use) of ibsnmpd with vitalsEnable no, after
    the same time"""
    with TestBed(None, None, conf=conf_of(args, False), big={"hosts": args.hosts,
                 "radix": args.radix}, binary=os.path.join(BUILD, "ibsnmpd"),
                 debug="ibsnmpd:memory") as bed:
        log_match(bed.path("ibsnmpd.log"), r"subnet discovered", 900)
        time.sleep(args.lifetime * 2)
        return rss_kib(bed.pid_of("ibsnmpd")), heap_in_use(bed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=2000)
    ap.add_argument("--radix", type=int, default=64)
    ap.add_argument("--sweeps", type=int, default=5)
    ap.add_argument("--lifetime", type=int, default=20,
                    help="seconds between readings sweeps: the bare client's run fits between")
    ap.add_argument("--mstreg-nodes", type=int, default=10)
    ap.add_argument("--no-memory", action="store_true")
    args = ap.parse_args()
    stop_on_sigterm()

    with TestBed(None, None, conf=conf_of(args, True), big={"hosts": args.hosts,
                 "radix": args.radix}, binary=os.path.join(BUILD, "ibsnmpd"),
                 debug="ibsnmpd:memory") as bed:
        target = bed.target
        m = log_match(bed.path("ibsnmpd.log"),
                      r"subnet discovered: (\d+) nodes, (\d+) ports in ([\d.]+) s", 900)
        nodes = int(m.group(1))
        inv, rd = group_index(target, "vitalsInventory"), group_index(target, "vitalsSensors")
        if snmpget(target, "%s.6.1.5.%d" % (STATS, inv)) == 0:  # not yet done
            next_sweep(target, inv)
        inventory_s = snmpget(target, "%s.6.1.7.%d" % (STATS, inv)) / 1000.0
        next_sweep(target, rd)  # the first after the inventory
        plan, read = sweep_plan(target)
        counts = {}
        for line in plan:
            reg = int(line.split()[1], 16)
            counts[reg] = counts.get(reg, 0) + 1
        modules = counts.get(PDDR, 0)
        sweeps, mads, bare = [], [], []
        for _ in range(args.sweeps):
            took, sent = next_sweep(target, rd)
            sweeps.append(took)
            mads.append(sent)
            time.sleep(1)
            t, answered, asked = bare_pipelined(bed, None, runs=1, pairs=plan, attrs="vendor")[0]
            if answered < asked:
                raise SystemExit("bare client: %d of %d answered" % (answered, asked))
            bare.append(t)
        # a manager polling ibsnmpd and snmpd's own object, side by side,
        # while the readings sweep every --lifetime s; the sweeps' spans from
        # ibsnmpdCacheRefreshes and ibsnmpdCacheLastDuration
        span = max(3 * args.lifetime, 10)
        polled, spans, done = {}, [], threading.Event()

        def poll(name, oid):
            at = []
            lat, lost = get_latencies(target, oid, span, interval=0.02, sent_at=at)
            polled[name] = (list(zip(at, lat)), lost)

        def watch():
            refreshes = "%s.6.1.5.%d" % (STATS, rd)
            seen = snmpget(target, refreshes)
            while not done.is_set():
                time.sleep(0.1)
                n = snmpget(target, refreshes)
                if n > seen:
                    seen, end = n, time.monotonic()
                    spans.append((end - snmpget(target, "%s.6.1.7.%d" % (STATS, rd)) / 1000.0
                                  - 0.1, end))
        threads = [threading.Thread(target=poll, args=a)
                   for a in (("ibsnmpd", MIB + "7.1.1.2"), ("snmpd", SYS_UPTIME))]
        watcher = threading.Thread(target=watch)
        watcher.start()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        done.set()
        watcher.join()
        lids = sorted({line.split()[0] for line in plan}, key=int)[:args.mstreg_nodes]
        mstreg = mstreg_seconds(bed, lids) if os.path.isdir(MSTFLINT_ROOT) and lids else None
        rss_with, heap_with = rss_kib(bed.pid_of("ibsnmpd")), heap_in_use(bed)
        scrapes = [(name, scrape(query)) for name, query in SCRAPES]  # after: they take memory
    rss_without, heap_without = (None, 0) if args.no_memory else memory_without_vitals(args)

    sweep, peer, per_sweep = statistics.median(sweeps), statistics.median(bare), \
        statistics.median(mads)
    print("fabric: fabricsim fat tree, %d hosts, radix %d, NDR: %d nodes; vitals read on %d, "
          "modules in: %d" % (args.hosts, args.radix, nodes, read, modules))
    print("inventory (once a node): %.3f s" % inventory_s)
    print("registers per readings sweep (the plan): %d (%s)" % (len(plan), ", ".join(
        "%s %d" % (name, counts.get(reg, 0)) for name, reg in (
            ("MGIR", MGIR), ("MTMP", MTMP), ("MFSM", MFSM), ("FORE", FORE), ("PMAOS", PMAOS),
            ("PDDR", PDDR)))))
    print("MADs per readings sweep (ibsnmpdMadsSent): median %d (%s)"
          % (per_sweep, ", ".join(str(x) for x in mads)))
    print("ibsnmpd readings sweep: median %.3f s (%s)"
          % (sweep, ", ".join("%.3f" % x for x in sweeps)))
    print("bare pipelined client, the same registers: median %.3f s (%s)"
          % (peer, ", ".join("%.3f" % x for x in bare)))
    if mstreg:
        print("mstreg --get MTMP: %.2f s a register (%d nodes); extrapolated to the sweep's "
              "%d registers: %.0f s" % (mstreg, len(lids), len(plan), mstreg * len(plan)))
    def sweeping(t):
        return any(a <= t <= b for a, b in spans)

    def latency(label, samples):
        lat = sorted(x for _, x in samples)
        if not lat:
            print("GETNEXT latency of %s: no sample" % label)
            return None
        print("GETNEXT latency of %s: %d answers, median %.2f ms, p99 %.2f ms, max %.2f ms" % (
            label, len(lat), 1000 * statistics.median(lat),
            1000 * lat[int(0.99 * (len(lat) - 1))], 1000 * lat[-1]))
        return statistics.median(lat)
    print("polled %d s (a GETNEXT every 20 ms each), %d readings sweeps in it (%.1f s sweeping); "
          "lost: ibsnmpd %d, snmpd %d" % (span, len(spans), sum(b - a for a, b in spans),
                                          polled["ibsnmpd"][1], polled["snmpd"][1]))
    during = latency("ibsnmpdVitalsNodeTable during the sweeps",
                     [s for s in polled["ibsnmpd"][0] if sweeping(s[0])])
    between = latency("ibsnmpdVitalsNodeTable between them",
                      [s for s in polled["ibsnmpd"][0] if not sweeping(s[0])])
    own = latency("snmpd's sysUpTime during the sweeps",
                  [s for s in polled["snmpd"][0] if sweeping(s[0])])
    if rss_without:
        extra = rss_with - rss_without
        print("resident memory: %d KiB with the vitals, %d KiB without (vitalsEnable no): "
              "%d KiB more, %.2f KiB a node read, %.2f KiB a module" % (
                  rss_with, rss_without, extra, extra / max(1, read), extra / max(1, modules)))
        live = (heap_with - heap_without) / 1024
        print("heap in use after the last refresh (-Dibsnmpd:memory): %d KiB with, %d KiB "
              "without: %d KiB more, %.2f KiB a module" % (
                  heap_with / 1024, heap_without / 1024, live, live / max(1, modules)))
    for name, (series, octets, took) in scrapes:
        print("scrape of /metrics, %s: %d series, %.1f MB, %.3f s" % (
            name, series, octets / 1e6, took))
    print("ratio MADs per sweep / registers in the plan: %.3f" % (per_sweep / len(plan)))
    print("ratio series of the hardware collectors / the whole scrape: %.2f"
          % (scrapes[1][1][0] / scrapes[0][1][0]))
    print("ratio ibsnmpd sweep / bare client (same registers): %.2f" % (sweep / peer))
    if mstreg:
        print("ratio ibsnmpd sweep / mstreg loop (extrapolated): %.5f"
              % (sweep / (mstreg * len(plan))))
    if during and between and own:
        print("ratio GETNEXT latency during / between the sweeps: %.2f" % (during / between))
        print("ratio GETNEXT latency ibsnmpd / snmpd's own, during the sweeps: %.2f"
              % (during / own))


if __name__ == "__main__":
    main()
