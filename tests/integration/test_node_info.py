"""SMA-MIB Node Info scalars (ibSmaNodeInfo.1-13) through snmpd, compared
field by field with smpquery run against the same node of the same fabric."""
import re

import pytest

NODE_INFO = ".1.3.6.1.3.117.3.1.1"
NODE_TYPES = {"Channel Adapter": 1, "Switch": 2, "Router": 3}


def smpquery_fields(bed):
    text = bed.run_on_node("smpquery", "-D", "nodeinfo", "0")
    text += bed.run_on_node("smpquery", "-D", "nodedesc", "0")
    fields = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z ]+?):\.+(.*)$", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
    return fields


def octets(hexstr):
    return bytes(int(b, 16) for b in hexstr.split())


def int_of(hex_or_dec):
    return int(hex_or_dec, 0)


def check_node_info(bed):
    ref = smpquery_fields(bed)
    got = bed.get(*["%s.%d.0" % (NODE_INFO, i) for i in range(2, 14)], hex_strings=True)
    desc = bed.get(NODE_INFO + ".1.0")[NODE_INFO + ".1.0"]

    def val(i):
        return got["%s.%d.0" % (NODE_INFO, i)][1]

    assert desc == ("STRING", '"%s"' % ref["Node Description"])
    assert int(val(2)) == int(ref["BaseVers"])
    assert int(val(3)) == int(ref["ClassVers"])
    assert int(val(4)) == NODE_TYPES[ref["NodeType"]]
    assert int(val(5)) == int(ref["NumPorts"])
    assert octets(val(6)) == int_of(ref["SystemGuid"]).to_bytes(8, "big")
    assert octets(val(7)) == int_of(ref["Guid"]).to_bytes(8, "big")
    assert octets(val(8)) == int_of(ref["PortGuid"]).to_bytes(8, "big")
    assert int(val(9)) == int(ref["PartCap"])
    assert octets(val(10)) == int_of(ref["DevId"]).to_bytes(2, "big")
    assert octets(val(11)) == int_of(ref["Revision"]).to_bytes(4, "big")
    assert int(val(12)) == int(ref["LocalPort"])
    assert octets(val(13)) == int_of(ref["VendorId"]).to_bytes(3, "big")
    return ref


def test_switch_node_info_matches_smpquery(switch_bed):
    ref = check_node_info(switch_bed)
    assert ref["NodeType"] == "Switch"


def test_ca_node_info_matches_smpquery(ca_bed):
    ref = check_node_info(ca_bed)
    assert ref["NodeType"] == "Channel Adapter"
    assert ref["Node Description"] == "hca2"


def test_two_test_beds_run_side_by_side(switch_bed, ca_bed):
    assert switch_bed.target != ca_bed.target
    assert switch_bed.env["IBSIM_SOCKNAME"] != ca_bed.env["IBSIM_SOCKNAME"]
    sw = switch_bed.get(NODE_INFO + ".4.0")[NODE_INFO + ".4.0"]
    ca = ca_bed.get(NODE_INFO + ".4.0")[NODE_INFO + ".4.0"]
    assert (sw[1], ca[1]) == ("2", "1")


def test_walk_returns_exactly_the_thirteen_scalars(ca_bed):
    walked = ca_bed.walk(NODE_INFO)
    assert sorted(walked) == sorted("%s.%d.0" % (NODE_INFO, i) for i in range(1, 14))


def test_instances_other_than_zero_do_not_exist(ca_bed):
    out = ca_bed.snmp("snmpget", NODE_INFO + ".4.1", NODE_INFO + ".14.0")
    assert out.stdout.count("No Such") == 2, out.stdout


def test_sysortable_lists_sma_mib(ca_bed):
    walked = ca_bed.walk(".1.3.6.1.2.1.1.9.1.2")
    assert ("OID", ".1.3.6.1.3.117.3") in walked.values(), walked
