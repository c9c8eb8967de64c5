"""LLDP-EXT-DCBX-MIB through snmpd, with ibsnmpd's real DCBX backend talking
to a fake kernel (fake_dcbnl.py) over its `dcbxSocket`: no kernel here has a
DCB driver (see ../shared/notes/dcbx.md), so this is where the dcbnl
messages are checked: walks show the fake kernel's state, SETs reach it as
the right commands, its refusals become SNMP errors, state changes become
notifications in snmptrapd's log. The fake kernel is independent Python code
written from the kernel's uapi header and dcbnl.c."""
import errno
import os
import shutil
import struct
import tempfile

import pytest

import fake_dcbnl as K
from conftest import start_testbed, stop_testbed, wait_for

DCBX = ".1.0.8802.1.1.2.1.5.6945"
PORT = DCBX + ".1.1.1"
FEAT = DCBX + ".2.1.1"
PRIO = DCBX + ".2.2.2.1"
BW = DCBX + ".2.2.3.1"
PFC = DCBX + ".2.3.2.1"
APP = DCBX + ".2.4.1.1"
APP_PRIO = DCBX + ".2.4.2.1"
ETH2, ETH3, LO = 5, 7, 1


@pytest.fixture(scope="module")
def kernel():
    d = tempfile.mkdtemp(prefix="ibsnmpd-dcb.")
    k = K.FakeKernel(os.path.join(d, "dcbnl.sock"))
    k.add(K.Port(LO, "lo", dcb=False))
    k.add(K.Port(ETH2, "eth2"))
    quiet = k.add(K.Port(ETH3, "eth3"))
    quiet.peer_pg = quiet.peer_pfc = quiet.peer_apps = None  # no peer on eth3
    k.start()
    yield k
    k.stop()
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def bed(kernel):
    b = start_testbed(node="hca1", extra_conf=["dcbxSocket " + kernel.path,
                                               "cacheLifetime dcbx 2"])
    yield b
    stop_testbed(b)


def snmpset(bed, *args):
    return bed.snmp("snmpset", *args, community=bed.env["SNMP_RW_COMMUNITY"])


def value(bed, oid):
    return bed.get(oid)[oid][1]


def refreshed(bed, kernel, oid, want):
    """The next poll shows it (the fake kernel was changed behind ibsnmpd)."""
    return wait_for(lambda: bed.get(oid)[oid][1] == want, seconds=30)


def test_walk_shows_the_kernels_state(bed, kernel):
    p = kernel.ports[ETH2]
    assert wait_for(lambda: bed.walk(PORT + ".2"))
    # ports with dcbnl ops only, by ifIndex; lo (EOPNOTSUPP) has no row
    assert bed.walk(PORT + ".2") == {"%s.2.%d" % (PORT, ETH2): ("INTEGER", "1"),
                                     "%s.2.%d" % (PORT, ETH3): ("INTEGER", "1")}
    # feature flags: PG enable+willing+advertise, PFC and APP enable+advertise
    feat = bed.walk(FEAT)
    for f, (en, will, adv) in {2: (1, 1, 1), 3: (1, 2, 1), 4: (1, 2, 1)}.items():
        assert feat["%s.5.%d.%d.0" % (FEAT, ETH2, f)][1] == str(en)
        assert feat["%s.6.%d.%d.0" % (FEAT, ETH2, f)][1] == str(will)
        assert feat["%s.8.%d.%d.0" % (FEAT, ETH2, f)][1] == str(adv)
        assert feat["%s.7.%d.%d.0" % (FEAT, ETH2, f)][1] == "2"  # no error
        assert feat["%s.16.%d.%d.0" % (FEAT, ETH2, f)][1] == "1"  # the peer sent it
        assert "%s.16.%d.%d.0" % (FEAT, ETH3, f) not in feat    # eth3 has no peer
    assert feat["%s.17.%d.2.0" % (FEAT, ETH2)][1] == "8"       # peer's TCs
    # priority -> PG, PG -> bandwidth, PFC, apps: desired = oper = the kernel's, and the peer's
    prio, bw, pfc = bed.walk(PRIO), bed.walk(BW), bed.walk(PFC)
    for i in range(8):
        assert prio["%s.2.%d.%d" % (PRIO, ETH2, i)][1] == str(p.prio_pgid[i])
        assert prio["%s.3.%d.%d" % (PRIO, ETH2, i)][1] == str(p.prio_pgid[i])
        assert prio["%s.4.%d.%d" % (PRIO, ETH2, i)][1] == str(p.peer_pg[5][i])
        assert bw["%s.2.%d.%d" % (BW, ETH2, i)][1] == str(p.pg_bw[i])
        assert pfc["%s.2.%d.%d" % (PFC, ETH2, i)][1] == ("1" if p.pfc[i] else "2")
        assert pfc["%s.4.%d.%d" % (PFC, ETH2, i)][1] == ("1" if p.peer_pfc[2] >> i & 1 else "2")
    app = bed.walk(APP)
    assert app["%s.2.%d.0" % (APP, ETH2)][1] == "0"          # ethertype
    assert app["%s.4.%d.0" % (APP, ETH2)][1] == str(0x8915)  # RoCE
    app_prio = bed.walk(APP_PRIO)
    assert [k for k, v in app_prio.items() if k.startswith("%s.2.%d.0." % (APP_PRIO, ETH2))
            and v[1] == "1"] == ["%s.2.%d.0.3" % (APP_PRIO, ETH2)]
    assert app_prio["%s.4.%d.0.3" % (APP_PRIO, ETH2)][1] == "1"
    # the two scalars
    assert value(bed, DCBX + ".2.2.1.0") == "7"  # 8 TCs: the draft's range ends at 7
    assert value(bed, DCBX + ".2.3.1.0") == "8"


