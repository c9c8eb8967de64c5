"""M_Key: fabricsim protects every port with one subnet key (opensm's
m_key) and enforces it as IBA and Linux's software SMAs do; ibsnmpd, given
the key (mKey), reads the protected fabric as an unprotected one, causes no
violation, and neither serves nor logs the key. Checked with smpquery and
ibnetdiscover given the key (-y), as an operator of such a fabric runs
them."""
import os
import re
import subprocess
import time

import pytest

from conftest import (fields, generated, ibsnmpd_bin, links, start_testbed, stop_testbed,
                      wait_for)

KEY = "0x00000000c0ffee42"
MIB = ".1.3.6.1.4.1.8072.9999.9999.117."
PORT = MIB + "1.5.1.1."           # ibsnmpdFabricPortEntry
SMA_MKEY = ".1.3.6.1.3.117.3.1.4.1.0"          # ibSmaPortMKey (port 0)
SMA_PROTECT = ".1.3.6.1.3.117.3.1.4.25.0"      # ibSmaPortMKeyProtectBits
SMA_VIOLATIONS = ".1.3.6.1.3.117.3.1.4.34.0"   # ibSmaPortMKeyViolations


@pytest.fixture(scope="module")
def bed():
    b = start_testbed(big={"hosts": 16, "radix": 8, "mkey": KEY, "mkey_protect": 3},
                      extra_conf=["mKey " + KEY, "cacheLifetime fabricPorts 2",
                                  "cacheLifetime pmCounters 2", "madTimeout 300"])
    try:
        yield b
    finally:
        stop_testbed(b)


def portinfo(bed, lid, port=0, key=KEY, show=False):
    """smpquery portinfo's fields, or None when it got no answer"""
    args = ["smpquery"] + (["-y", key] if key else []) + (["-K"] if show else []) + \
        ["-t", "200", "portinfo", str(lid), str(port)]
    out = bed.run_on_node(*args, ok_codes=(0, 255, 1))
    f = fields(out)
    return f if "LinkState" in f else None


def violations(bed, nodes):
    """MKeyViolations of every node: a switch's port 0, a host's port 1"""
    return {name: int(portinfo(bed, lid, 0 if kind == "switch" else 1)["MkeyViolations"])
            for name, (kind, guid, nports, lid) in nodes.items()}


def ends(bed):
    """{(node, port): (remote node, remote port)} of the link table"""
    rdesc = {oid[len(PORT + "16."):]: v.strip('"') for oid, (_, v) in
             bed.walk(PORT + "16").items()}
    desc = {oid[len(PORT + "3."):]: v.strip('"') for oid, (_, v) in bed.walk(PORT + "3").items()}
    rport = {oid[len(PORT + "17."):]: v for oid, (_, v) in bed.walk(PORT + "17").items()}
    return {(desc[i], int(i.rsplit(".", 1)[1])): (rdesc[i], int(rport[i]))
            for i in rdesc if rdesc[i] and i in desc and i in rport}


def test_the_simulator_enforces_the_key_as_iba_says(bed):
    nodes, _ = generated(bed)
    lid = nodes["leaf-1-2"][3]
    before = int(portinfo(bed, lid)["MkeyViolations"])
    # protect bits 3: without the key no answer, and a violation counted
    assert portinfo(bed, lid, key=None) is None
    assert int(portinfo(bed, lid)["MkeyViolations"]) > before
    assert portinfo(bed, lid)["ProtectBits"] == "3"
    # protect bits 1: a Get is answered, the M_Key field reads 0 without it
    bed.simfabric("sim", 'MKey "leaf-1-2" %s 1' % KEY)
    assert int(portinfo(bed, lid, key=None, show=True)["Mkey"], 16) == 0
    assert int(portinfo(bed, lid, show=True)["Mkey"], 16) == int(KEY, 16)
    # protect bits 0: it reads as it is
    bed.simfabric("sim", 'MKey "leaf-1-2" %s 0' % KEY)
    assert int(portinfo(bed, lid, key=None, show=True)["Mkey"], 16) == int(KEY, 16)
    bed.simfabric("sim", 'MKey "leaf-1-2" %s 3' % KEY)
    # ibnetdiscover: nothing without the key, the whole fabric with it
    assert len(links(bed, "-y", KEY)) == 2 * len(generated(bed)[1])
    out = bed.run_on_node("ibnetdiscover", "-t", "200", ok_codes=(0, 1, 255))
    assert not re.search(r"^(Switch|Ca)\s", out, re.M), out


