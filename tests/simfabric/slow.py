"""A slow or lossy node is not a changed fabric: faults of a switch's
management processor on a fabricsim bed, and what ibsnmpd tells of them.

The bed: fabricsim's fat tree, ibsnmpd on host-1 with its defaults (and the
bed's trap settings), snmptrapd logging what it is sent. One leaf switch
("leaf-1-2": not host-1's, so that ibsnmpd's own path is not the fault's)
is made slow or lossy on the simulator's console, each fault in turn for
HOLD seconds (fabricsim's Loss, Delay, Rate), or every node late together
(the simulator stopped 3 s of every 10 s: SIGSTOP and SIGCONT of its PID).
Nothing in the fabric changes: the simulator's links and nodes are as they
were. With link_down, one host of that leaf has its link taken down in the
middle of the fault and brought back at its end: a real change, to be told
once each way.

Measured per fault (run_fault), from snmptrapd's log and ibsnmpd's tables:
- the notifications ibsnmpd sent meanwhile (until the fault's end and a
  settling time after), by name;
- the alarm rows that came (ibsnmpdAlarmTable before and after, read
  whole), by notification;
- each counter sweep of the fault (ibsnmpdCacheRefreshes of pmCounters),
  the share of the leaf's ports whose counters it read fresh
  (ibsnmpdPmStale);
- with link_down: when the host's link went down and came back, and the
  ibsnmpdLinkDown / LinkUp naming it (how many, how late).
bench/slow_node.py prints them; tests/integration/test_slow_node.py holds
them to their aims."""
import os
import re
import signal
import threading
import time

from .bed import TOP, running
from .faults import answered, snmp
from .manager import TRAP_OID, generated, guid_index, notifications

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
PM_STALE = MIB + "1.3.1.1.25"          # ibsnmpdPmStale
ALARM_NOTIFICATION = MIB + "1.9.3.1.2"  # ibsnmpdAlarmNotification
ALARMS_CHANGED = MIB + "1.9.2.0"
CACHE_NAME, CACHE_REFRESHES = MIB + "1.1.6.1.2", MIB + "1.1.6.1.5"
LEAF = "leaf-1-2"
SETTLE_S = 30  # after a fault's end, what it may still make is waited for

# the faults of issue 59's measure (a pattern of nodes, a console command)
FAULTS = {
    "loss-30%": ('Loss "{leaf}" 30', 'Loss "{leaf}" 0'),
    "delay-500ms": ('Delay "{leaf}" 500 200', 'Delay "{leaf}" 0'),
    "rate-200": ('Rate "{leaf}" 200', 'Rate "{leaf}" 0'),
    "frozen-3s-of-10": (None, None),  # the simulator stopped, every node late
}


def notification_names():
    """{snmpTrapOID: name} of the MIB modules ibsnmpd sends from"""
    names = {".1.3.6.1.2.1.47.2.0.1": "entConfigChange",
             ".1.0.8802.1.1.2.0.0.1": "lldpRemTablesChange"}
    for path, base in (("IBSNMPD-MIB.txt", MIB[:-1] + ".0."),
                       ("SMA-MIB.txt", ".1.3.6.1.3.117.3.2.")):
        with open(os.path.join(TOP, "mibs", path)) as f:
            text = f.read()
        for m in re.finditer(r"^(\w+) NOTIFICATION-TYPE.*?::= \{ \w+ (\d+) \}", text,
                             re.M | re.S):
            names[base + m.group(2)] = m.group(1)
    return names


def told(bed, since, names):
    """{name: count} of the notifications in snmptrapd's log after the
    first `since` of them"""
    out = {}
    for n in notifications(bed)[since:]:
        name = names.get(n.get(TRAP_OID, ""), n.get(TRAP_OID, "?"))
        out[name] = out.get(name, 0) + 1
    return out


def alarm_rows(bed):
    """{index: notification OID} of ibsnmpdAlarmTable, walked whole (again
    while ibsnmpdAlarmsLastChange moves)"""
    for _ in range(20):
        before = snmp(bed, "snmpget", "-Oqv", ALARMS_CHANGED, timeout=2, retries=2).stdout
        out = snmp(bed, "snmpbulkwalk", "-Cr50", ALARM_NOTIFICATION, timeout=2, retries=2)
        after = snmp(bed, "snmpget", "-Oqv", ALARMS_CHANGED, timeout=2, retries=2).stdout
        if out.returncode == 0 and answered(out) and before == after:
            return {line.split(" = ")[0].rsplit(".", 1)[1]: line.split(": ", 1)[-1]
                    for line in out.stdout.splitlines() if " = OID: " in line}
    raise RuntimeError("ibsnmpdAlarmTable moved during each of 20 walks")


def cache_index(bed, name):
    out = snmp(bed, "snmpbulkwalk", CACHE_NAME, timeout=2, retries=2)
    for line in out.stdout.splitlines():
        if line.endswith('"%s"' % name):
            return line.split(" = ")[0].rsplit(".", 1)[1]
    raise RuntimeError("no cache group %s" % name)