def test_set_reaches_the_kernel_as_dcbnl_commands(bed, kernel):
    before = len(kernel.received)
    out = snmpset(bed, "%s.2.%d.4" % (PFC, ETH2), "i", "1",
                  "%s.2.%d.0" % (BW, ETH2), "i", "40", "%s.2.%d.1" % (BW, ETH2), "i", "10",
                  "%s.2.%d.7" % (PRIO, ETH2), "i", "3")
    assert out.returncode == 0, out.stderr
    sets = [(cmd, attrs) for cmd, name, attrs in kernel.received[before:]
            if name == "eth2" and cmd not in (K.GSTATE, K.GNUMTCS, K.CEE_GET)]
    assert [c for c, _ in sets] == [K.PGTX_SCFG, K.PFC_SCFG, K.SET_ALL]
    pg = dict(K.parse_attrs(sets[0][1][K.A_PG_CFG]))
    assert [pg[K.PG_BW_ID_0 + i][0] for i in range(8)] == [40, 10, 25, 25, 0, 0, 0, 0]
    assert dict(K.parse_attrs(pg[K.PG_TC_0 + 7]))[K.TC_PGID][0] == 3
    pfc = dict(K.parse_attrs(sets[1][1][K.A_PFC_CFG]))
    assert [pfc[1 + i][0] for i in range(8)] == [0, 0, 0, 1, 1, 0, 0, 0]
    assert refreshed(bed, kernel, "%s.2.%d.0" % (BW, ETH2), "40")
    assert value(bed, "%s.2.%d.4" % (PFC, ETH2)) == "1"
    # feature flags and port enable
    out = snmpset(bed, "%s.6.%d.3.0" % (FEAT, ETH2), "i", "1", "%s.2.%d" % (PORT, ETH3), "i", "2")
    assert out.returncode == 0, out.stderr
    assert kernel.ports[ETH2].feat[3] & K.WILLING and kernel.ports[ETH3].state == 0
    assert refreshed(bed, kernel, "%s.2.%d" % (PORT, ETH3), "2")
    # an application's priorities
    out = snmpset(bed, "%s.2.%d.0.5" % (APP_PRIO, ETH2), "i", "1")
    assert out.returncode == 0, out.stderr
    assert kernel.ports[ETH2].apps == [(0, 0x8915, 0x28)]


