"""Notifications kept while snmpd is away: net-snmp drops what a subagent
sends while its AgentX session is down; ibsnmpd keeps it and sends it, in
order, when snmpd is back, each with ibsnmpdNotificationTime (when it
happened). On fabricsim (16 hosts): snmpd stopped (SIGTERM) while 10 host
links go down and 2 of them come back; after snmpd returns, snmptrapd's log
has the 12 link notifications in the order they happened, with times from
the outage, and snmpd's nlmLogTable (NOTIFICATION-LOG-MIB) logs them as it
forwards them; then a queue of 5 overflows and the loss is counted and
logged once. No trap subscription: the links' notifications come from the PortInfo
sweep alone, not also from a rediscovery racing it. The outage is held 40 s
(20 s for the queue's overflow).

The active alarm table (ibsnmpdAlarmTable) then has exactly the 8 links
still down, each naming both ends as iblinkinfo shows them; a restart of
ibsnmpd finds them again with the same indexes and begin times (its state
file); a package-style restart of snmpd (stop and start at once) just after
a link goes down loses nothing either."""
import calendar
import json
import os
import re
import subprocess
import time

from conftest import (TOP, TRAP_OID, generated, notifications, snmp_env, start_testbed,
                      stop_testbed, wait_for)

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
LINK_DOWN, LINK_UP = MIB + "0.1", MIB + "0.2"
QUEUED, DROPPED, SENT_LATE = (MIB + "1.8.%d.0" % i for i in (1, 2, 3))
NOTIFICATION_TIME = MIB + "1.8.4.0"
REMOTE_DESC = MIB + "1.5.1.1.16."   # ibsnmpdFabricPortRemoteNodeDescription
NLM_NOTIFICATION_ID = ".1.3.6.1.2.1.92.1.3.1.1.9"  # NOTIFICATION-LOG-MIB::nlmLogNotificationID
ALARMS_ACTIVE = MIB + "1.9.1.0"
# the alarms are counted: hosts down leave fabricsim's uplinks a LID or two
# apart, and the balance check's alarm (test_routing's) would count too
ROUTING_OFF = "routingCheck no"
ALARM = MIB + "1.9.3.1."            # ibsnmpdAlarmEntry
ALARMS_CHANGED = MIB + "1.9.2.0"    # ibsnmpdAlarmsLastChange: a walk of one publication
ALARM_COLUMNS = {"notification": 2, "severity": 3, "desc": 9, "began": 10, "uptime": 11}


def date_and_time(value):
    """snmptrapd's Hex-STRING of a DateAndTime as seconds since the epoch"""
    b = bytes(int(x, 16) for x in value.split())
    utc = calendar.timegm((b[0] << 8 | b[1], b[2], b[3], b[4], b[5], b[6], 0, 0, 0)) + b[7] / 10
    if len(b) == 11:  # local time, its offset from UTC after it
        utc -= (b[9] * 3600 + b[10] * 60) * (1 if chr(b[8]) == "+" else -1)
    return utc


def value_of(bed, oid):
    return int(bed.get(oid)[oid][1])


def link_events(bed, since):
    """[(notification, remote end's name, its time)] after the first `since`"""
    res = []
    for n in notifications(bed)[since:]:
        if n.get(TRAP_OID) not in (LINK_DOWN, LINK_UP):
            continue
        remote = next((v for k, v in n.items() if k.startswith(REMOTE_DESC)), None)
        res.append(("down" if n[TRAP_OID] == LINK_DOWN else "up", remote,
                    n.get(NOTIFICATION_TIME)))
    return res


def outage(bed, hosts, relinked, hold=40):
    """snmpd stopped, the hosts' links down one by one, the first `relinked`
    of them up again, held `hold` s, snmpd started: (order, start, end)"""
    bed.simfabric("stop", "snmpd")
    began = time.time()
    order = []
    for h in hosts:
        bed.simfabric("sim", 'Unlink "%s"' % h)
        order.append(("down", h))
        time.sleep(1.5)  # a PortInfo sweep each: one notification each
    for h in hosts[:relinked]:
        bed.simfabric("sim", 'ReLink "%s"' % h)
        order.append(("up", h))
        time.sleep(1.5)
    time.sleep(max(0.0, hold - (time.time() - began)))
    ended = time.time()
    bed.simfabric("start", "snmpd")
    return order, began, ended


