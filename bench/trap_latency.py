#!/usr/bin/env python3
"""Trap latency and flap behaviour, on switch-3ca.net in one run.

1. Latency: tests/tools/sim_trap_injector.c (attached to hca3) sends N traps
   145 (System Image GUID changed: opensm forwards it without sweeping), each
   with its own GUID, 10 ms apart; each goes injector -> opensm -> SA Report ->
   ibsnmpd -> snmpd (AgentX) -> snmptrapd. The time from the injector's send
   to the line appearing in snmptrapd's log: median and worst. The same run
   measures snmpd's own notification path as the peer: a GET with a wrong
   community makes snmpd send authenticationFailure to the same snmptrapd.
2. Sustained rate: 1,000 distinct traps 145, 0.2 ms apart; notifications
   per second into snmptrapd's log. (Back to back, the simulator itself can
   deadlock: libumad2sim holds its global mutex across a blocking write to
   ibsim, so opensm, ibsim and the subscriber can all end up waiting on full
   socket buffers. Seen with gdb; no real HCA has this.)
3. Flapping: a port is unlinked and relinked in ibsim for FLAP_S seconds;
   opensm sends a trap 128 per change. Printed: link changes, traps ibsnmpd
   took in, notifications sent and suppressed (notificationLimit 10 60), and
   the GET latency of ibsnmpd meanwhile against before. (opensm itself
   stops forwarding a source's identical traps after ten.)

Usage: bench/trap_latency.py [N] (default 100)
"""
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

from benchlib import TOP, TestBed, env

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
FLAP_S = 10
BUILD = os.environ.get("IBSNMPD_BUILD", os.path.join(TOP, "build"))
INJECTOR = os.path.join(BUILD, "tests", "sim-trap-injector")
SHIM = os.path.join(BUILD, "tests", "sim_issm_shim.so")
TRAPS = ".1.3.6.1.4.1.8072.9999.9999.117.1.4."
GUID_BASE = 0x5000000000000000


