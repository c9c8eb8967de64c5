"""What a manager (a test, a bench) reads from a bed: varbinds, the
notifications snmptrapd logged, infiniband-diags' output."""
import re
import time

TRAP_OID = ".1.3.6.1.6.3.1.1.4.1.0"  # snmpTrapOID.0
VARBIND = re.compile(r"^(\.[0-9.]+) = (?:([A-Za-z0-9-]+): )?(.*)$")


def parse_varbinds(text):
    """{oid: (type, value)} of net-snmp's -On output."""
    res = {}
    last = None
    for line in text.splitlines():
        m = VARBIND.match(line)
        if m:
            last = m.group(1)
            res[last] = (m.group(2) or "", m.group(3).strip())
        elif last:  # continuation of a long hex string
            t, v = res[last]
            res[last] = (t, v + " " + line.strip())
    return res


def notifications(bed):
    """[{oid: value}] of every notification in snmptrapd's log (one line each,
    varbinds tab-separated), oldest first; string values without quotes."""
    res = []
    for line in bed.log("traps.log").splitlines():
        if TRAP_OID not in line:
            continue
        vbs = {}
        for part in line.strip().split("\t"):
            if " = " in part:
                name, value = part.split(" = ", 1)
                vbs[name.strip()] = value.split(": ", 1)[-1].strip().strip('"')
        res.append(vbs)
    return res


def wait_for(predicate, seconds=60, step=0.5):
    """Polls predicate until it is true or `seconds` have passed; returns it."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def fields(text):
    """{Field: value} of smpquery's and perfquery's "Field:....value" lines."""
    res = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9]+):\.+(.*)$", line)
        if m:
            res[m.group(1)] = m.group(2).strip()
    return res


def guid_index(guid):
    """A GUID as the 8 sub-identifiers of a table index."""
    return ".".join(str(b) for b in guid.to_bytes(8, "big"))


def node_guids(bed):
    """{node description: (node GUID, LID)} from ibnetdiscover: a switch's LID
    is on its header line, a CA's on its (first) port line."""
    text = bed.run_on_node("ibnetdiscover")
    res, pending = {}, None
    for line in text.splitlines():
        m = re.match(r'^(Switch|Ca)\s+\d+\s+"[HS]-([0-9a-f]+)"\s+# "([^"]+)"(.*)$', line)
        if m:
            lid = re.search(r"\blid (\d+)", m.group(4))
            res[m.group(3)] = (int(m.group(2), 16), int(lid.group(1)) if lid else None)
            pending = None if lid else m.group(3)
            continue
        lid = re.search(r"# lid (\d+)", line)
        if pending and line.startswith("[") and lid:
            res[pending] = (res[pending][0], int(lid.group(1)))
            pending = None
    return res


def generated(bed):
    """(nodes {name: (type, guid, nports, lid)}, links {frozenset of two (name,
    port)}) from the file of what fabricsim generated (a --big bed's
    SIMFABRIC_TOPOLOGY): the simulator's own account, not ibsnmpd's."""
    nodes, by_guid, links_ = {}, {}, set()
    with open(bed.env["SIMFABRIC_TOPOLOGY"]) as f:
        for line in f:
            parts = line.split()
            if parts[0] == "node":
                name = " ".join(parts[5:])
                nodes[name] = (parts[1], int(parts[2], 16), int(parts[3]), int(parts[4]))
                by_guid[int(parts[2], 16)] = name
            elif parts[0] == "link":
                links_.add(frozenset([(by_guid[int(parts[1], 16)], int(parts[2])),
                                      (by_guid[int(parts[3], 16)], int(parts[4]))]))
    return nodes, links_


def links(bed, *options, fabric=1):
    """{(node description, port): (peer description, peer port)} of every
    link ibnetdiscover shows (options: e.g. -y KEY) on one of the bed's
    fabrics."""
    res, node = {}, None
    for line in bed.run_on_node("ibnetdiscover", *options, fabric=fabric).splitlines():
        m = re.match(r'^(?:Switch|Ca)\s+\d+\s+"[HS]-[0-9a-f]+"\s+# "([^"]+)"', line)
        if m:
            node = m.group(1)
            continue
        m = re.match(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s+"[HS]-[0-9a-f]+"\[(\d+)\]'
                     r'(?:\([0-9a-f]+\))?\s+#[^"]*"([^"]+)"', line)
        if m and node:
            res[(node, int(m.group(1)))] = (m.group(3), int(m.group(2)))
    return res


def port_pkeys(bed, lid, port=1):
    """{P_Key base: full?} of a port, from smpquery pkeys."""
    out = bed.run_on_node("smpquery", "pkeys", str(lid), str(port))
    res = {}
    for v in re.findall(r"0x([0-9a-f]{4})", out):
        v = int(v, 16)
        if v & 0x7fff:
            res[v & 0x7fff] = bool(v & 0x8000)
    return res