def alarm_rows(bed):
    """{index: {column: value}} of ibsnmpdAlarmTable"""
    rows = {}
    for oid, (_, value) in bed.walk_whole(ALARM[:-1], ALARMS_CHANGED).items():
        column, index = oid[len(ALARM):].split(".", 1)
        for name, number in ALARM_COLUMNS.items():
            if int(column) == number:
                rows.setdefault(int(index), {})[name] = value.strip('"')
    return rows


def host_links(bed, hosts):
    """{host: "leaf port P <-> host port 1"} as iblinkinfo shows each host's
    link, from its switch's side"""
    ends, switch = {}, None
    for line in bed.run_on_node("iblinkinfo", "--switches-only", timeout=120).splitlines():
        m = re.match(r"^Switch: 0x[0-9a-f]+ (.*):$", line)
        if m:
            switch = m.group(1)
            continue
        m = re.match(r'^\s+\d+\s+(\d+)\[.*==>\s+\d+\s+(\d+)\[.*\] "(.*)" \( \)$', line)
        if m and switch and m.group(3) in hosts:
            ends[m.group(3)] = "%s port %s <-> %s port %s" % (switch, m.group(1), m.group(3),
                                                              m.group(2))
    return ends


def test_notifications_while_snmpd_is_away_come_after_in_order():
    bed = start_testbed(big={"hosts": 16, "radix": 8},
                        extra_conf=["cacheLifetime fabricPorts 1", "notificationLimit 100 60",
                                    "trapSubscribe no", ROUTING_OFF])
    try:
        nodes, _ = generated(bed)
        hosts = ["host-%d" % i for i in range(3, 13)]
        assert all(h in nodes for h in hosts)
        time.sleep(3)  # the baseline: every link up
        ends = host_links(bed, hosts + ["host-13", "host-14", "host-15"])
        assert len(ends) == len(hosts) + 3, ends
        assert value_of(bed, ALARMS_ACTIVE) == 0
        before = len(notifications(bed))
        order, began, ended = outage(bed, hosts, 2)
        assert wait_for(lambda: len([e for e in link_events(bed, before) if e[1] in hosts])
                        >= 12, seconds=60), (link_events(bed, before),
                                             bed.log("ibsnmpd.log"), bed.log("traps.log")[-3000:])
        events = [e for e in link_events(bed, before) if e[1] in hosts]
        # each told from its leaf's side, in the order it happened
        assert [(kind, remote) for kind, remote, _ in events] == order, events
        for kind, remote, when in events:
            assert when, "no ibsnmpdNotificationTime in a late notification"
            assert began - 2 <= date_and_time(when) <= ended + 1, (when, began, ended)
        times = [date_and_time(when) for _, _, when in events]
        assert times == sorted(times)
        assert value_of(bed, QUEUED) == 0
        assert value_of(bed, SENT_LATE) >= 12
        assert value_of(bed, DROPPED) == 0
        assert bed.log("ibsnmpd.log").count("kept while it was away sent") == 1
        # what is wrong now: the 8 links still down, each once, by both ends
        alarms = alarm_rows(bed)
        assert sorted(r["desc"] for r in alarms.values()) == \
            sorted(ends[h] for h in hosts[2:]), alarms
        assert all(r["notification"].endswith("ibsnmpdLinkDown") or
                   r["notification"] == LINK_DOWN for r in alarms.values()), alarms
        assert value_of(bed, ALARMS_ACTIVE) == 8
        for r in alarms.values():
            assert began - 2 <= date_and_time(r["began"]) <= ended + 1, r
        # live again: no time varbind
        since = len(notifications(bed))
        bed.simfabric("sim", 'ReLink "host-5"')
        assert wait_for(lambda: link_events(bed, since), seconds=30)
        assert link_events(bed, since)[0][2] is None
        # snmpd's NOTIFICATION-LOG-MIB (it has a trap2sink: it logs what it
        # forwards) holds them: the late ones and the live one
        logged = [v for _, v in bed.walk(NLM_NOTIFICATION_ID).values()]
        assert logged.count(LINK_DOWN) >= 10 and logged.count(LINK_UP) >= 3, logged
        # a restart of ibsnmpd finds them again: the same rows, the same times
        assert wait_for(lambda: value_of_or_none(bed, ALARMS_ACTIVE) == 7, seconds=30)
        alarms = alarm_rows(bed)
        bed.simfabric("stop", "ibsnmpd")
        bed.simfabric("start", "ibsnmpd")
        assert wait_for(lambda: value_of_or_none(bed, ALARMS_ACTIVE) == 7, seconds=60)
        again = alarm_rows(bed)
        assert {i: (r["desc"], r["began"]) for i, r in again.items()} == \
            {i: (r["desc"], r["began"]) for i, r in alarms.items()}, (alarms, again)
        assert all(r["uptime"].startswith("(0)") or r["uptime"] == "0"
                   for r in again.values()), again
        # a package-style restart of snmpd just after a link goes down
        since = len(notifications(bed))
        bed.simfabric("sim", 'Unlink "host-13"')
        bed.simfabric("stop", "snmpd")
        bed.simfabric("start", "snmpd")
        assert wait_for(lambda: [e for e in link_events(bed, since) if e[1] == "host-13"],
                        seconds=60), bed.log("ibsnmpd.log")
        time.sleep(3)
        assert [e[0] for e in link_events(bed, since) if e[1] == "host-13"] == ["down"]
        assert wait_for(lambda: value_of_or_none(bed, ALARMS_ACTIVE) == 8, seconds=30)
        # the trap receiver down while two more links go: the resync script
        # (what an NMS does after) reads every alarm, the missed ones too
        bed.simfabric("stop", "snmptrapd")
        since = len(notifications(bed))
        for h in ("host-14", "host-15"):
            bed.simfabric("sim", 'Unlink "%s"' % h)
        assert wait_for(lambda: value_of_or_none(bed, ALARMS_ACTIVE) == 10, seconds=30)
        bed.simfabric("start", "snmptrapd")
        assert not [e for e in link_events(bed, since) if e[1] in ("host-14", "host-15")]
        out = subprocess.run(["python3", os.path.join(TOP, "conf", "ibsnmpd-alarm-resync"),
                              "--json", "-v2c", "-c", "public", bed.target],
                             capture_output=True, text=True, env=snmp_env(), timeout=60)
        assert out.returncode == 0, out.stderr
        seen = [json.loads(line) for line in out.stdout.splitlines()]
        assert sorted(a["description"] for a in seen) == sorted(
            [r["desc"] for r in alarm_rows(bed).values()])
        down = [h for h in hosts[3:] + ["host-13", "host-14", "host-15"]]
        assert sorted(a["description"] for a in seen) == sorted(ends[h] for h in down), seen
        assert all(a["alarm"] == "ibsnmpdLinkDown" and a["severity"] == "major" for a in seen)
    finally:
        stop_testbed(bed)


