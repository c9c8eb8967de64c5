"""Several fabrics: a host on two fabrics runs one ibsnmpd a fabric under
one snmpd (simfabric up --big 16 --fabrics 2: two simulators, GUIDs apart),
each with fabricName. Each instance serves in its fabric's SNMP context what
it would serve in the default one, and that context's tables are what
ibnetdiscover says of that fabric; its notifications and its /metrics name
its fabric; stopping one leaves the other served."""
import re
import time
import urllib.request

import pytest

from conftest import TRAP_OID, links, notifications, start_testbed, stop_testbed, wait_for
from prometheus_server import free_port

MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
FABRIC_NAME = MIB + "1.10.1.0"
PORT = MIB + "1.5.1.1."             # ibsnmpdFabricPortEntry
NODE_GUID = ".1.3.6.1.3.117.3.1.1.7.0"
LINK_DOWN = MIB + "0.1"
PORTS = {1: free_port(), 2: free_port()}


@pytest.fixture(scope="module")
def bed():
    # snmpd maps a community to the second fabric's context, as README shows
    b = start_testbed(big={"hosts": 16, "radix": 8, "fabrics": 2},
                      extra_conf=["cacheLifetime fabricPorts 2", "notificationLimit 100 60",
                                  "trapSubscribe no"],
                      snmpd_extra=["com2sec -Cn fabric-2 fabric2Sec 127.0.0.1 fabric2-ro",
                                   "group fabric2Group v2c fabric2Sec",
                                   "view fabric2All included .1",
                                   "access fabric2Group fabric-2 any noauth exact fabric2All "
                                   "none none"])
    try:
        # each instance its own /metrics port: then started again with it
        for n in (1, 2):
            name = "ibsnmpd" + ("" if n == 1 else "-2")
            with open(b.path(name + ".conf"), "a") as f:
                f.write("prometheusListen 127.0.0.1:%d\n" % PORTS[n])
            b.simfabric("stop", name)
            b.simfabric("start", name)
        for n in (1, 2):
            assert wait_for(lambda: context_value(b, "fabric-%d" % n, FABRIC_NAME), seconds=60)
        yield b
    finally:
        stop_testbed(b)


def context_value(bed, context, oid):
    out = bed.v3("snmpget", context, oid)
    m = re.search(r"= (?:STRING|Hex-STRING): (.*)$", out.stdout.strip())
    return m.group(1).strip('"') if out.returncode == 0 and m else None


def ends(bed, context):
    """{(node, port): (remote node, remote port)} of the link table in a context"""
    def column(n):
        prefix = PORT + "%d." % n
        return {oid[len(prefix):]: v.strip('"') for oid, (_, v) in
                bed.v3_walk(context, prefix[:-1]).items()}
    desc, rdesc, rport = column(3), column(16), column(17)
    return {(desc[i], int(i.rsplit(".", 1)[1])): (rdesc[i], int(rport[i]))
            for i in rdesc if rdesc[i] and i in desc and i in rport}


def metrics(n):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % PORTS[n], timeout=30) as r:
        return r.read().decode()


def test_each_context_serves_its_own_fabric(bed):
    guids = set()
    for n in (1, 2):
        context = "fabric-%d" % n
        assert context_value(bed, context, FABRIC_NAME) == context
        guids.add(context_value(bed, context, NODE_GUID))
        theirs = links(bed, fabric=n)
        assert wait_for(lambda: ends(bed, context) == theirs, seconds=60), \
            (ends(bed, context), theirs)
    assert len(guids) == 2  # two fabrics, each its own host-1
    # SNMPv2c through the community snmpd maps to the context
    out = bed.snmp("snmpget", FABRIC_NAME, NODE_GUID, community="fabric2-ro")
    assert '"fabric-2"' in out.stdout and out.returncode == 0, out.stdout + out.stderr
    # nothing of ibsnmpd's in the default context
    assert "No Such" in bed.get(NODE_GUID)[NODE_GUID][1]


def test_notifications_and_metrics_name_their_fabric(bed):
    since = len(notifications(bed))
    bed.simfabric("sim", "--fabric", "2", 'Unlink "host-5"')
    try:
        assert wait_for(lambda: [n for n in notifications(bed)[since:]
                                 if n.get(TRAP_OID) == LINK_DOWN], seconds=60)
        downs = [n for n in notifications(bed)[since:] if n.get(TRAP_OID) == LINK_DOWN]
        assert all(n.get(FABRIC_NAME) == '"fabric-2"' or n.get(FABRIC_NAME) == "fabric-2"
                   for n in downs), downs
    finally:
        bed.simfabric("sim", "--fabric", "2", 'ReLink "host-5"')
    for n in (1, 2):
        text = metrics(n)
        samples = [l for l in text.splitlines() if l and not l.startswith("#")]
        assert samples and all('fabric="fabric-%d"' % n in l for l in samples), \
            [l for l in samples if 'fabric="fabric-%d"' % n not in l][:3]


def test_stopping_one_instance_leaves_the_other_served(bed):
    bed.simfabric("stop", "ibsnmpd-2")
    try:
        time.sleep(2)
        assert context_value(bed, "fabric-2", FABRIC_NAME) is None
        assert context_value(bed, "fabric-1", FABRIC_NAME) == "fabric-1"
        assert ends(bed, "fabric-1") == links(bed, fabric=1)
    finally:
        bed.simfabric("start", "ibsnmpd-2")
    assert wait_for(lambda: context_value(bed, "fabric-2", FABRIC_NAME) == "fabric-2",
                    seconds=60)
