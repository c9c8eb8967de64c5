"""Every link of the subnet (IBSNMPD-MIB::ibsnmpdFabricPortTable), its
baseline and the link notifications, on the 612-node fat tree, checked
against iblinkinfo, ibnetdiscover and smpquery on the same fabric.

ibsnmpd runs with tests/tools/sim_issm_shim.c preloaded (the simulator hands
SA Reports, trap 128 among them, only to IsSM clients). A width change
sends no trap 128: the periodic sweep (10 s here) finds it.
bench/fabric_sweep.py measures how soon a notification follows an Unlink."""
import os
import re
import time

import pytest

from conftest import (TRAP_OID, node_guids, notifications, parse_varbinds, start_testbed,
                      stop_testbed, tool_path, wait_for)

TABLE = ".1.3.6.1.4.1.8072.9999.9999.117.1.5.1.1."
FABRIC = ".1.3.6.1.4.1.8072.9999.9999.117.1.5."
NOTIFY = ".1.3.6.1.4.1.8072.9999.9999.117.0."
NODE = ".1.3.6.1.4.1.8072.9999.9999.117.1.6.1.1."  # ibsnmpdNodeEntry
NODE_CONTEXT = NODE + "6."
COL = {"desc": 3, "type": 4, "lid": 5, "state": 6, "phys": 7, "width": 8, "wsup": 9, "wen": 10,
       "speed": 11, "rate": 14, "rguid": 15, "rdesc": 16, "rport": 17, "degraded": 18,
       "change": 19, "base": 22, "bwidth": 23, "bspeed": 24, "stale": 25}
STATES = {"Down": 1, "Initialize": 2, "Init": 2, "Armed": 3, "Active": 4}
PHYS = {"Sleep": 1, "Polling": 2, "Disabled": 3, "PortConfigurationTraining": 4, "LinkUp": 5,
        "LinkErrorRecovery": 6, "PhyTest": 7}
SPEEDS = {"2.5": 1, "5.0": 2, "10.0": 3}
LINK = re.compile(r'^\s+(?:0x[0-9a-f]+\s+)?(\d+)\s+(\d+)\[\s*\]\s+==\(\s*(?:(\d+)X\s+([\d.]+) '
                  r'Gbps\s+)?(\w+)/\s*(\w+)\)==>\s+(?:(\d+)\s+(\d+)\[\s*\]\s+"([^"]*)")?')


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(topology="fattree-612.net", node="h1-1",
                      preload=tool_path("sim_issm_shim.so", "SIM_ISSM_SHIM"),
                      extra_conf=["fabricStateFile {dir}/links.state",
                                  "cacheLifetime fabricPorts 10",
                                  "notificationLimit 1000 60"])
    try:
        assert wait_for(lambda: "subscribed to trap 128" in b.log("ibsnmpd.log"), seconds=60)
        assert wait_for(lambda: rows(b), seconds=60)
        yield b
    finally:
        stop_testbed(b)


def index(guid, port):
    return ".".join(str(x) for x in guid.to_bytes(8, "big")) + ".%d" % port


def rows(bed, column="state"):
    """{(guid, port): value} of one column (GUIDs in hex)."""
    res = {}
    prefix = TABLE + "%d." % COL[column]
    out = bed.snmp("snmpbulkwalk", TABLE + "%d" % COL[column],
                   extra=["-Ox"] if column == "rguid" else [])
    assert out.returncode == 0, out.stderr
    for oid, (_, value) in parse_varbinds(out.stdout).items():
        if not oid.startswith(prefix):
            continue
        arcs = [int(x) for x in oid[len(prefix):].split(".")]
        res[(int.from_bytes(bytes(arcs[:8]), "big"), arcs[8])] = value
    return res


def row(bed, guid, port):
    got = bed.get(*(TABLE + "%d." % c + index(guid, port) for c in COL.values()))
    by_col = {c: v[1] for oid, v in got.items() for name, c in COL.items()
              if oid.startswith(TABLE + "%d." % c)}
    return {name: by_col[c] for name, c in COL.items()}


def iblinkinfo(bed):
    """{(node description, port): (state, phys, lanes, speed, remote desc, remote port)}"""
    res, node = {}, None
    for line in bed.run_on_node("iblinkinfo").splitlines():
        m = re.match(r"^(?:Switch: 0x[0-9a-f]+|CA:) (.+):$", line)
        if m:
            node = m.group(1)
            continue
        m = LINK.match(line)
        if m and node:
            res[(node, int(m.group(2)))] = (
                STATES[m.group(5)], PHYS[m.group(6)], int(m.group(3) or 0),
                SPEEDS.get(m.group(4)), m.group(9), int(m.group(8) or 0))
    return res


