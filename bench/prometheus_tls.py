#!/usr/bin/env python3
"""Benchmark: a scrape of the whole fabric's /metrics over TLS with basic
auth (prometheusWebConfig) against plain HTTP, on the same daemon and the
same snapshots, at each --hosts (fabricsim's radix-64 NDR fat tree; 2,000
and 40,000 by default).

One ibsnmpd in direct mode with prometheusListen; its web configuration is
switched between a TLS one (an EC P-256 certificate made by openssl, a
bcrypt hash made by htpasswd, TLS 1.2 and 1.3 as Prometheus negotiates:
1.3) and none, by SIGHUP, scrape by scrape (plain, TLS, plain, TLS...), so
that both see the same load. Each scrape is timed by curl (time_total: the
request to the last octet, the body thrown away) asking for OpenMetrics as
Prometheus does; the first TLS scrape (bcrypt's one check, then remembered)
is left out. Prints the medians and their ratio (aim: TLS at most 1.2 times
plain), and the CPU time ibsnmpd spent during each scrape (/proc), which the
machine's noise moves less than the wall time.

Usage: bench/prometheus_tls.py [--hosts 2000 40000] [--runs 7]
"""
import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time

from benchlib import TOP, TestBed, log_match, stop_on_sigterm

BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
          "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
USER, PASSWORD = "prometheus", "bench-password"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_tls(d):
    """A self-signed certificate for 127.0.0.1, and the web configuration
    files: TLS with basic auth, and empty (plain HTTP)"""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-keyout", "web.key",
                    "-out", "web.crt", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], cwd=d, check=True, capture_output=True)
    os.chmod(os.path.join(d, "web.key"), 0o600)
    digest = subprocess.run(["htpasswd", "-nbBC", "10", "", PASSWORD], check=True,
                            capture_output=True, text=True).stdout.strip().lstrip(":")
    with open(os.path.join(d, "tls.yml"), "w") as f:
        f.write("tls_server_config:\n  cert_file: web.crt\n  key_file: web.key\n"
                "basic_auth_users:\n  %s: '%s'\n" % (USER, digest))
    with open(os.path.join(d, "plain.yml"), "w") as f:
        f.write("# plain HTTP\n")


def cpu_seconds(pid):
    """The process's user and system time so far"""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scrape(url, cafile=None):
    """(seconds, octets) of one GET by curl"""
    args = ["curl", "-sS", "--max-time", "3600", "-o", "/dev/null", "-H", "Accept: " + ACCEPT,
            "-w", "%{http_code} %{time_total} %{size_download}"]
    if cafile:
        args += ["--cacert", cafile, "-u", "%s:%s" % (USER, PASSWORD)]
    out = subprocess.run(args + [url], capture_output=True, text=True, check=True)
    code, seconds, octets = out.stdout.split()
    if code != "200":
        raise RuntimeError("%s: HTTP %s" % (url, code))
    return float(seconds), int(octets)


def switch(bed, web, which, log):
    """The web configuration 'tls' or 'plain' in force, by SIGHUP: done when
    the log says the listener serves it"""
    with open(os.path.join(web, "web.yml"), "w") as f:
        f.write(open(os.path.join(web, which + ".yml")).read())
    with open(log) as f:
        before = f.read().count("prometheusWebConfig: now serving")
    os.kill(bed.pid, signal.SIGHUP)
    for _ in range(600):
        with open(log) as f:
            if f.read().count("prometheusWebConfig: now serving") > before:
                return
        time.sleep(0.1)
    raise RuntimeError("the listener did not take %s.yml" % which)


def run(hosts, runs):
    port = free_port()
    web = tempfile.mkdtemp(prefix="ibsnmpd-bench-tls.")
    make_tls(web)
    with open(os.path.join(web, "web.yml"), "w") as f:
        f.write(open(os.path.join(web, "plain.yml")).read())
    try:
        with TestBed(None, None, direct=True, big={"hosts": hosts},
                     binary=os.path.join(BUILD, "ibsnmpd"),
                     conf=["prometheusListen 127.0.0.1:%d" % port,
                           "prometheusWebConfig %s/web.yml" % web]) as bed:
            log = os.path.join(bed.dir, "ibsnmpd.log")
            m = log_match(log, r"subnet discovered: \d+ nodes, (\d+) ports", 1800)
            ports = int(m.group(1))
            time.sleep(30 if hosts < 10000 else 180)  # the first sweeps published
            plain_url = "http://127.0.0.1:%d/metrics" % port
            tls_url = "https://127.0.0.1:%d/metrics" % port
            cafile = os.path.join(web, "web.crt")
            plain, tls = [], []
            switch(bed, web, "tls", log)
            scrape(tls_url, cafile)  # bcrypt's one check; then remembered
            cpu = {"plain": [], "tls": []}
            for _ in range(runs):
                for which, got, url, ca in (("plain", plain, plain_url, None),
                                            ("tls", tls, tls_url, cafile)):
                    switch(bed, web, which, log)
                    before = cpu_seconds(bed.pid)
                    got.append(scrape(url, ca))
                    cpu[which].append(cpu_seconds(bed.pid) - before)
    finally:
        shutil.rmtree(web, ignore_errors=True)
    p = statistics.median(s for s, _ in plain)
    t = statistics.median(s for s, _ in tls)
    pc, tc = statistics.median(cpu["plain"]), statistics.median(cpu["tls"])
    print("fabricsim fat tree of %d hosts (%d ports), /metrics (OpenMetrics, %.1f MB), "
          "median of %d scrapes each, interleaved:" % (hosts, ports, plain[0][1] / 1e6, runs))
    print("  plain HTTP             %8.3f s  (min %.3f, max %.3f)"
          % (p, min(s for s, _ in plain), max(s for s, _ in plain)))
    print("  TLS 1.3 + basic auth   %8.3f s  (min %.3f, max %.3f)"
          % (t, min(s for s, _ in tls), max(s for s, _ in tls)))
    print("  ratio TLS / plain      %8.2f    (aim: at most 1.2)" % (t / p))
    print("  ibsnmpd's CPU a scrape: plain %.3f s, TLS %.3f s, ratio %.2f (the sweeps' share "
          "included)" % (pc, tc, tc / pc), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, nargs="+", default=[2000, 40000])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    stop_on_sigterm()
    for hosts in args.hosts:
        run(hosts, args.runs)


if __name__ == "__main__":
    main()
