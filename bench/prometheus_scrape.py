#!/usr/bin/env python3
"""Benchmark: one Prometheus scrape of the whole fabric, three ways in one
run: ibsnmpd's own /metrics (prometheusListen), and Debian's snmp_exporter
with the project's module (conf/prometheus/snmp.yml, the two per-port
tables) against ibsnmpd in direct mode and through snmpd (AgentX).

1. tests/topologies/fattree-612.net (1,872 ports, ibsim): ibsnmpd in direct
   mode with prometheusListen on h1-1 and, beside it, a second ibsnmpd as
   snmpd's AgentX subagent on h1-2; sweeps set to an hour (the scrapes read
   a still cache). The median of --runs scrapes each way: time, series,
   octets. Aim: the native scrape 10 times faster than snmp_exporter in
   direct mode.
2. fabricsim's radix-64 NDR fat tree of --hosts hosts (40,000 by default:
   267,456 ports), the same two daemons (sweeping as they do by default):
   the native scrape (median of --runs; aim: under 1 s), with the GETNEXT
   latency of a manager polling ibsnmpd meanwhile against the same polling
   without scrapes; then snmp_exporter once each way, stopped if it grows
   past --exporter-rss-gib (8) or takes over --exporter-minutes (15): at
   40,000 hosts it holds the whole walk in memory (it passed 18 GiB before
   it was stopped in one try); --no-big-exporter leaves them out.

Scrapes are timed by curl (its time_total: the request to the last octet,
the body thrown away; its series counted in one more scrape kept on disk).
Each way is asked as Prometheus asks (OpenMetrics first for the native
endpoint).

Usage: bench/prometheus_scrape.py [--runs 5] [--hosts 40000] [--no-big-exporter]
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

from benchlib import (PM_TABLE, TOP, TestBed, get_latencies, log_match, spawn_subagent,
                      stop_on_sigterm, walk)

EXPORTER = shutil.which("prometheus-snmp-exporter")
BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
TABLES = (".1.3.6.1.4.1.8072.9999.9999.117.1.3.1", ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1")
ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
          "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(url, accept=None, timeout=3600, keep=None):
    """(seconds, series, octets) of one GET of url, by curl (a process of its
    own, as Prometheus is: a Python thread here would hold the GIL while it
    gathers a gigabyte and stall the latency probe); keep: a path for the
    body (the series are counted there), else it goes to /dev/null."""
    out = subprocess.run(["curl", "-sS", "--max-time", str(timeout), "-o", keep or "/dev/null",
                          "-w", "%{http_code} %{time_total} %{size_download}"] +
                         (["-H", "Accept: " + accept] if accept else []) + [url],
                         capture_output=True, text=True)
    code, took, size = out.stdout.split()
    if out.returncode or code != "200":
        sys.exit("scrape of %s: %s %s" % (url, code, out.stderr))
    series = 0
    if keep:
        # every line ends in a newline; comments (HELP, TYPE, EOF) begin with #
        with open(keep, "rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                series += block.count(b"\n")
        series -= comment_lines(keep)
    return float(took), series, int(size)


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def guarded_scrape(url, exporter, rss_gib, minutes, directory):
    """One scrape through snmp_exporter that may not finish on a big fabric:
    (seconds, series, octets), or (None, most RSS in KiB, seconds) when the
    exporter grew past rss_gib or took longer than `minutes` (it is then
    stopped: the machine has 24 GiB)."""
    body = os.path.join(directory, "scrape.txt")
    started = time.monotonic()
    curl = subprocess.Popen(["curl", "-sS", "-o", body, "-w", "%{http_code} %{time_total} "
                             "%{size_download}", url], stdout=subprocess.PIPE, text=True)
    most = 0
    while curl.poll() is None:
        most = max(most, rss_kib(exporter.pid))
        if most > rss_gib * 1024 * 1024 or time.monotonic() - started > 60 * minutes:
            exporter.kill()
            curl.wait()
            return None, most, time.monotonic() - started
        time.sleep(0.5)
    code, took, size = curl.stdout.read().split()
    if code != "200":
        sys.exit("scrape of %s: %s" % (url, code))
    series = 0
    with open(body, "rb") as f:
        for block in iter(lambda: f.read(1 << 24), b""):
            series += block.count(b"\n")
    series -= comment_lines(body)
    os.unlink(body)
    return float(took), series, int(size)


def comment_lines(path):
    out = subprocess.run(["grep", "-c", "^#", path], capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def median_scrapes(url, runs, directory, accept=None):
    """(median seconds, series, octets) of `runs` scrapes after a warm-up."""
    body = os.path.join(directory, "scrape.txt")
    _, series, _ = scrape(url, accept, keep=body)
    os.unlink(body)
    got = [scrape(url, accept) for _ in range(runs)]
    return statistics.median(t for t, _, _ in got), series, got[0][2]


def exporter_url(port, target):
    return "http://127.0.0.1:%d/snmp?module=ibsnmpd&target=%s" % (port, target.replace("udp:", ""))


def wait_rows(target, ports, seconds):
    """Until both tables have a row for every port (the caches filled)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if walk(target, TABLES[0] + ".1.4")[0] >= ports and \
           walk(target, TABLES[1] + ".1.6")[0] >= ports:
            return
        time.sleep(2)
    sys.exit("%s: the tables did not fill in %d s" % (target, seconds))


def start_exporter(directory):
    port = free_port()
    proc = subprocess.Popen(
        [EXPORTER, "--config.file=" + os.path.join(TOP, "conf", "prometheus", "snmp.yml"),
         "--web.listen-address=127.0.0.1:%d" % port],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=directory)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    return proc, port


