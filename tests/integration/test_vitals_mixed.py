"""Nodes that are not NVIDIA's, silent, or without a register, on the
project's simulator: each says why in IBSNMPD-MIB, a module whose PDDR is
missing is read from its EEPROM (MCIA, checked against mstreg), and a node
that does not answer costs a bounded number of vendor MADs, counted by the
simulator. (The other vendor MAD tests are test_vitals.py's; this bed is
apart so that ctest runs the two files side by side.)"""
import os
import re
import time

import pytest

from conftest import generated, guid_index, start_testbed, stop_testbed, wait_for
from test_vitals import CONF, LANE, MIB, MODULE, NODE, cell, mstreg


@pytest.fixture(scope="module")
def mixed_bed():
    """Nodes of other vendors, silent ones, ones without a register: set in the
    simulator before ibsnmpd starts (16 hosts on radix 8: leaves 1-4 with
    hosts on ports 1-4, spines 1-4 above them)."""
    b = start_testbed(big={"hosts": 16, "radix": 8}, extra_conf=CONF + ["pmDiscoveryInterval 600"],
                      with_agent=False)
    try:
        for command in ('Vendor "spine-1-1" other', 'Vendor "spine-1-2" silent',
                        'Vendor "spine-1-3" unsupported', 'Vendor "spine-1-4" noregister PDDR',
                        'Vendor "host-5" noregister MGIR'):
            b.simfabric("sim", command)
        b.start_service("ibsnmpd")
        assert wait_for(lambda: b.snmp("snmpget", MIB + "1.1.1.0").returncode == 0, seconds=60)
        yield b
    finally:
        stop_testbed(b)


def mcia(bed, lid, module, offset, size):
    """size octets of a module's EEPROM (page 0), as mstreg reads them"""
    reg = mstreg(bed, lid, "MCIA", "module=%d,device_address=%d,page_number=0,"
                 "i2c_device_address=0x50,size=%d" % (module, offset, size))
    raw = b"".join(reg["dword[%d]" % i].to_bytes(4, "big") for i in range(32))
    return raw[:size]