def link_notifications(bed, number, after=0):
    return [n for n in notifications(bed)[after:] if n.get(TRAP_OID) == NOTIFY + str(number)]


def obj(n, column):
    """The value of a column in a notification, and the row it names."""
    for name, value in n.items():
        if name.startswith(TABLE + "%d." % COL[column]):
            arcs = [int(x) for x in name[len(TABLE + "%d." % COL[column]):].split(".")]
            return value, (int.from_bytes(bytes(arcs[:8]), "big"), arcs[8])
    return None, None


def wait_link(bed, number, after, ends):
    """The notifications `number` since `after` naming the link `ends`
    ({(guid, port), (guid, port)}), from either end."""
    found = []

    def seen():
        found[:] = []
        for n in link_notifications(bed, number, after):
            desc, here = obj(n, "desc")
            rport, _ = obj(n, "rport")
            rguid, _ = obj(n, "rguid")
            there = (int(rguid.replace(" ", ""), 16), int(rport))
            if {here, there} == ends:
                found.append(n)
        return found
    assert wait_for(seen, seconds=90), "no notification %d for %s in %s" % (
        number, ends, notifications(bed)[after:])
    return found


def test_every_port_as_iblinkinfo_and_ibnetdiscover_show_it(bed):
    guids = node_guids(bed)
    desc_of = {g: d for d, (g, _) in guids.items()}
    theirs = iblinkinfo(bed)
    cols = {c: rows(bed, c) for c in ("desc", "state", "phys", "width", "speed", "rguid",
                                      "rport", "rdesc", "degraded", "base")}
    assert len(cols["state"]) == len(theirs) == 1872
    linked = 0
    for (guid, port), state in cols["state"].items():
        node = desc_of[guid]
        assert cols["desc"][(guid, port)].strip('"') == node
        st, phys, lanes, speed, rdesc, rport = theirs[(node, port)]
        assert (int(state), int(cols["phys"][(guid, port)])) == (st, phys), (node, port)
        if phys == 5:
            linked += 1
            assert int(cols["width"][(guid, port)]) == lanes
            assert int(cols["speed"][(guid, port)]) == speed
            rguid = int(cols["rguid"][(guid, port)].replace(" ", ""), 16)
            assert (desc_of[rguid], int(cols["rport"][(guid, port)])) == (rdesc, rport)
            assert cols["base"][(guid, port)] == "1"
            assert cols["degraded"][(guid, port)] == "2"
        else:
            assert cols["base"][(guid, port)] == "2"  # empty ports: never linked
            assert cols["rguid"][(guid, port)] in ('""', "")
    assert linked == 1728
    counts = bed.get(FABRIC + "3.0", FABRIC + "4.0", FABRIC + "5.0")
    assert [v[1] for v in counts.values()] == ["1728", "0", "0"]


def test_switch_link_down_and_up_is_one_notification_each(bed):
    guids = node_guids(bed)
    leaf, spine = guids["leaf3"][0], guids["spine4"][0]
    # leaf3 port 28 is cabled to spine4 port 3 (gen-fattree: uplink k to spine k, port = leaf)
    ends = {(leaf, 28), (spine, 3)}
    assert row(bed, leaf, 28)["rport"] == "3"
    before = len(notifications(bed))
    bed.simfabric("sim", 'Unlink "leaf3"[28]')
    down = wait_link(bed, 1, before, ends)
    time.sleep(3)
    assert len(wait_link(bed, 1, before, ends)) == 1, "a link down from both ends is one event"
    n = down[0]
    assert obj(n, "state")[0] == "1" and obj(n, "width")[0] == "0"
    # the context the end's node is served in as a device (ibsnmpdNodeContext)
    here = obj(n, "desc")[1][0]
    assert [v for k, v in n.items() if k.startswith(NODE_CONTEXT)] == ["ib-%016x" % here]
    assert {obj(n, "desc")[0], obj(n, "rdesc")[0]} == {"leaf3", "spine4"}
    r = row(bed, leaf, 28)
    assert (r["state"], r["base"], r["rport"], r["rdesc"]) == ("1", "1", "3", '"spine4"')
    assert re.search(r"^LinkState:\.+Down$", bed.run_on_node(
        "smpquery", "portinfo", str(guids["leaf3"][1]), "28"), re.M)
    assert int(bed.get(FABRIC + "4.0")[FABRIC + "4.0"][1]) == 2  # both ends lost
    before = len(notifications(bed))
    bed.simfabric("sim", 'ReLink "leaf3"[28]')
    up = wait_link(bed, 2, before, ends)
    assert obj(up[0], "width")[0] == "4"
    assert wait_for(lambda: row(bed, leaf, 28)["state"] == "4", seconds=60)
    theirs = bed.run_on_node("smpquery", "portinfo", str(guids["leaf3"][1]), "28")
    assert re.search(r"^LinkState:\.+Active$", theirs, re.M)