def test_with_the_key_every_link_is_read_and_nothing_violated(bed):
    nodes, cables = generated(bed)
    theirs = links(bed, "-y", KEY)
    start = violations(bed, nodes)

    def served():
        state = {oid: v for oid, (_, v) in bed.walk(PORT + "6").items()}
        return len(state) == sum(n[2] for n in nodes.values()) and \
            sum(1 for v in state.values() if v == "4") == len(theirs)
    assert wait_for(served, seconds=60), bed.log("ibsnmpd.log")[-2000:]
    # the remote ends as ibnetdiscover -y shows them
    assert ends(bed) == theirs
    time.sleep(6)  # sweeps of the links and the counters, with the key
    assert violations(bed, nodes) == start
    # the key is never served nor logged: the switch's context hides it
    guid = nodes["leaf-1-1"][1]
    context = "ib-%016x" % guid
    assert wait_for(lambda: bed.v3_walk(context, SMA_MKEY).get(SMA_MKEY), seconds=30)
    got = bed.v3_walk(context, SMA_MKEY)[SMA_MKEY][1]
    assert set(got.replace(" ", "")) <= {"0"}, got
    assert bed.v3_walk(context, SMA_PROTECT)[SMA_PROTECT][1] == "4"  # protect bits 3
    assert KEY[2:].lstrip("0") not in bed.log("ibsnmpd.log").lower()


@pytest.fixture(scope="module")
def open_bed():
    """A fabric without M_Key at first, and ibsnmpd without a key: the
    console protects it later, as an SM that turns m_key on does."""
    b = start_testbed(big={"hosts": 16, "radix": 8},
                      extra_conf=["cacheLifetime fabricPorts 2", "cacheLifetime pmCounters 2",
                                  "pmDiscoveryInterval 20", "madTimeout 300"])
    try:
        yield b
    finally:
        stop_testbed(b)


GUARD_LINE = "this port does not answer SMPs: the fabric is protected by M_Key"
PM_STALE = MIB + "1.3.1.1.25"     # ibsnmpdPmStale
PORT_STALE = PORT + "25"          # ibsnmpdFabricPortStale


def test_without_the_key_it_stops_sending_smps_and_keeps_the_counters(open_bed):
    bed = open_bed
    nodes, _ = generated(bed)
    assert wait_for(lambda: len(bed.walk(PORT + "6")) == sum(n[2] for n in nodes.values()),
                    seconds=60)
    bed.simfabric("sim", "MKey * %s 3" % KEY)
    assert wait_for(lambda: GUARD_LINE in bed.log("ibsnmpd.log"), seconds=60), \
        bed.log("ibsnmpd.log")[-2000:]
    # what was sent before the guard spoke, once the simulator has counted
    # it (on a loaded machine fabricsim reads its socket late)
    first = violations(bed, nodes)
    for _ in range(10):
        time.sleep(1)
        now = violations(bed, nodes)
        if now == first:
            break
        first = now
    time.sleep(12)  # six link sweeps, six counter sweeps
    then = violations(bed, nodes)
    # what it cost: the SMPs of the sweep under way when the key came (a
    # PortInfo of each port: a switch counts its ports' at its port 0), no
    # retry, then at most this port's one question every interval
    print("MKeyViolations caused: %s" % sorted(first.items()))
    assert all(v <= nodes[name][2] + (4 if name == bed.env["SIMFABRIC_NODE"] else 1)
               for name, v in first.items()), first
    assert sum(then.values()) - sum(first.values()) <= 1, (first, then)
    # said once; the discovery waits; the counters are still read (no key)
    log = bed.log("ibsnmpd.log")
    assert log.count(GUARD_LINE) == 1 and log.count("discovery: not run") <= 1, log[-2000:]
    stale = [v for _, v in bed.walk(PM_STALE).values()]
    assert stale and all(v == "2" for v in stale), stale
    # the protection off again: SMPs again at the next question, links fresh
    bed.simfabric("sim", "MKey * 0")
    assert wait_for(lambda: "answers SMPs again" in bed.log("ibsnmpd.log"), seconds=60)
    assert wait_for(lambda: all(v == "2" for _, v in bed.walk(PORT_STALE).values()),
                    seconds=60)


