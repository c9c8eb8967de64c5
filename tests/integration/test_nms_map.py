"""The fabric on an NMS's map: LLDP-MIB and ENTITY-MIB in every node's
context of the 612-node fat tree, read by Netdisco's own device library
(SNMP::Info) and by snmpwalk, checked against ibnetdiscover's links and
smpquery nodeinfo on the same fabric; a link unlinked and relinked in the
simulator takes its LLDP rows with it and brings them back. Names resolve
with snmptranslate through the test-only modules of tests/mibs/."""
import glob
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import (TOP, fields, links, node_guids, parse_varbinds, snmp_env, start_testbed,
                      stop_testbed, wait_for)

BASE = os.environ.get("IBSNMPD_BASE_MIBS", "/var/cache/ibsnmpd-test/base-mibs")
TEST_MIBS = os.path.join(TOP, "tests", "mibs")
SYS_UP_TIME = ".1.3.6.1.2.1.1.3.0"
SNMP_INFO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snmp_info_node.pl")


def base_dir():
    found = glob.glob(os.path.join(BASE, "usr/lib/erlang/lib/snmp-*/mibs"))
    if not found:
        pytest.skip("base MIB modules not extracted to %s (run scripts/install-deps)" % BASE)
    return found[0]


_oids = {}


def oid(name):
    """A MIB name as snmptranslate resolves it (the test-only modules)."""
    if name not in _oids:
        out = subprocess.run(["snmptranslate", "-M", "%s:%s" % (base_dir(), TEST_MIBS),
                              "-m", "LLDP-MIB:ENTITY-MIB:IF-MIB", "-On", name],
                             capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.strip(), (name, out.stderr)
        _oids[name] = out.stdout.strip()
    return _oids[name]


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(topology="fattree-612.net", node="h1-1",
                      extra_conf=["cacheLifetime fabricPorts 2", "cacheLifetime pmCounters 5",
                                  "nodeContextTypes switch ca router"])
    try:
        assert wait_for(lambda: "node contexts: 612 registered" in b.log("ibsnmpd.log"),
                        seconds=90), b.log("ibsnmpd.log")
        yield b
    finally:
        stop_testbed(b)


@pytest.fixture(scope="module")
def fabric(bed):
    """(guids {name: (GUID, LID)}, peers {(name, port): (peer, peer port)},
    switches [names]) as ibnetdiscover shows them."""
    switches = re.findall(r'^Switch\s+\d+\s+"S-[0-9a-f]+"\s+# "([^"]+)"',
                          bed.run_on_node("ibnetdiscover"), re.M)
    return node_guids(bed), links(bed), switches


def ctx(guid):
    return "ib-%016x" % guid


def column(walked, col_oid):
    """{index arcs (tuple): value} of one column of a walk."""
    prefix = col_oid + "."
    return {tuple(int(a) for a in k[len(prefix):].split(".")): v[1]
            for k, v in walked.items() if k.startswith(prefix)}


def neighbours(bed, context):
    """{local port: (chassis ID, port ID)} of a context's lldpRemTable."""
    walked = bed.v3_walk(context, oid("LLDP-MIB::lldpRemTable"))
    chassis = column(walked, oid("LLDP-MIB::lldpRemChassisId"))
    port = column(walked, oid("LLDP-MIB::lldpRemPortId"))
    subtype = column(walked, oid("LLDP-MIB::lldpRemChassisIdSubtype"))
    assert set(subtype.values()) <= {"7"}  # local(7)
    # index: lldpRemTimeMark, lldpRemLocalPortNum, lldpRemIndex; a walk goes
    # column by column, so a row that came or went meanwhile is in one
    # column only: what both columns hold
    return {idx[1]: (chassis[idx].strip('"'), port[idx].strip('"')) for idx in chassis
            if idx in port}


def stat(bed, context, name):
    out = bed.v3("snmpget", context, oid("LLDP-MIB::%s" % name) + ".0")
    assert out.returncode == 0, out.stderr
    return int(list(parse_varbinds(out.stdout).values())[0][1])


def ticks(bed, context, *oids):
    """The TimeTicks of oids in one request, in order."""
    out = bed.v3("snmpget", context, *oids)
    assert out.returncode == 0, out.stderr
    return [int(n) for n in re.findall(r"Timeticks: \((\d+)\)", out.stdout)]


def expected(guids, peers, node):
    return {port: ("0x%016x" % guids[peer][0], str(pport))
            for (n, port), (peer, pport) in peers.items() if n == node}


def test_every_link_is_seen_from_both_ends(bed, fabric):
    """lldpRemTable of all 612 contexts against ibnetdiscover: every
    context's rows are its links, so every link is seen from both ends, and
    nothing else is there."""
    guids, peers, _ = fabric

    def check(name):
        return name, neighbours(bed, ctx(guids[name][0]))
    with ThreadPoolExecutor(4) as pool:
        seen = dict(pool.map(check, sorted(guids)))
    assert len(seen) == 612
    ends = set()
    for name, rows in seen.items():
        assert rows == expected(guids, peers, name), name
        ends |= {(name, p) for p in rows}
    assert ends == set(peers)


def snmp_info(bed, guid):
    if not shutil.which("perl") or subprocess.run(["perl", "-MSNMP::Info", "-e", "1"]).returncode:
        pytest.skip("SNMP::Info (libsnmp-info-perl) not installed")
    v3 = bed.env["SNMP_V3_ARGS"].split()
    user, auth, priv = (v3[v3.index(flag) + 1] for flag in ("-u", "-A", "-X"))
    host, port = bed.target.replace("udp:", "").rsplit(":", 1)
    out = subprocess.run(["perl", SNMP_INFO, host, port, ctx(guid),
                          "%s:%s" % (base_dir(), TEST_MIBS), user, auth, priv],
                         capture_output=True, text=True, env=dict(snmp_env(), MIBS=""),
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_snmp_info_draws_a_leaf_a_spine_and_a_ca(bed, fabric):
    guids, peers, switches = fabric
    cas = [n for n in guids if n not in switches]
    leaf = next(s for s in switches if any(p in cas for (n, _), (p, _) in peers.items()
                                           if n == s))
    spine = next(s for s in switches if all(p in switches for (n, _), (p, _) in peers.items()
                                            if n == s))
    ca = next(c for c in cas if c != "h1-1")
    for name in (leaf, spine, ca):
        guid = guids[name][0]
        got = snmp_info(bed, guid)
        assert got["has_topo"] == ["lldp"], name
        assert got["lldp_loc_id"] == "0x%016x" % guid
        assert got["name"] == name
        # one neighbour per linked port, the one ibnetdiscover shows there
        mine = {port: peer for (n, port), peer in peers.items() if n == name}
        assert sorted(int(p) for p in got["c_if"].values()) == sorted(mine), name
        for key, local in got["c_if"].items():
            peer, pport = mine[int(local)]
            assert got["c_id"][key] == "0x%016x" % guids[peer][0], (name, local)
            # the peer's port as its own context's ifDescr names it
            assert got["c_port"][key].startswith("%s port %d (InfiniBand" % (peer, pport))
            assert '"%s"' % peer in got["c_platform"][key]
        # its interfaces: every port, named as ifName
        nports = int(fields(bed.run_on_node("smpquery", "nodeinfo",
                                            str(guids[name][1])))["NumPorts"])
        assert got["i_name"] == {str(p): "%s/%d" % (name, p) for p in range(1, nports + 1)}
        # its inventory: the chassis and its ports, each port mapped to its ifIndex
        classes = got["e_class"]
        assert sorted(classes.values()) == ["chassis"] + ["port"] * nports
        assert got["e_port"] == {str(1000 + p): str(p) for p in range(1, nports + 1)}


def test_an_unlinked_link_takes_its_rows_and_relinked_brings_them_back(bed, fabric):
    guids, peers, switches = fabric
    (a, a_port), (b, b_port) = next(((n, p), peer) for (n, p), peer in sorted(peers.items())
                                    if n in switches and peer[0] in switches)
    ca, cb = ctx(guids[a][0]), ctx(guids[b][0])
    deletes = {c: stat(bed, c, "lldpStatsRemTablesDeletes") for c in (ca, cb)}
    inserts = {c: stat(bed, c, "lldpStatsRemTablesInserts") for c in (ca, cb)}
    if_last_change = oid("IF-MIB::ifLastChange") + ".%d" % a_port
    changed_before, = ticks(bed, ca, if_last_change)
    bed.simfabric("sim", 'Unlink "%s"[%d]' % (a, a_port))
    try:
        assert wait_for(lambda: a_port not in neighbours(bed, ca) and
                        b_port not in neighbours(bed, cb), seconds=60)
        for c in (ca, cb):
            assert stat(bed, c, "lldpStatsRemTablesDeletes") == deletes[c] + 1
        # the port's ifLastChange moved, and is no later than sysUpTime
        up, changed_now = ticks(bed, ca, SYS_UP_TIME, if_last_change)
        assert changed_before < changed_now <= up
        # smpquery agrees: the port is down
        info = fields(bed.run_on_node("smpquery", "portinfo", str(guids[a][1]), str(a_port)))
        assert info["LinkState"] == "Down"
    finally:
        bed.simfabric("sim", 'ReLink "%s"[%d]' % (a, a_port))
    assert wait_for(lambda: neighbours(bed, ca).get(a_port) == ("0x%016x" % guids[b][0],
                                                                str(b_port)), seconds=60)
    assert wait_for(lambda: b_port in neighbours(bed, cb), seconds=30)
    for c in (ca, cb):
        assert stat(bed, c, "lldpStatsRemTablesInserts") == inserts[c] + 1
    # the row came back with a later time mark, not below the change time
    out = bed.v3("snmpget", ca, oid("LLDP-MIB::lldpStatsRemTablesLastChangeTime") + ".0")
    changed = int(re.search(r"\((\d+)\)", out.stdout).group(1))
    walked = bed.v3_walk(ca, oid("LLDP-MIB::lldpRemChassisId"))
    marks = {idx[1]: idx[0] for idx in column(walked, oid("LLDP-MIB::lldpRemChassisId"))}
    assert marks[a_port] >= changed > 0


def test_entity_mib_is_the_node_smpquery_reads(bed, fabric):
    guids, peers, switches = fabric
    for name in (switches[0], "h1-2"):
        guid, lid = guids[name]
        info = fields(bed.run_on_node("smpquery", "nodeinfo", str(lid)))
        nports = int(info["NumPorts"])
        context = ctx(guid)
        walked = bed.v3_walk(context, oid("ENTITY-MIB::entityMIB"))
        cls = column(walked, oid("ENTITY-MIB::entPhysicalClass"))
        model = column(walked, oid("ENTITY-MIB::entPhysicalModelName"))
        contained = column(walked, oid("ENTITY-MIB::entPhysicalContainedIn"))
        names = column(walked, oid("ENTITY-MIB::entPhysicalName"))
        alias = column(walked, oid("ENTITY-MIB::entAliasMappingIdentifier"))
        assert cls[(1,)] == "3" and contained[(1,)] == "0"  # chassis(3), in nothing
        ports = sorted(i[0] for i, v in cls.items() if v == "10")  # port(10)
        assert ports == [1000 + p for p in range(1, nports + 1)]
        assert all(contained[(i,)] == "1" for i in ports)
        assert model[(1,)].strip('"') == "vendor 0x%06x device 0x%04x" % (
            int(info["VendorId"], 16), int(info["DevId"], 16))
        # each port: its ifIndex, and the name ifName has
        if_names = column(bed.v3_walk(context, oid("IF-MIB::ifName")), oid("IF-MIB::ifName"))
        for p in range(1, nports + 1):
            assert alias[(1000 + p, 0)] == oid("IF-MIB::ifIndex") + ".%d" % p
            assert names[(1000 + p,)] == if_names[(p,)]


def test_the_default_context_serves_no_lldp(bed):
    out = bed.snmp("snmpbulkwalk", oid("LLDP-MIB::lldpMIB"), timeout=5)
    assert out.returncode == 0
    assert not [line for line in out.stdout.splitlines()
                if line.startswith(oid("LLDP-MIB::lldpMIB") + ".")]