def value(bed, oid):
    out = snmp(bed, "snmpget", "-Oqv", oid, timeout=2, retries=2)
    v = out.stdout.strip().split()
    return int(v[0]) if out.returncode == 0 and v and v[0].isdigit() else None


class Sweeps(threading.Thread):
    """Each counter sweep while it runs: the share of the leaf's ports it
    read fresh (ibsnmpdPmStale 2), read as ibsnmpdCacheRefreshes of
    pmCounters moves"""

    def __init__(self, bed, stale_oids):
        super().__init__(daemon=True)
        self.bed, self.oids, self.stop, self.shares = bed, stale_oids, False, []
        self.refreshes = "%s.%s" % (CACHE_REFRESHES, cache_index(bed, "pmCounters"))

    def run(self):
        seen = value(self.bed, self.refreshes)
        while not self.stop:
            time.sleep(0.5)
            now = value(self.bed, self.refreshes)
            if now is None or seen is None or now <= seen:
                seen = now if seen is None else seen
                continue
            seen = now
            fresh = total = 0
            for k in range(0, len(self.oids), 10):
                out = snmp(self.bed, "snmpget", "-Oqv", *self.oids[k:k + 10], timeout=2,
                           retries=2)
                values = out.stdout.split()
                total += len(self.oids[k:k + 10])
                fresh += sum(1 for v in values if v == "2")
            self.shares.append(fresh / total if total else 0)


class Freezer(threading.Thread):
    """The simulator stopped `frozen` s of every `period` s (SIGSTOP,
    SIGCONT): every node's answers late together, as on a starved
    management path"""

    def __init__(self, pid, frozen=3.0, period=10.0):
        super().__init__(daemon=True)
        self.pid, self.frozen, self.period, self.stop = pid, frozen, period, False
        self.running, self.since = threading.Event(), 0.0  # not stopped, since when

    def run(self):
        while not self.stop:
            self.running.clear()
            os.kill(self.pid, signal.SIGSTOP)
            time.sleep(self.frozen)
            os.kill(self.pid, signal.SIGCONT)
            self.since = time.monotonic()
            self.running.set()
            end = time.monotonic() + self.period - self.frozen
            while not self.stop and time.monotonic() < end:
                time.sleep(0.2)
        os.kill(self.pid, signal.SIGCONT)


def sim_ports(bed, node):
    """{port: (up, peer name or None)} of a node as the simulator has it
    (its console's Ports: its own account, no MAD)"""
    path = bed.path("fabricsim.out")
    size = os.path.getsize(path)
    bed.sim('Ports "%s"' % node)
    pattern = re.compile(r"^(?:sim> )*%s\[(\d+)\] (up|down) (\S+)$" % re.escape(node), re.M)
    for _ in range(200):
        with open(path) as f:
            f.seek(size)
            text = f.read()
        if re.search(r"^(?:sim> )*%s: delay" % re.escape(node), text, re.M):
            return {int(p): (state == "up", None if peer == "-" else peer.split("[")[0])
                    for p, state, peer in pattern.findall(text)}
        time.sleep(0.05)
    raise RuntimeError("fabricsim did not answer Ports")


def quiet(bed, seconds, within):
    """until snmptrapd has logged nothing for `seconds` (at most `within`)"""
    last, since, end = len(notifications(bed)), time.monotonic(), time.monotonic() + within
    while time.monotonic() < end:
        time.sleep(1)
        n = len(notifications(bed))
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return True
    return False