def test_bad_sets_change_nothing(bed, kernel):
    before = len(kernel.received)
    state = (list(kernel.ports[ETH2].pg_bw), list(kernel.ports[ETH2].pfc))
    cases = [
        (("%s.2.%d.0" % (BW, ETH2), "i", "50"), "inconsistentValue"),   # sum 110
        (("%s.2.%d.0" % (PRIO, ETH2), "i", "9"), "wrongValue"),         # reserved PG id
        (("%s.2.%d.0" % (PRIO, ETH2), "i", "16"), "wrongValue"),
        (("%s.2.%d.0" % (BW, ETH2), "i", "101"), "wrongValue"),
        (("%s.2.%d.0" % (PFC, ETH2), "s", "on"), "wrongType"),
        (("%s.2.%d.0" % (PFC, ETH2), "i", "3"), "wrongValue"),
        (("%s.3.%d.0" % (PFC, ETH2), "i", "1"), "notWritable"),         # oper
        (("%s.2.%d.0" % (PFC, 99), "i", "1"), "noCreation"),            # no such port
        # all or nothing: a good PFC change with a bad bandwidth
        (("%s.2.%d.0" % (PFC, ETH2), "i", "1", "%s.2.%d.2" % (BW, ETH2), "i", "0"),
         "inconsistentValue"),
    ]
    for args, err in cases:
        out = snmpset(bed, *args)
        assert out.returncode != 0 and err in out.stderr, (args, out.stderr)
    assert not [c for c, _, _ in kernel.received[before:]
                if c not in (K.GSTATE, K.GNUMTCS, K.CEE_GET)]
    assert (kernel.ports[ETH2].pg_bw, kernel.ports[ETH2].pfc) == state


@pytest.mark.parametrize("code,snmp_error", [(errno.EPERM, "noAccess"),
                                             (errno.EOPNOTSUPP, "notWritable"),
                                             (errno.EINVAL, "wrongValue"),
                                             (errno.ENODEV, "inconsistentName")])
def test_kernel_refusal_is_the_snmp_error(bed, kernel, code, snmp_error):
    kernel.refuse[K.PFC_SCFG] = code
    out = snmpset(bed, "%s.2.%d.6" % (PFC, ETH2), "i", "1")
    assert out.returncode != 0 and snmp_error in out.stderr, out.stderr
    assert kernel.ports[ETH2].pfc[6] == 0
    assert "the kernel refused a SET: %s" % os.strerror(code) in bed.log("ibsnmpd.log")


def test_refused_commit_is_undone(bed, kernel):
    """PFC_SCFG taken, SET_ALL refused: the SET fails and the previous PFC
    values are sent back (then committed) - the kernel ends where it was."""
    before = len(kernel.received)
    old = list(kernel.ports[ETH2].pfc)
    kernel.refuse[K.SET_ALL] = errno.EINVAL
    out = snmpset(bed, "%s.2.%d.6" % (PFC, ETH2), "i", "1")
    assert out.returncode != 0 and "wrongValue" in out.stderr, out.stderr
    sets = lambda: [(c, a) for c, n, a in kernel.received[before:]
                    if n == "eth2" and c in (K.PFC_SCFG, K.SET_ALL)]
    assert wait_for(lambda: [c for c, _ in sets()] ==
                    [K.PFC_SCFG, K.SET_ALL, K.PFC_SCFG, K.SET_ALL], seconds=30)
    undo = dict(K.parse_attrs(sets()[2][1][K.A_PFC_CFG]))
    assert [undo[1 + i][0] for i in range(8)] == old
    assert kernel.ports[ETH2].pfc == old


def traps(bed, notification):
    return bed.log("traps.log").count("OID: %s.0.%d" % (DCBX, notification))


def test_state_changes_become_notifications(bed, kernel):
    p = kernel.ports[ETH2]
    # first the peer agrees with us (the SETs above changed our side) ...
    pfc_en = sum(1 << i for i in range(8) if p.pfc[i])
    p.peer_pg = (0, 0, 1, 8, list(p.pg_bw), list(p.prio_pgid))
    p.peer_pfc = (0, 0, pfc_en, 8)
    p.peer_apps = (0, 0, list(p.apps))
    kernel.notify(ETH2)
    assert wait_for(lambda: value(bed, "%s.4.%d.4" % (PFC, ETH2)) == "1" and
                    value(bed, "%s.4.%d.0" % (BW, ETH2)) == str(p.pg_bw[0]), seconds=30)
    # ... then its PFC differs from ours: lldpXdcbxPeerConfigMismatch
    n = traps(bed, 10)
    p.peer_pfc = (0, 0, 0x01, 8)
    kernel.notify(ETH2)  # an RTNLGRP_DCB event, as after a renegotiation
    assert wait_for(lambda: traps(bed, 10) == n + 1, seconds=30)
    # the PG feature's error flag goes up: lldpXdcbxMiscFeatureError with FeatError
    n = traps(bed, 2)
    p.feat[2] |= K.ERROR
    kernel.notify(ETH2)
    assert wait_for(lambda: traps(bed, 2) == n + 1, seconds=30)
    assert "%s.7.%d.2.0 = INTEGER: 1" % (FEAT, ETH2) in bed.log("traps.log")
    # the peer stops sending APP: lldpXdcbxPeerNoFeat with FeatType 4
    n = traps(bed, 8)
    p.peer_apps = None
    kernel.notify(ETH2)
    assert wait_for(lambda: traps(bed, 8) == n + 1, seconds=30)
    assert "%s.1.%d.4.0 = INTEGER: 4" % (FEAT, ETH2) in bed.log("traps.log")
    # the peer goes away altogether (found by polling, no event): lldpXdcbxPeerNoResp
    n = traps(bed, 9)
    p.peer_pg = p.peer_pfc = None
    assert wait_for(lambda: traps(bed, 9) == n + 1, seconds=30)
    assert "%s.1.%d = INTEGER: %d" % (PORT, ETH2, ETH2) in bed.log("traps.log")
    # a condition that lasts is not notified again
    count = bed.log("traps.log").count("OID: %s.0." % DCBX)
    assert not wait_for(lambda: bed.log("traps.log").count("OID: %s.0." % DCBX) > count,
                        seconds=5)