def test_narrowed_link_is_degraded_until_restored(bed):
    guids = node_guids(bed)
    leaf, lid = guids["leaf5"]
    spine = guids["spine2"][0]
    ends = {(leaf, 26), (spine, 5)}
    before = len(notifications(bed))
    bed.run_on_node("ibportstate", str(lid), "26", "width", "1")
    deg = wait_link(bed, 3, before, ends)[0]
    assert obj(deg, "width")[0] == "1" and obj(deg, "bwidth")[0] == "4"
    # (LinkWidthSupported always lists 1X: the active width is what tells)
    assert re.search(r"^LinkWidthActive:\.+1X$",
                     bed.run_on_node("smpquery", "portinfo", str(lid), "26"), re.M)
    assert wait_for(lambda: row(bed, leaf, 26)["degraded"] == "1", seconds=60)
    assert row(bed, leaf, 26)["width"] == "1"
    before = len(notifications(bed))
    bed.run_on_node("ibportstate", str(lid), "26", "width", "2")
    wait_link(bed, 4, before, ends)
    assert wait_for(lambda: row(bed, leaf, 26)["degraded"] == "2", seconds=60)


def test_baseline_survives_a_restart_and_a_bad_file_is_replaced(bed):
    guids = node_guids(bed)
    host, leaf = guids["h7-9"][0], guids["leaf7"][0]
    ends = {(host, 1), (leaf, 9)}
    before = len(notifications(bed))
    bed.simfabric("sim", 'Unlink "h7-9"[1]')
    wait_link(bed, 1, before, ends)
    state = os.path.join(bed.dir, "links.state")
    assert wait_for(lambda: "link %016x 9 4 1 down" % leaf in open(state).read(), seconds=30)
    bed.simfabric("stop", "ibsnmpd")
    bed.simfabric("start", "ibsnmpd")
    assert wait_for(lambda: "fabric baseline: 1728 links from" in bed.log("ibsnmpd.log"))
    assert wait_for(lambda: rows(bed).get((host, 1)) == "1", seconds=90)
    r = row(bed, host, 1)  # the host is no longer reached: still a lost link
    assert (r["base"], r["stale"], r["rdesc"]) == ("1", "1", '"leaf7"')
    assert row(bed, leaf, 9)["state"] == "1"
    time.sleep(2)
    assert len(wait_link(bed, 1, before, ends)) == 1, "told again after the restart"
    before = len(notifications(bed))
    bed.simfabric("sim", 'ReLink "h7-9"[1]')
    wait_link(bed, 2, before, ends)
    # a corrupt state file: said in the log, replaced, nothing else changes
    bed.simfabric("stop", "ibsnmpd")
    with open(state, "w") as f:
        f.write("ibsnmpd-fabric-baseline 1\nlink zz\n")
    bed.simfabric("start", "ibsnmpd")
    assert wait_for(lambda: "links.state:line 2: expected: link" in bed.log("ibsnmpd.log"))
    assert wait_for(lambda: open(state).read().count("\nlink ") == 1728, seconds=90)


