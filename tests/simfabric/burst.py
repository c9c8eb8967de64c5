"""A burst of notifications on purpose, through the real snmpd (issue: a
subagent that writes hundreds of AgentX Notify PDUs in one pass, reading
none of snmpd's answers, deadlocks with snmpd).

The bed: fabricsim's rail layout of 64 servers of 8 HCAs (912 nodes, 400
switches, each an SNMP context), ibsnmpd on srv-1-hca1 through snmpd, no
notification limit (notificationLimit 0: the worst an operator can set),
the links every 2 s and the vitals every 5 s. Once start-up's notifications have gone, the
burst: rail 2 dead (its 34 switches and 64 HCAs), and every module on the
servers' side of the 12 leaf switches of rails 3-8 pulled out (192
modules, 384 links down), all written to the simulator's console at once. fabricsim, the SM, reports
a trap 128 for every port that changed; ibsnmpd notifies those traps, the
links down, the modules out, the nodes unreachable (alarms) and the
switches' entities changed (entConfigChange, each in its context).
Throughout, a manager GETs every 0.1 s and walks every tenth time
(faults.Poller, net-snmp's defaults: one-second timeout, five retries), and another GETs every
0.05 s, each GET sent with one of snmpd's own sysUpTime (Timer).

What is measured (run_burst): the GETs and walks answered, the slowest GET
and how much later it came than snmpd's own answer sent with it,
ibsnmpd's notifications by family (its /metrics) and those snmptrapd
logged (by their snmpTrapOID), how many were dropped, suppressed, not
answered by snmpd or still waiting at the end, how long from the first to
the last in snmptrapd's log, and ibsnmpd's longest main-loop pass
(ibsnmpdLoopLongestPass: its own watchdog's figure), split by the kernel's
account of the main thread: the most it worked in one pass
(ibsnmpdLoopLongestWork) and the most it slept in one
(ibsnmpdLoopLongestSleep). On a loaded machine a pass also waits for a
core: that is the machine's, and only the wall time shows it.

bench/notification_burst.py prints them; the test
tests/integration/test_notification_burst.py holds them."""
import os
import re
import threading
import time
import urllib.request
from datetime import datetime

from .bed import alive, free_port, running
from .faults import SHIM, SMALL_TREES, Poller, snmp
from .manager import TRAP_OID, notifications, paired_requests

RAIL64 = {"hosts": 64, "layout": "rail"}
ME = "srv-1-hca1"
MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
QUEUED, DROPPED = MIB + "1.8.1.0", MIB + "1.8.2.0"
IN_FLIGHT, UNANSWERED = MIB + "1.8.5.0", MIB + "1.8.6.0"
LONGEST_PASS, STALLS, WRITES_REFUSED = MIB + "1.11.1.0", MIB + "1.11.2.0", MIB + "1.11.3.0"
LONGEST_WORK, LONGEST_SLEEP = MIB + "1.11.5.0", MIB + "1.11.6.0"
FAMILIES = ("ib_trap", "link", "vitals", "entity", "alarm", "dcbx", "partition", "routing")
BURST_FAMILIES = ("ib_trap", "link", "vitals", "entity", "alarm")  # what the burst makes


class Timer(threading.Thread):
    """A manager's GETs timed from send to answer (manager.paired_requests):
    ibSmaNodeType.0 and ibsnmpdMadsSent.0 (through snmpd to ibsnmpd) every
    0.05 s, and with each at the same moment snmpd's own sysUpTime.0, the
    peer: what the machine's load alone cost then. Five seconds to answer
    (a deadlock never answers); (sent, seconds, answered, peer seconds,
    peer answered) each."""

    OIDS = (".1.3.6.1.3.117.3.1.1.4.0", MIB + "1.1.1.0")
    PEER = (".1.3.6.1.2.1.1.3.0",)
    TIMEOUT = 5.0

    def __init__(self, target):
        super().__init__(daemon=True)
        self.target, self.gets, self.stop = target, [], False

    def run(self):
        res = paired_requests(self.target, self.OIDS, self.PEER, lambda: self.stop,
                              timeout=self.TIMEOUT)
        self.gets = [(t, took if took is not None else self.TIMEOUT, took is not None,
                      peer if peer is not None else self.TIMEOUT, peer is not None)
                     for t, took, peer in res]