def test_malformed_messages_are_dropped_and_logged(bed, kernel):
    good = K.dcb(K.RTM_GETDCB, K.CEE_GET, 0, 0, *kernel.ports[ETH3].cee())
    kernel.send(good[:30])                                        # truncated
    bad_nest = K.dcb(K.RTM_GETDCB, K.CEE_GET, 0, 0, K.string(K.A_IFNAME, "eth3"),
                     K.attr(K.A_CEE, struct.pack("=HH", 200, K.CEE_PFC) + b"\0" * 8))
    kernel.send(bad_nest)                                         # a nest that lies
    kernel.send(K.dcb(K.RTM_GETDCB, K.GSTATE, 0, 0, K.u16(K.A_STATE, 1)))  # u16 for a u8
    assert wait_for(lambda: bed.log("ibsnmpd.log").count("dcbx: dropped a message") >= 3)
    # and nothing else happened: still served, still polling
    assert value(bed, "%s.2.%d" % (PORT, ETH2)) == "1"
    before = len(kernel.received)
    assert wait_for(lambda: len(kernel.received) > before)


def test_no_answer_keeps_the_last_state(bed, kernel):
    kernel.silent.add(K.CEE_GET)
    try:
        before = bed.log("ibsnmpd.log").count("did not answer")
        assert wait_for(lambda: bed.log("ibsnmpd.log").count("did not answer") > before)
        assert value(bed, "%s.2.%d" % (PORT, ETH2)) == "1"  # the previous snapshot
    finally:
        kernel.silent.discard(K.CEE_GET)
    assert wait_for(lambda: "dcbx: refresh works again" in bed.log("ibsnmpd.log"))


def test_malformed_answer_ends_the_poll_at_once(bed, kernel):
    log = lambda: bed.log("ibsnmpd.log")
    recovered = log().count("dcbx: refresh works again")
    kernel.mangle.add(K.CEE_GET)
    try:
        assert wait_for(lambda: "refresh failed: a malformed answer" in log())
        assert "did not answer" not in log()[log().index("a malformed answer"):]
        assert value(bed, "%s.2.%d" % (PORT, ETH2)) == "1"  # the previous snapshot
    finally:
        kernel.mangle.discard(K.CEE_GET)
    assert wait_for(lambda: log().count("dcbx: refresh works again") > recovered)


def test_ports_follow_interfaces_and_the_configured_list(bed, kernel):
    # a new DCB interface appears at the next poll, and goes with it
    kernel.add(K.Port(9, "eth9"))
    assert wait_for(lambda: "%s.2.9" % PORT in bed.walk(PORT + ".2"), seconds=30)
    del kernel.ports[9]
    assert wait_for(lambda: "%s.2.9" % PORT not in bed.walk(PORT + ".2"), seconds=30)
    # dcbxInterface: only the listed ones (read again on SIGHUP)
    with open(os.path.join(bed.dir, "ibsnmpd.conf"), "a") as f:
        f.write("dcbxInterface eth3\n")
    os.kill(int(open(os.path.join(bed.dir, "ibsnmpd.pid")).read()), 1)
    assert wait_for(lambda: list(bed.walk(PORT + ".2")) == ["%s.2.%d" % (PORT, ETH3)],
                    seconds=30)