def test_at_protect_bits_1_the_key_reads_as_0_without_it():
    """Level 1: SMPs are answered without the key, the M_Key field reads 0;
    ibsnmpd without the key (exposeKeys yes: what the SMA says is served)
    serves 0, as the SMA hides it, and causes no violation."""
    b = start_testbed(big={"hosts": 8, "radix": 8, "mkey": KEY, "mkey_protect": 1},
                      extra_conf=["exposeKeys yes", "nodeContextTypes switch",
                                  "cacheLifetime fabricPorts 2"])
    try:
        nodes, _ = generated(b)
        guid = nodes["leaf-1-1"][1]
        context = "ib-%016x" % guid
        assert wait_for(lambda: b.v3_walk(context, SMA_MKEY).get(SMA_MKEY), seconds=60)
        assert set(b.v3_walk(context, SMA_MKEY)[SMA_MKEY][1].replace(" ", "")) == {"0"}
        assert b.v3_walk(context, SMA_PROTECT)[SMA_PROTECT][1] == "2"  # protect bits 1
        assert int(portinfo(b, nodes["leaf-1-1"][3])["MkeyViolations"]) == 0
        assert GUARD_LINE not in b.log("ibsnmpd.log")
    finally:
        stop_testbed(b)


def guid2mkey(path, bed, key, mode):
    """opensm's guid2mkey cache of the bed's fabric: every port's key"""
    nodes, _ = generated(bed)
    with open(path, "w") as f:
        for kind, guid, nports, lid in nodes.values():
            f.write("0x%016x 0x%016x\n\n" % (guid, int(key, 16)))
    os.chmod(path, mode)


