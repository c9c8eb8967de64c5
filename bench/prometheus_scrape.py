#!/usr/bin/env python3
"""Benchmark: one Prometheus scrape of the whole fabric through Debian's
snmp_exporter with the project's module (conf/prometheus/snmp.yml), in both
agent modes, against a bulk walk of the same two tables in the same run.

tests/topologies/fattree-612.net (1,872 ports): ibsnmpd in direct mode on
h1-1 and, beside it, a second ibsnmpd as snmpd's AgentX subagent on h1-2
(benchlib.spawn_subagent); sweeps set to an hour so that the scrapes read a
still cache. For each mode: the median time of --runs scrapes of
/snmp?module=ibsnmpd (the series they return), and of snmpbulkwalk -Cr50 of
ibsnmpdPmPortTable and ibsnmpdFabricPortTable (the exporter's own walk is
GETBULK with 25 repetitions). Prints the ratios scrape / walk.

Usage: bench/prometheus_scrape.py [--runs 5]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

from benchlib import TOP, TestBed, spawn_subagent, stop_on_sigterm, walk

TOPOLOGY = "fattree-612.net"
TABLES = (".1.3.6.1.4.1.8072.9999.9999.117.1.3.1", ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1")
EXPORTER = shutil.which("prometheus-snmp-exporter")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, target):
    started = time.perf_counter()
    with urllib.request.urlopen("%s/snmp?module=ibsnmpd&target=%s" % (url, target),
                                timeout=120) as r:
        text = r.read().decode()
    took = time.perf_counter() - started
    return sum(1 for l in text.splitlines() if l.startswith("ibsnmpd")), took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if not EXPORTER:
        sys.exit("prometheus-snmp-exporter is not installed")
    stop_on_sigterm()
    still = ["cacheLifetime pmCounters 3600", "cacheLifetime fabricPorts 3600"]
    with TestBed(TOPOLOGY, "h1-1", conf=still, direct=True) as bed:
        spawn_subagent(bed, "h1-2", still)
        port = free_port()
        exporter = subprocess.Popen(
            [EXPORTER, "--config.file=" + os.path.join(TOP, "conf", "prometheus", "snmp.yml"),
             "--web.listen-address=127.0.0.1:%d" % port],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=bed.dir)
        try:
            url = "http://127.0.0.1:%d" % port
            modes = (("direct", bed.env["SNMP_DIRECT_TARGET"]), ("AgentX", bed.target))
            for _, target in modes:  # both caches filled: every port has a row
                for _ in range(240):
                    if walk(target, TABLES[0] + ".1.4")[0] >= 1872 and \
                       walk(target, TABLES[1] + ".1.6")[0] >= 1872:
                        break
                    time.sleep(0.5)
            time.sleep(1)
            print("%s: one scrape of module ibsnmpd (ibsnmpdPmPortTable + ibsnmpdFabricPortTable),"
                  " median of %d" % (TOPOLOGY, args.runs))
            for name, target in modes:
                host = target.replace("udp:", "")
                scrape(url, host)  # warm-up
                scrapes = [scrape(url, host) for _ in range(args.runs)]
                walks = [sum(walk(target, t)[1] for t in TABLES) for _ in range(args.runs)]
                s, w = statistics.median(t for _, t in scrapes), statistics.median(walks)
                print("  %-6s  scrape %.2f s (%d series); snmpbulkwalk of both tables %.2f s; "
                      "scrape / walk %.2f" % (name, s, scrapes[0][0], w, s / w))
        finally:
            exporter.terminate()
            exporter.wait()


if __name__ == "__main__":
    main()