def test_other_vendors_silent_and_limited_nodes_say_why(mixed_bed):
    bed = mixed_bed
    nodes, _ = generated(bed)
    g = {name: guid for name, (_, guid, _, _) in nodes.items()}
    lids = {name: lid for name, (_, _, _, lid) in nodes.items()}
    status = lambda name: cell(bed, NODE, 3, guid_index(g[name]))
    assert wait_for(lambda: status("leaf-1-1") == "1" and status("spine-1-2") == "3",
                    seconds=60), {n: status(n) for n in g}
    assert status("spine-1-1") == "2"   # notNvidia: no MAD at all
    assert status("spine-1-3") == "4"   # unsupported
    assert status("host-5") == "5"      # noRegisters
    # PDDR not there: the modules from their EEPROM (MCIA)
    index = guid_index(g["spine-1-4"])
    assert wait_for(lambda: cell(bed, MODULE, 28, "%s.1" % index) == "2", seconds=60)  # eeprom
    assert cell(bed, NODE, 19, index) == "PDDR"
    upper = mcia(bed, lids["spine-1-4"], 0, 128, 128)  # CMIS upper page 00h
    assert cell(bed, MODULE, 9, "%s.1" % index) == upper[1:17].decode().rstrip()
    assert cell(bed, MODULE, 10, "%s.1" % index) == upper[20:36].decode().rstrip()
    assert cell(bed, MODULE, 11, "%s.1" % index) == upper[38:54].decode().rstrip()
    # the same model read by PDDR on a leaf (its ports 5-6 go up, optical too)
    ref = guid_index(g["leaf-1-1"])
    for col in (7, 8, 9, 10, 12):
        assert cell(bed, MODULE, col, "%s.1" % index) == cell(bed, MODULE, col, "%s.3" % ref)
    assert cell(bed, MODULE, 16, "%s.1" % index) is not None   # its temperature
    assert cell(bed, MODULE, 23, "%s.1" % index) == "-1000"    # its Rx low alarm
    assert int(cell(bed, LANE, 6, "%s.1.1" % index)) > 0        # its lanes' Rx power
    # a node that does not answer costs one try (a request and its
    # madRetries: at most 3 MADs) a minute, or a discovery, whatever the
    # sweeps: the simulator counts the vendor MADs that reach each node
    def vendor_mads(name, then=None):
        """the count the console prints in fabricsim.out; then: a command
        written with the question, that the simulator runs right after it,
        before any MAD (the console's lines of one read are run together)"""
        out = os.path.join(bed.dir, "fabricsim.out")
        seen = len(open(out, errors="replace").read())
        bed.simfabric("sim", 'Vendor "%s"' % name + ("\n" + then if then else ""))
        pattern = re.compile(r"(?:^|sim> )%s: (\d+) vendor MADs$" % re.escape(name), re.M)
        assert wait_for(lambda: pattern.search(open(out, errors="replace").read()[seen:]),
                        seconds=10)
        return int(pattern.search(open(out, errors="replace").read()[seen:]).group(1))

    def discoveries():
        return open(os.path.join(bed.dir, "ibsnmpd.log"), errors="replace").read().count(
            "subnet discovered")
    def followed():
        return open(os.path.join(bed.dir, "ibsnmpd.log"), errors="replace").read().count(
            "subnet changed")

    def flap():
        """a host's link down, then up: the topology follows both (the host
        gone, then back: read again, and nothing else)"""
        for command in ('Unlink "host-16"', 'ReLink "host-16"'):
            found = followed()
            bed.simfabric("sim", command)
            assert wait_for(lambda: followed() > found, seconds=60), \
                open(os.path.join(bed.dir, "ibsnmpd.log"), errors="replace").read()[-3000:]
        time.sleep(8)  # the host's inventory and readings after it

    # a node that stops answering keeps its last values, stale; the rest go on
    names = ("leaf-1-3", "spine-1-2")  # readings unanswered; GeneralInfo unanswered
    found = discoveries()
    # the dead one's count and its death at once: a readings sweep under way
    # meanwhile (some thirty MADs, answered) was counted as the dead one's
    # when the machine was loaded
    before = {"leaf-1-3": vendor_mads("leaf-1-3", then='Dead "leaf-1-3"'),
              "spine-1-2": vendor_mads("spine-1-2")}
    dead = guid_index(g["leaf-1-3"])
    assert wait_for(lambda: cell(bed, NODE, 21, dead) == "1", seconds=60)
    assert cell(bed, NODE, 4, dead) == "31.2012.4036"
    assert cell(bed, NODE, 21, guid_index(g["leaf-1-1"])) == "2"
    time.sleep(20)  # six readings sweeps more, no discovery (pmDiscoveryInterval 600)
    assert discoveries() == found
    # since it died, the dead one got one try at most: the requests the engine
    # lets be in flight to a LID (madMaxPerDestination, 4) and their retries
    # (madRetries, 2), 12 MADs, and the one probe of the MAD engine that the
    # try's other requests, failed at once, asked for; the readings sweeps
    # after it leave the node out and ask nothing. When the try comes
    # depends on the sweeps, so the whole time is counted. The silent one:
    # none.
    used = {name: vendor_mads(name) - before[name] for name in names}
    assert used["leaf-1-3"] <= 4 * 3 + 1 and used["spine-1-2"] == 0, used
    # the MADs the sweeps cost stay bounded: the silent and dead nodes are
    # not asked again and again
    sent = lambda: int(bed.get(MIB + "1.1.1.0")[MIB + "1.1.1.0"][1])
    time.sleep(4)
    first = sent()
    time.sleep(12)
    second = sent()
    time.sleep(12)
    third = sent()
    assert abs((third - second) - (second - first)) <= 0.2 * (second - first) + 50, \
        (first, second, third)
    # back: read again a minute after its silence began (the engine's own
    # silence for the LID ends within a minute too); a host's flap
    # meanwhile reads that host, not the silent one (nor the dead one)
    bed.simfabric("sim", 'Alive "leaf-1-3"')
    silent_before = vendor_mads("spine-1-2")
    flap()
    assert wait_for(lambda: cell(bed, NODE, 21, dead) == "2", seconds=90)
    assert vendor_mads("spine-1-2") == silent_before