def test_a_full_queue_drops_the_oldest_and_says_so_once():
    bed = start_testbed(big={"hosts": 16, "radix": 8},
                        extra_conf=["cacheLifetime fabricPorts 1", "notificationLimit 100 60",
                                    "trapSubscribe no", ROUTING_OFF,
                                    "notificationQueue 5"])
    try:
        hosts = ["host-%d" % i for i in range(3, 11)]
        time.sleep(3)
        before = len(notifications(bed))
        outage(bed, hosts, 0, hold=20)  # what overflows is the count, not the time
        assert wait_for(lambda: value_of_or_none(bed, SENT_LATE) == 5, seconds=60)
        # the newest five notifications came (the links' other ends may be
        # among them): the link downs kept are the last ones, in order
        events = [e for e in link_events(bed, before) if e[1] in hosts]
        assert events and [remote for _, remote, _ in events] == hosts[-len(events):], events
        # five came late (link notifications and the contexts' LLDP-MIB
        # lldpRemTablesChange), each with its time; snmpd's coldStart too
        late = [n for n in notifications(bed)[before:] if NOTIFICATION_TIME in n]
        assert len(late) == 5, notifications(bed)[before:]
        assert value_of(bed, DROPPED) >= len(hosts) - len(events)
        assert bed.log("ibsnmpd.log").count("dropping the oldest (notificationQueue 5)") == 1
    finally:
        stop_testbed(bed)


def value_of_or_none(bed, oid):
    out = bed.snmp("snmpget", oid, extra=["-Oqv"])
    return int(out.stdout.strip()) if out.returncode == 0 and out.stdout.strip().isdigit() \
        else None