def test_the_key_from_opensms_guid2mkey_file(tmp_path):
    """mKeyFile: the keys by port GUID as opensm caches them; the fabric
    read with them as with mKey, no violation; a file others may read is
    refused at start, naming it, as sshd refuses such keys."""
    b = start_testbed(big={"hosts": 8, "radix": 8, "mkey": KEY, "mkey_protect": 3},
                      extra_conf=["mKeyFile {dir}/guid2mkey", "cacheLifetime fabricPorts 2"],
                      with_agent=False)
    try:
        path = b.path("guid2mkey")
        guid2mkey(path, b, KEY, 0o600)
        b.start_service("ibsnmpd")
        nodes, _ = generated(b)
        theirs = links(b, "-y", KEY)
        assert wait_for(lambda: ends(b) == theirs, seconds=60), b.log("ibsnmpd.log")[-1500:]
        assert all(v == 0 for v in violations(b, nodes).values())
        assert KEY[2:].lstrip("0") not in b.log("ibsnmpd.log").lower()
        b.simfabric("stop", "ibsnmpd")
        os.chmod(path, 0o644)
        conf = tmp_path / "ibsnmpd.conf"
        conf.write_text("mKeyFile %s\n" % path)
        out = subprocess.run([ibsnmpd_bin(), "-f", "-Le", "-c",
                              str(conf)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 1, out.stderr
        assert "mKeyFile %s: mode 0644" % path in out.stderr and "refused" in out.stderr
        assert KEY[2:].lstrip("0") not in out.stderr.lower()
    finally:
        stop_testbed(b)


SA_LINE = "subnet discovered from the SA (the SM's view)"
SMP_ACCESS = MIB + "1.10.2.0"          # ibsnmpdSmpAccess
SMPS_REFUSED = MIB + "1.10.3.0"        # ibsnmpdSmpsRefused
VIOLATIONS_CAUSED = MIB + "1.10.4.0"   # ibsnmpdMKeyViolationsCaused
NODE_DESC = MIB + "1.6.1.1.2."    # ibsnmpdNodeDescription (by GUID)


def test_without_the_key_the_sas_view_and_the_counters_are_served():
    """A fabric protected (protect bits 3) before ibsnmpd starts, no key
    given: the guard finds it out, the nodes, links and port states come
    from the SM's SA (as saquery reads it) and equal what ibnetdiscover
    sees with the key; the counters are read; each port's MKeyViolations
    rose by at most one; the log says what is not served."""
    b = start_testbed(big={"hosts": 16, "radix": 8, "mkey": KEY, "mkey_protect": 3},
                      extra_conf=["cacheLifetime fabricPorts 2", "cacheLifetime pmCounters 2",
                                  "madTimeout 300"])
    try:
        nodes, _ = generated(b)
        theirs = links(b, "-y", KEY)
        assert wait_for(lambda: ends(b) == theirs, seconds=60), b.log("ibsnmpd.log")[-2000:]
        log = b.log("ibsnmpd.log")
        assert GUARD_LINE in log and SA_LINE in log and "Not served without the key" in log
        states = [v for _, v in b.walk(PORT + "6").values()]
        assert len(states) == sum(n[2] for n in nodes.values())
        assert states.count("4") == len(theirs)
        assert wait_for(lambda: [v for _, v in b.walk(PM_STALE).values()].count("2") ==
                        sum(n[2] for n in nodes.values()), seconds=30)
        # the nodes as saquery has them from the same SA
        for name in ("spine-1-1", "leaf-1-2", "host-7"):
            kind, guid, nports, lid = nodes[name]
            out = b.run_on_node("saquery", "NR", str(lid))
            assert re.search(r"node_guid\.+0x0*%x\b" % guid, out), out
            assert re.search(r"NodeDescription\.+%s\s*$" % name, out, re.M), out
            served = b.walk(NODE_DESC + ".".join(str(guid >> s & 0xff)
                                                   for s in range(56, -8, -8)))
            assert [v.strip('"') for _, v in served.values()] == [name], served
        time.sleep(6)  # three sweeps of links and counters more: no SMP
        caused = violations(b, nodes)
        print("MKeyViolations caused without the key: %s" % sorted(caused.items()))
        assert all(v <= 1 for v in caused.values()), caused
        # its own account: SMPs refused, the violations it caused
        own = {oid: v for oid, (_, v) in b.get(SMP_ACCESS, SMPS_REFUSED, VIOLATIONS_CAUSED).items()}
        assert own[SMP_ACCESS] == "3", own  # refused
        assert int(own[VIOLATIONS_CAUSED]) == sum(caused.values()), own
        assert int(own[SMPS_REFUSED]) > 0, own
        # someone else's violation (a wrong key): the switch's trap 256,
        # through the SM (the simulator), notified with its M_Key as zeros
        bad_mkey = "OID: .1.3.6.1.3.117.3.2.7"  # ibSmaNotifications 7: trap 256
        assert portinfo(b, nodes["leaf-1-3"][3], key="0x00000000000badcf") is None
        assert wait_for(lambda: bad_mkey in b.log("traps.log"), seconds=30)
        assert "badcf" not in b.log("traps.log").lower().replace(" ", "")
        assert KEY[2:].lstrip("0") not in b.log("ibsnmpd.log").lower()
    finally:
        stop_testbed(b)


def test_per_port_keys_from_the_guid2mkey_file(tmp_path):
    """Every node its own key, as UFM's mkey-per-port sets them, the keys in
    opensm's guid2mkey cache: libibnetdisc carries one key, so the subnet is
    read from the SA, and every SMP LID-routed to a node carries that node's
    key (a switch's context reads its SMA): no violation anywhere."""
    b = start_testbed(big={"hosts": 8, "radix": 8},
                      extra_conf=["mKeyFile {dir}/guid2mkey", "cacheLifetime fabricPorts 2",
                                  "nodeContextTypes switch"],
                      with_agent=False)
    try:
        nodes, _ = generated(b)
        theirs = links(b)  # before the keys: ibnetdiscover takes one key only
        keys = {}
        for i, (name, (kind, guid, nports, lid)) in enumerate(sorted(nodes.items())):
            keys[name] = "0x%016x" % (0x5ec0000000000000 + (i + 1) * 0x1111)
            b.simfabric("sim", 'MKey "%s" %s 3' % (name, keys[name]))
        path = b.path("guid2mkey")
        with open(path, "w") as f:
            for name, (kind, guid, nports, lid) in nodes.items():
                f.write("0x%016x %s\n\n" % (guid, keys[name]))
        os.chmod(path, 0o600)
        b.start_service("ibsnmpd")
        assert wait_for(lambda: ends(b) == theirs, seconds=60), b.log("ibsnmpd.log")[-1500:]
        assert SA_LINE in b.log("ibsnmpd.log")
        guid = nodes["leaf-1-1"][1]
        node_type = ".1.3.6.1.3.117.3.1.1.4.0"  # ibSmaNodeType.0, read by SMP in its context
        assert wait_for(lambda: b.v3_walk("ib-%016x" % guid, node_type).get(node_type),
                        seconds=60)
        time.sleep(4)
        caused = {name: int(portinfo(b, lid, 0 if kind == "switch" else 1,
                                     key=keys[name])["MkeyViolations"])
                  for name, (kind, guid, nports, lid) in nodes.items()}
        assert all(v == 0 for v in caused.values()), caused
        assert GUARD_LINE not in b.log("ibsnmpd.log")
        assert not any(k[2:] in b.log("ibsnmpd.log").lower() for k in keys.values())
    finally:
        stop_testbed(b)