class LogWatcher(threading.Thread):
    """Notes when each new line of a file appears (polled every 0.2 ms)."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.lines, self.stop = path, [], False

    def run(self):
        with open(self.path, "rb") as f:
            f.seek(0, 2)
            buf = b""
            while not self.stop:
                chunk = f.read()
                if chunk:
                    now = time.time_ns()
                    buf += chunk
                    *done, buf = buf.split(b"\n")
                    self.lines += [(now, l.decode(errors="replace")) for l in done]
                else:
                    time.sleep(0.0002)


def ber(tag, body):
    n = len(body)
    return bytes([tag]) + (bytes([n]) if n < 128 else bytes([0x81, n])) + body


def bad_community_get(target):
    """An SNMPv2c GET for sysName.0 with a wrong community, by hand."""
    host, port = target.split(":")[1:]
    oid = bytes([0x2b, 6, 1, 2, 1, 1, 5, 0])
    vb = ber(0x30, ber(0x30, ber(0x06, oid) + b"\x05\x00"))
    pdu = ber(0xa0, ber(0x02, b"\x01") + ber(0x02, b"\x00") + ber(0x02, b"\x00") + vb)
    msg = ber(0x30, ber(0x02, b"\x01") + ber(0x04, b"wrong-community") + pdu)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        sent = time.time_ns()
        s.sendto(msg, (host, int(port)))
    return sent


def get_ms(target, oid):
    t = time.perf_counter()
    subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", target, oid],
                   capture_output=True, env=env())
    return (time.perf_counter() - t) * 1000


def counter(target, n):
    for _ in range(10):  # right after a burst or a SIGHUP a GET may time out
        out = subprocess.run(["snmpget", "-v2c", "-c", "public", "-Oqv", target,
                              TRAPS + "%d.0" % n], capture_output=True, text=True, env=env())
        if out.returncode == 0 and out.stdout.split():
            return int(out.stdout.split()[-1])
        time.sleep(0.5)
    sys.exit("cannot read %s%d.0 from ibsnmpd: %s" % (TRAPS, n, out.stderr + out.stdout))


def pct(values):
    return statistics.median(values), max(values)


def main():
    for path in (INJECTOR, SHIM):
        if not os.path.exists(path):
            sys.exit("%s missing: build first (cmake --build build)" % path)
    conf = ["saKey 0x1", "notificationLimit 0 60", "osmLogFile {dir}/opensm.log"]
    with TestBed("switch-3ca.net", "hca1", conf=conf, snmpd_conf=["authtrapenable 1"],
                 preload=SHIM) as bed:
        log = os.path.join(bed.dir, "ibsnmpd.log")
        for _ in range(600):
            if "subscribed to trap 259" in open(log).read():
                break
            time.sleep(0.1)
        watcher = LogWatcher(os.path.join(bed.dir, "traps.log"))
        watcher.start()

        # --- 1. latency -----------------------------------------------------
        inj = subprocess.run(bed.command(INJECTOR, "-V", "-n", str(N), "-i", "10000", "145",
                                     "lid=4", "sysguid=0x%x" % GUID_BASE, node="hca3"),
                             capture_output=True, text=True, env=env())
        sent = {int(a): int(b) for _, a, b in
                (l.split() for l in inj.stdout.splitlines() if l.startswith("sent "))}
        deadline = time.time() + 30
        lat = {}
        while time.time() < deadline and len(lat) < len(sent):
            for when, line in list(watcher.lines):
                m = re.search(r"117\.3\.1\.1\.6\.0 = Hex-STRING: ([0-9A-F ]+)", line)
                if m:
                    seq = int(m.group(1).replace(" ", ""), 16) - GUID_BASE + 1
                    if seq in sent and seq not in lat:
                        lat[seq] = (when - sent[seq]) / 1e6
            time.sleep(0.05)
        # peer: snmpd's own notification (authenticationFailure), same receiver
        peer = []
        for _ in range(20):
            n0 = len(watcher.lines)
            t0 = bad_community_get(bed.target)
            for _ in range(2000):
                hit = [w for w, l in watcher.lines[n0:] if ".1.3.6.1.6.3.1.1.5.5" in l]
                if hit:
                    peer.append((hit[0] - t0) / 1e6)
                    break
                time.sleep(0.001)
        values = list(lat.values())
        print("trap latency, injector -> opensm -> ibsnmpd -> snmpd -> snmptrapd log "
              "(%d traps 145, %d arrived):" % (len(sent), len(values)))
        if values:
            med, worst = pct(values)
            print("  median %.2f ms, worst %.2f ms" % (med, worst))
        if peer:
            pmed, pworst = pct(peer)
            print("peer: snmpd's own notification (authenticationFailure) -> snmptrapd log "
                  "(%d): median %.2f ms, worst %.2f ms" % (len(peer), pmed, pworst))
            if values:
                print("ratio ibsnmpd path / snmpd's own path (medians): %.1f" % (med / pmed))

        # --- 2. sustained rate: distinct traps back to back -----------------
        burst = 1000
        n0 = len(watcher.lines)
        r0, s0 = counter(bed.target, 1), counter(bed.target, 2)
        inj = subprocess.run(bed.command(INJECTOR, "-V", "-n", str(burst), "-i", "200", "145", "lid=4",
                                     "sysguid=0x%x" % (GUID_BASE + 0x100000), node="hca3"),
                             capture_output=True, text=True, env=env())
        first = min(int(l.split()[2]) for l in inj.stdout.splitlines() if l.startswith("sent "))
        last_sent = max(int(l.split()[2]) for l in inj.stdout.splitlines()
                        if l.startswith("sent "))
        deadline = time.time() + 30
        while time.time() < deadline:
            got = [w for w, l in watcher.lines[n0:] if "117.3.2.6" in l]
            if len(got) >= burst:
                break
            time.sleep(0.1)
        got = [w for w, l in watcher.lines[n0:] if "117.3.2.6" in l]
        if got:
            span = (max(got) - first) / 1e9
            print("burst of %d distinct traps 145 sent in %.2f s: ibsnmpd took in %d, sent %d; "
                  "%d notifications logged, %.0f per second end to end" %
                  (burst, (last_sent - first) / 1e9, counter(bed.target, 1) - r0,
                   counter(bed.target, 2) - s0, len(got), len(got) / span))

        # --- 3. flapping ----------------------------------------------------
        with open(os.path.join(bed.dir, "ibsnmpd.conf"), "a") as f:
            f.write("notificationLimit 10 60\n")
        os.kill(bed.pid, 1)
        time.sleep(1)
        before_get = [get_ms(bed.target, TRAPS + "1.0") for _ in range(20)]
        r0, s0, x0 = counter(bed.target, 1), counter(bed.target, 2), counter(bed.target, 3)
        osm0 = open(os.path.join(bed.dir, "opensm.log")).read().count("num:128")
        changes, during_get = 0, []
        with open(os.path.join(bed.dir, "ibsim.console"), "w") as console:
            end = time.time() + FLAP_S
            while time.time() < end:
                for cmd in ('Unlink "hca2"[1]', 'ReLink "hca2"[1]'):
                    console.write(cmd + "\n")
                    console.flush()
                    changes += 1
                    time.sleep(0.05)
                during_get.append(get_ms(bed.target, TRAPS + "1.0"))
        time.sleep(3)
        osm = open(os.path.join(bed.dir, "opensm.log")).read().count("num:128") - osm0
        r, s, x = (counter(bed.target, 1) - r0, counter(bed.target, 2) - s0,
                   counter(bed.target, 3) - x0)
        print("flapping hca2 port 1 for %d s: %d link changes, opensm received %d traps 128, "
              "ibsnmpd took in %d (%.1f/s), sent %d notifications, suppressed %d" %
              (FLAP_S, changes, osm, r, r / FLAP_S, s, x))
        bmed, _ = pct(before_get)
        dmed, dworst = pct(during_get)
        print("snmpget of ibsnmpd: median %.2f ms before, %.2f ms while flapping (worst %.2f); "
              "ratio %.2f" % (bmed, dmed, dworst, dmed / bmed))
        watcher.stop = True


if __name__ == "__main__":
    main()