def test_baseline_reset_by_set(bed):
    guids = node_guids(bed)
    leaf, spine = guids["leaf9"][0], guids["spine6"][0]
    before = len(notifications(bed))
    bed.simfabric("sim", 'Unlink "leaf9"[30]')
    wait_link(bed, 1, before, {(leaf, 30), (spine, 9)})
    out = bed.snmp("snmpset", FABRIC + "2.0", "i", "1", community=bed.env["SNMP_RW_COMMUNITY"])
    assert out.returncode == 0, out.stderr
    assert wait_for(lambda: bed.get(FABRIC + "3.0")[FABRIC + "3.0"][1] == "1726", seconds=30)
    assert row(bed, leaf, 30)["base"] == "2"
    out = bed.snmp("snmpset", FABRIC + "2.0", "i", "3", community=bed.env["SNMP_RW_COMMUNITY"])
    assert "wrongValue" in out.stderr
    bed.simfabric("sim", 'ReLink "leaf9"[30]')
    assert wait_for(lambda: bed.get(FABRIC + "3.0")[FABRIC + "3.0"][1] == "1728", seconds=90)


def test_a_node_without_a_lid_is_read_by_directed_route():
    """With the SM gone, hca3's port is reset (ibsim's Clear, then ReLink): it
    comes back with LID 0 in Initialize. The next discovery gives its
    directed route, and the sweep reads it there, as smpquery -D does."""
    b = start_testbed(node="hca1", extra_conf=["pmDiscoveryInterval 10",
                                               "cacheLifetime fabricPorts 2",
                                               "fabricStateFile {dir}/links.state"])
    try:
        hca3 = node_guids(b)["hca3"][0]
        b.simfabric("stop", "opensm")
        b.simfabric("sim", 'Clear "hca3"')
        b.simfabric("sim", 'ReLink "hca3"')
        theirs = b.run_on_node("smpquery", "-D", "portinfo", "0,1,3")
        assert re.search(r"^Lid:\.+0$", theirs, re.M)
        assert re.search(r"^LinkState:\.+Initialize$", theirs, re.M)
        assert wait_for(lambda: row(b, hca3, 1)["lid"] == "0" and
                        row(b, hca3, 1)["state"] == "2", seconds=90)
        r = row(b, hca3, 1)
        assert (r["phys"], r["stale"], r["rdesc"]) == ("5", "2", '"sw1"')
    finally:
        stop_testbed(b)


def node_row(bed, guid):
    """(LID, reachable) of a node in ibsnmpdNodeTable"""
    idx = ".".join(str(x) for x in guid.to_bytes(8, "big"))
    got = bed.get(NODE + "4." + idx, NODE + "7." + idx)
    return tuple(v[1] for v in got.values())


def test_a_host_unlinked_relinked_and_moved_is_followed_by_probes(bed):
    """ibsim's Unlink, ReLink and Link of a host's cable, told by opensm's
    trap 128: the host leaves ibsnmpd's topology as it leaves ibnetdiscover's,
    comes back at the LID ibnetdiscover shows, and its cable moved to a free
    port of a spine is served where ibnetdiscover shows it, each by probes
    around the switch's port rather than a discovery of the subnet."""
    guids = node_guids(bed)
    host, lid = guids["h5-3"]
    spine = guids["spine1"][0]
    mark = bed.log_size()
    bed.simfabric("sim", 'Unlink "h5-3"[1]')
    assert wait_for(lambda: "h5-3" not in node_guids(bed), seconds=30)
    assert wait_for(lambda: node_row(bed, host)[1] == "2", seconds=60)
    bed.simfabric("sim", 'ReLink "h5-3"[1]')
    assert wait_for(lambda: node_guids(bed).get("h5-3") == (host, lid), seconds=60)
    assert wait_for(lambda: node_row(bed, host) == (str(lid), "1"), seconds=60)
    # the cable from leaf5 port 3 to spine1's free port 30 (ibsim links free
    # ports: unplugged first)
    bed.simfabric("sim", 'Unlink "h5-3"[1]')
    bed.simfabric("sim", 'Link "spine1"[30] "h5-3"[1]')
    assert wait_for(lambda: re.search(r'^\[30\]\s+"H-%016x"\[1\]' % host,
                                      bed.run_on_node("ibnetdiscover"), re.M), seconds=30)
    assert wait_for(lambda: row(bed, spine, 30)["state"] == "4" and
                    row(bed, spine, 30)["rdesc"] == '"h5-3"', seconds=60)
    lid = node_guids(bed)["h5-3"][1]
    assert wait_for(lambda: node_row(bed, host) == (str(lid), "1"), seconds=60)
    log = "\n".join(bed.log_since(mark))
    assert "subnet changed: 1 links gone, 1 nodes no longer reached" in log, log
    assert "1 nodes new" in log, log
    assert "rediscovering the subnet" not in log, log