def percentile(values, p):
    """the p-th percentile of values (nearest rank); 0 of none"""
    if not values:
        return 0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, -(-len(ordered) * p // 100) - 1))]


def family_of(trap_oid):
    """ibsnmpd's family of a notification, by its snmpTrapOID (None: not
    ibsnmpd's, e.g. snmpd's coldStart)"""
    if trap_oid.startswith(".1.3.6.1.3.117.3.2."):
        return "ib_trap"
    if trap_oid == ".1.3.6.1.2.1.47.2.0.1" or trap_oid.startswith(".1.0.8802.1.1.2.0.0."):
        return "entity"  # entConfigChange, lldpRemTablesChange: a context's
    m = re.match(r"^\.1\.3\.6\.1\.4\.1\.8072\.9999\.9999\.117\.0\.(\d+)$", trap_oid)
    if m:
        n = int(m.group(1))
        # 1-7 links, 8-16 vitals, 17-18 alarms, 19-21 routing checks and SMs
        return ("link" if n <= 7 else "vitals" if n <= 16 else "alarm" if n <= 18
                else "routing")
    if trap_oid.startswith(".1.0.8802.1.1.2.1.5.6945."):
        return "dcbx"
    if trap_oid.startswith(MIB + "3."):
        return "partition"
    return None


def logged(bed):
    """{family: notifications in snmptrapd's log}"""
    out = dict.fromkeys(FAMILIES, 0)
    for n in notifications(bed):
        f = family_of(n.get(TRAP_OID, ""))
        if f:
            out[f] += 1
    return out


def arrival_times(bed):
    """the times (s) of snmptrapd's entries, in order (to the second)"""
    res = []
    for m in re.finditer(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) ", bed.log("traps.log"), re.M):
        res.append(datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S").timestamp())
    return res


def free_tcp_port():
    return free_port()  # bed.py's: below the ephemeral range


def sent(url):
    """{family: notifications ibsnmpd sent} from its /metrics"""
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    out = dict.fromkeys(FAMILIES, 0)
    for m in re.finditer(r'^ibsnmpd_notifications_sent_total\{family="(\w+)"\} (\d+)$', text,
                         re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def scalar(bed, oid):
    out = snmp(bed, "snmpget", "-Oqv", oid, timeout=2)
    value = out.stdout.strip().split()[:1]
    return int(value[0]) if out.returncode == 0 and value and value[0].isdigit() else None


def settled(bed, url, quiet_s, within_s, moved=(), since_counts=None):
    """{family: sent} once nothing waits and ibsnmpd has sent nothing more
    for quiet_s, and each family of `moved` has sent some since
    since_counts (the burst's last, the nodes unreachable, can come late on
    a loaded machine); None if that did not come within within_s (a daemon
    that answers nothing)"""
    last, since, deadline = None, time.monotonic(), time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            now = sent(url)
        except OSError:
            now = None
        if now != last:
            last, since = now, time.monotonic()
        elif now is not None and time.monotonic() - since >= quiet_s and \
                all(now[f] > since_counts[f] for f in moved) and \
                scalar(bed, QUEUED) == 0 and scalar(bed, IN_FLIGHT) in (0, None):
            return now
        time.sleep(0.5)
    return None


def burst_commands():
    """rail 2 dead; every module of the leaves of rails 3-8 on the servers'
    side out (ports 1-32; a cage holds two ports, the odd one names it):
    the leaves stay reached through their uplinks, their hosts do not"""
    cmds = ['Dead "*-r2.*"', 'Dead "srv-*-hca2"']
    for rail in range(3, 9):
        for leaf in (1, 2):
            cmds += ['Module "leaf-r%d.1-%d"[%d] Remove' % (rail, leaf, port)
                     for port in range(1, 33, 2)]
    return cmds


def run_burst(progress=None, settle_s=180, binary=None, extra_conf=()):
    """the burst on a bed of its own (extra_conf: more ibsnmpd.conf lines);
    a dict of what was measured"""
    say = progress or (lambda text: None)
    port = free_tcp_port()
    # loopWatchdog 1: a pass of a second or more logs where the main
    # thread is (the result's "stuck_in")
    conf = ["notificationLimit 0 60", "cacheLifetime vitalsSensors 5", "loopWatchdog 1",
            "cacheLifetime fabricPorts 2",
            "prometheusListen 127.0.0.1:%d" % port] + list(extra_conf)
    url = "http://127.0.0.1:%d/metrics?collect[]=agent" % port  # the small part
    with running(None, ME, conf=conf, preload=SHIM, minimal=False, big=RAIL64,
                 binary=binary) as bed:
        log = os.path.join(bed.dir, "ibsnmpd.log")
        t0 = time.monotonic()
        while "subscribed to trap 128" not in open(log).read() and time.monotonic() - t0 < 120:
            time.sleep(0.2)
        say("bed up; start-up's notifications going out")
        settled(bed, url, 8, 180)
        time.sleep(3)  # what snmptrapd still has to write
        before = sent(url)
        trapd_before, n_before = logged(bed), len(arrival_times(bed))
        longest_before = scalar(bed, LONGEST_PASS)
        # snmpget and snmpbulkwalk with net-snmp's own defaults (a second
        # to answer, five retries): a pass the machine's load stretched
        # past a second costs a retry, not the walk. The Timer times
        # ibsnmpd's answers against snmpd's own to the microsecond, and
        # the loop's own account splits its passes (work, sleep)
        poller = Poller(bed, SMALL_TREES, get_retries=5, walk_retries=5)
        timer = Timer(bed.target)
        poller.start()
        timer.start()
        time.sleep(3)
        t_burst = time.monotonic()
        wall_burst = time.time()
        say("the burst: %d console commands at once" % len(burst_commands()))
        with open(os.path.join(bed.dir, "ibsim.console"), "w") as console:
            console.write("\n".join(burst_commands()) + "\n")
        time.sleep(2)
        quiet = settled(bed, url, 10, settle_s, moved=BURST_FAMILIES, since_counts=before)
        after, trapd_after = quiet, logged(bed)
        # what ibsnmpd sent, once snmptrapd has written as many (or a while
        # has passed): read together, so that one sent meanwhile counts on
        # both sides
        for _ in range(20 if quiet else 0):
            try:
                after = sent(url)
            except OSError:
                break
            trapd_after = logged(bed)
            if all(trapd_after[f] - trapd_before[f] >= after[f] - before[f] for f in FAMILIES):
                break
            time.sleep(1)
        poller.stop = timer.stop = True
        poller.join()
        timer.join()
        window = [g for g in poller.gets if g[0] >= t_burst]
        timed = [g for g in timer.gets if g[0] >= t_burst]
        walks = [w for w in poller.walks if w[0] >= t_burst]
        times = [t for t in arrival_times(bed)[n_before:] if t >= wall_burst - 1]
        excess = [g[1] - g[3] for g in timed]
        res = {
            "gets_sent": len(window), "gets_answered": sum(1 for g in window if g[2]),
            "walks_started": len(walks), "walks_complete": sum(1 for w in walks if w[2]),
            "walks_failed": [(round(f[0] - t_burst, 1),) + f[1:] for f in poller.failed_walks
                             if f[0] >= t_burst],
            "longest_get_ms": round(max([g[1] for g in window] or [0]) * 1000),
            "median_get_ms": round(sorted(g[1] for g in window)[len(window) // 2] * 1000, 1)
            if window else None,
            "timed_gets": len(timed), "timed_answered": sum(1 for g in timed if g[2]),
            "timed_longest_ms": round(max([g[1] for g in timed] or [0]) * 1000, 1),
            "timed_slow": [(round(g[0] - t_burst, 1), round(g[1] * 1000), round(g[3] * 1000))
                           for g in timed if g[1] > 0.2 or not g[2]],
            "timed_median_ms": round(sorted(g[1] for g in timed)[len(timed) // 2] * 1000, 2)
            if timed else None,
            # the peer, snmpd's own sysUpTime at the same moments
            "peer_answered": sum(1 for g in timed if g[4]),
            "peer_longest_ms": round(max([g[3] for g in timed] or [0]) * 1000, 1),
            "peer_median_ms": round(sorted(g[3] for g in timed)[len(timed) // 2] * 1000, 2)
            if timed else None,
            # how much longer ibsnmpd's answer took than snmpd's own sent
            # with it on the same socket: what ibsnmpd cost, the machine's
            # load taken out (an unanswered one counts its 5 s)
            "timed_excess_ms": round(max(excess or [0]) * 1000, 1),
            "timed_excess_p99_ms": round(percentile(excess, 99) * 1000, 1),
            "sent": {f: (after or {}).get(f, 0) - before[f] for f in FAMILIES},
            "logged": {f: trapd_after[f] - trapd_before[f] for f in FAMILIES},
            "queued": scalar(bed, QUEUED), "in_flight": scalar(bed, IN_FLIGHT),
            "dropped": scalar(bed, DROPPED), "unanswered": scalar(bed, UNANSWERED),
            "longest_pass_ms": scalar(bed, LONGEST_PASS),
            "longest_pass_before_ms": longest_before,
            "longest_work_ms": scalar(bed, LONGEST_WORK),
            "longest_sleep_ms": scalar(bed, LONGEST_SLEEP),
            "stalls": scalar(bed, STALLS), "writes_refused": scalar(bed, WRITES_REFUSED),
            "spread_s": round(times[-1] - times[0], 1) if times else None,
            "settled": quiet is not None,
            "ibsnmpd_alive": alive(bed.pid),
            "reports": bed.sanitizer_reports(),
            "stuck_in": [line.split("it is in ", 1)[-1].strip() for line in open(log)
                         if "has not come round" in line],
        }
        res["sent_total"] = sum(res["sent"].values())
        res["logged_total"] = sum(res["logged"].values())
        return res


def print_result(r):
    print("notifications: %d sent by ibsnmpd, %d in snmptrapd's log, from the first to the "
          "last %s s" % (r["sent_total"], r["logged_total"], r["spread_s"]))
    for f in FAMILIES:
        if r["sent"][f] or r["logged"][f]:
            print("  %-10s sent %5d  logged %5d" % (f, r["sent"][f], r["logged"][f]))
    print("dropped %s, unanswered by snmpd %s, waiting at the end %s (+%s in flight)" % (
        r["dropped"], r["unanswered"], r["queued"], r["in_flight"]))
    print("manager (snmpget, 1 s timeout, 5 retries): GETs %d/%d answered (slowest %d ms with the "
          "process's start, median %s ms), walks %d/%d" % (
              r["gets_answered"], r["gets_sent"], r["longest_get_ms"], r["median_get_ms"],
              r["walks_complete"], r["walks_started"]))
    for f in r["walks_failed"]:
        print("  a walk failed: %s s into the burst, after %s s, %s: exit %s, %r (%d lines)" % f)
    print("manager (GETs timed, 5 s to answer): %d/%d answered, slowest %s ms, median %s ms;"
          " snmpd's own sysUpTime sent with each on the same socket: slowest %s ms, median %s "
          "ms; ibsnmpd's answer after snmpd's own: at most %s ms, 99th percentile %s ms" % (
              r["timed_answered"], r["timed_gets"], r["timed_longest_ms"], r["timed_median_ms"],
              r["peer_longest_ms"], r["peer_median_ms"], r["timed_excess_ms"],
              r["timed_excess_p99_ms"]))
    print("ibsnmpd's main loop: longest pass %s ms (before the burst %s ms), the most on a "
          "core in one pass %s ms, asleep %s ms; stalls %s; writes refused %s" % (
              r["longest_pass_ms"], r["longest_pass_before_ms"], r["longest_work_ms"],
              r["longest_sleep_ms"], r["stalls"], r["writes_refused"]))
    for where in r.get("stuck_in", []):
        print("  a pass of a second or more, in " + where)