def run_fault(bed, name, hold, link_down=None, names=None, progress=None, check=None):
    """One fault on a running bed (FAULTS[name]); a dict of what was seen.
    check(bed, name): called once the fault is made, before the host's link
    goes down (the frozen fault: between two stops of the simulator)"""
    say = progress or (lambda text: None)
    names = names or notification_names()
    nodes, links = generated(bed)
    leaf_ports = sorted(p for link in links for n, p in link if n == LEAF)
    stale_oids = ["%s.%s.%d" % (PM_STALE, guid_index(nodes[LEAF][1]), p) for p in leaf_ports]
    since, alarms_before = len(notifications(bed)), alarm_rows(bed)
    sweeps = Sweeps(bed, stale_oids)
    sweeps.start()
    apply, remove = FAULTS[name]
    freezer = None
    t0 = time.monotonic()
    if apply:
        bed.sim(apply.format(leaf=LEAF))
    else:
        freezer = Freezer(bed.pid_of("fabricsim"))
        freezer.start()
    say("%s: made, held %d s" % (name, hold))
    if check:
        time.sleep(min(5.0, hold / 4))
        if freezer:  # just after a stop of the simulator ended
            while not freezer.running.wait(0.1) or time.monotonic() - freezer.since > 1:
                pass
        check(bed, name)
    down_at = up_at = None
    if link_down:
        time.sleep(max(0.0, t0 + hold / 2 - time.monotonic()))
        bed.sim('Unlink "%s"' % link_down)
        down_at = time.monotonic()
        say("%s: %s's link down" % (name, link_down))
    time.sleep(max(0, t0 + hold - time.monotonic()))
    if link_down:
        bed.sim('ReLink "%s"' % link_down)
        up_at = time.monotonic()
    if remove:
        bed.sim(remove.format(leaf=LEAF))
    if freezer:
        freezer.stop = True
        freezer.join()
    say("%s: removed; settling %d s" % (name, SETTLE_S))
    time.sleep(SETTLE_S)
    sweeps.stop = True
    sweeps.join()
    res = {"fault": name, "hold_s": hold, "told": told(bed, since, names),
           "alarms_came": {}, "fresh_shares": [round(x, 2) for x in sweeps.shares],
           # what each said, but the SM's traps (the words of its varbinds)
           "said": [(names.get(n.get(TRAP_OID, ""), "?"),
                     " | ".join(v for k, v in n.items()
                                if k != TRAP_OID and not k.startswith(".1.3.6.1.2.1.1.3")
                                and len(v) > 2)[:300])
                    for n in notifications(bed)[since:]
                    if not names.get(n.get(TRAP_OID, ""), "").startswith("ibSma")]}
    for index, n in alarm_rows(bed).items():
        if index not in alarms_before:
            key = names.get(n, n)
            res["alarms_came"][key] = res["alarms_came"].get(key, 0) + 1
    if link_down:
        host_guid = nodes[link_down][1]
        downs, ups = [], []
        for k, n in enumerate(notifications(bed)[since:]):
            kind = names.get(n.get(TRAP_OID, ""))
            if kind in ("ibsnmpdLinkDown", "ibsnmpdLinkUp") and \
                    any(link_down in v or LEAF in v for v in n.values()):
                (downs if kind == "ibsnmpdLinkDown" else ups).append(k)
        res.update({"link": link_down, "link_downs_told": len(downs),
                    "link_ups_told": len(ups), "host_guid": "0x%016x" % host_guid,
                    "down_at_s": round(down_at - t0, 1), "up_at_s": round(up_at - t0, 1)})
    return res


def run(hosts=96, radix=16, faults=tuple(FAULTS), hold=60, link_down=True, conf=(),
        progress=None, binary=None, check=None):
    """Every fault in turn on one bed; their results and the sanitizer
    reports of ibsnmpd"""
    say = progress or (lambda text: None)
    results = []
    with running(None, "host-1", conf=list(conf), minimal=False, binary=binary,
                 big={"hosts": hosts, "radix": radix},
                 debug=os.environ.get("IBSNMPD_DEBUG")) as bed:
        say("bed up; start-up's notifications going out")
        quiet(bed, 15, 300)
        nodes, links = generated(bed)
        host = None
        if link_down:
            host = sorted((n for link in links for n, p in link
                           if n.startswith("host-") and any(m == LEAF for m, _ in link)),
                          key=lambda h: int(h.split("-")[1]))[0]
        names = notification_names()
        for name in faults:
            results.append(run_fault(bed, name, hold, link_down=host, names=names,
                                     progress=progress, check=check))
        reports = bed.sanitizer_reports()
    return results, reports


# what a fault that changes nothing may make: the host's link, down and up,
# and the SM's traps 128 of its leaf switch (the SM's word, relayed); a node
# not answering (its own condition, once it lasted)
ALLOWED = {"ibsnmpdLinkDown", "ibsnmpdLinkUp", "ibSmaPortLinkStateChange",
           "ibsnmpdNodeUnreachable", "ibsnmpdAlarmCleared"}


def false_notifications(r):
    """{name: count} of what a result's fault should not have made (the
    host's link down and up once a fault, four times in the run, is a link
    flapping: told of that link, it is true)"""
    return {k: v for k, v in r["told"].items()
            if k not in ALLOWED and not (k == "ibsnmpdLinkFlapping" and r.get("link"))}


def print_results(results):
    for r in results:
        print("%s (held %d s):" % (r["fault"], r["hold_s"]))
        print("  notifications: %s" % (", ".join("%s %d" % kv for kv in
                                                 sorted(r["told"].items())) or "none"))
        print("  alarm rows that came: %s" % (", ".join("%s %d" % kv for kv in
                                                        sorted(r["alarms_came"].items()))
                                              or "none"))
        shares = r["fresh_shares"]
        print("  the leaf's ports read fresh, sweep by sweep: %s (%d of %d sweeps whole)" % (
            " ".join("%.0f%%" % (100 * s) for s in shares),
            sum(1 for s in shares if s == 1), len(shares)))
        for name, words in r.get("said", []):
            print("    %s: %s" % (name, words))
        if "link" in r:
            print("  %s's link down at %.1f s, up at %.1f s: LinkDown told %d, LinkUp told %d"
                  % (r["link"], r["down_at_s"], r["up_at_s"], r["link_downs_told"],
                     r["link_ups_told"]))