def ibsim_run(runs):
    still = ["cacheLifetime pmCounters 3600", "cacheLifetime fabricPorts 3600"]
    port = free_port()
    with TestBed("fattree-612.net", "h1-1", direct=True, binary=os.path.join(BUILD, "ibsnmpd"),
                 conf=still + ["prometheusListen 127.0.0.1:%d" % port]) as bed:
        spawn_subagent(bed, "h1-2", still)
        direct, agentx = bed.env["SNMP_DIRECT_TARGET"], bed.target
        for target in (direct, agentx):
            wait_rows(target, 1872, 240)
        time.sleep(1)
        proc, eport = start_exporter(bed.dir)
        try:
            native = median_scrapes("http://127.0.0.1:%d/metrics" % port, runs, bed.dir, ACCEPT)
            ex_direct = median_scrapes(exporter_url(eport, direct), runs, bed.dir)
            ex_agentx = median_scrapes(exporter_url(eport, agentx), runs, bed.dir)
        finally:
            proc.terminate()
            proc.wait()
    print("fattree-612.net (1,872 ports, ibsim): one scrape of the whole fabric, median of %d"
          % runs)
    report(native, ex_direct, ex_agentx)


def report(native, ex_direct, ex_agentx):
    print("  native /metrics            %8.3f s  %9d series  %11d octets" % native)
    for name, got in (("snmp_exporter, direct", ex_direct), ("snmp_exporter, AgentX", ex_agentx)):
        if not got:
            print("  %-26s not run (--no-big-exporter)" % name)
        elif got[0] is None:
            print("  %-26s did not finish: stopped after %.0f s at %.1f GiB resident"
                  % (name, got[2], got[1] / 1048576.0))
        else:
            print("  %-26s %8.3f s  %9d series  %11d octets   / native %.1f"
                  % (name, got[0], got[1], got[2], got[0] / native[0]))


def latencies_during(target, url, seconds):
    """GETNEXT latencies of a manager polling target for `seconds` while
    another thread scrapes url again and again; (latencies, lost, scrapes)."""
    stop, done = threading.Event(), []

    def scraping():
        while not stop.is_set():
            done.append(scrape(url, ACCEPT))
    t = threading.Thread(target=scraping)
    t.start()
    try:
        lat, lost = get_latencies(target, PM_TABLE, seconds)
    finally:
        stop.set()
        t.join()
    return lat, lost, done


def p(values, q):
    return sorted(values)[int(q * (len(values) - 1))] * 1000


def big_run(hosts, runs, exporters, rss_gib, minutes):
    port = free_port()
    with TestBed(None, None, direct=True, big={"hosts": hosts},
                 binary=os.path.join(BUILD, "ibsnmpd"),
                 conf=["prometheusListen 127.0.0.1:%d" % port]) as bed:
        direct = bed.env["SNMP_DIRECT_TARGET"]
        url = "http://127.0.0.1:%d/metrics" % port
        m = log_match(os.path.join(bed.dir, "ibsnmpd.log"),
                      r"subnet discovered: \d+ nodes, (\d+) ports", 900)
        ports = int(m.group(1))
        wait_rows(direct, ports, 900)  # the first sweeps of both kinds
        time.sleep(20)
        native = median_scrapes(url, runs, bed.dir, ACCEPT)
        quiet, quiet_lost = get_latencies(direct, PM_TABLE, 20)
        busy, busy_lost, done = latencies_during(direct, url, max(20, 6 * native[0]))
        ex_direct = ex_agentx = None
        if exporters:
            spawn_subagent(bed, bed.node, [])
            wait_rows(direct, ports, 600)
            wait_rows(bed.target, ports, 1800)
            for name, target in (("direct", direct), ("agentx", bed.target)):
                proc, eport = start_exporter(bed.dir)  # again after one was stopped
                try:
                    got = guarded_scrape(exporter_url(eport, target), proc, rss_gib, minutes,
                                         bed.dir)
                finally:
                    proc.terminate()
                    proc.wait()
                if name == "direct":
                    ex_direct = got
                else:
                    ex_agentx = got
    print("fabricsim fat tree of %d hosts (%d ports): one scrape of the whole fabric (native: "
          "median of %d; snmp_exporter: one each)" % (hosts, ports, runs))
    report(native, ex_direct, ex_agentx)
    print("  GETNEXT latency of a manager polling ibsnmpd (direct mode), ms: median / p95 / max")
    print("    without scrapes          %6.1f / %6.1f / %6.1f  (%d requests, %d unanswered)"
          % (p(quiet, 0.5), p(quiet, 0.95), max(quiet) * 1000, len(quiet), quiet_lost))
    print("    while scraping           %6.1f / %6.1f / %6.1f  (%d requests, %d unanswered; "
          "%d scrapes meanwhile)" % (p(busy, 0.5), p(busy, 0.95), max(busy) * 1000, len(busy),
                                     busy_lost, len(done)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--hosts", type=int, default=40000)
    ap.add_argument("--no-big-exporter", action="store_true",
                    help="leave snmp_exporter out at the big fabric (it takes minutes)")
    ap.add_argument("--exporter-rss-gib", type=float, default=8,
                    help="stop snmp_exporter past this resident size (big fabric)")
    ap.add_argument("--exporter-minutes", type=float, default=15,
                    help="stop snmp_exporter's scrape after this long (big fabric)")
    ap.add_argument("--only", choices=("ibsim", "big"))
    args = ap.parse_args()
    if not EXPORTER:
        sys.exit("prometheus-snmp-exporter is not installed")
    stop_on_sigterm()
    if args.only != "big":
        ibsim_run(args.runs)
    if args.only != "ibsim":
        big_run(args.hosts, args.runs, not args.no_big_exporter, args.exporter_rss_gib,
                args.exporter_minutes)


if __name__ == "__main__":
    main()
