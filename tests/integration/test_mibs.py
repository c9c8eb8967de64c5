"""The MIB modules in mibs/ load in snmptranslate and are clean under smilint.

Debian ships no IETF base modules; scripts/install-deps extracts the ones
erlang-snmp carries (SNMPv2-SMI, -TC, -CONF) to IBSNMPD_BASE_MIBS, for tests
only."""
import glob
import re
import os
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MIBS = os.path.join(TOP, "mibs")
BASE = os.environ.get("IBSNMPD_BASE_MIBS", "/var/cache/ibsnmpd-test/base-mibs")


def base_dir():
    found = glob.glob(os.path.join(BASE, "usr/lib/erlang/lib/snmp-*/mibs"))
    if not found:
        pytest.skip("base MIB modules not extracted to %s (run scripts/install-deps)" % BASE)
    return found[0]


@pytest.mark.parametrize("module", ["IB-TC-MIB", "SMA-MIB", "IB-PM-MIB", "IBSNMPD-MIB",
                                    "IBSNMPD-PARTITION-MIB"])
def test_smilint_level_3_is_clean(module):
    # NET-SNMP-MIB (for IBSNMPD-MIB's arc) ships with Debian's libsnmp-base
    env = dict(os.environ, SMIPATH=":%s:/usr/share/snmp/mibs:%s" % (base_dir(), MIBS))
    out = subprocess.run(["smilint", "-l", "3", os.path.join(MIBS, module + ".txt")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout + out.stderr == "", out.stdout + out.stderr


def test_snmptranslate_resolves_sma_mib_objects():
    out = subprocess.run(["snmptranslate", "-M", "%s:%s" % (base_dir(), MIBS), "-m", "SMA-MIB",
                          "-On", "SMA-MIB::ibSmaNodeString", "SMA-MIB::ibSmaNodeVendorId",
                          "SMA-MIB::ibSmaPortLinkStateChange", "IB-TC-MIB::ibTcMIB"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [".1.3.6.1.3.117.3.1.1.1", ".1.3.6.1.3.117.3.1.1.13",
                                  ".1.3.6.1.3.117.3.2.1", ".1.3.6.1.3.117.1"]


def test_snmptranslate_resolves_ibsnmpd_mib_objects():
    out = subprocess.run(["snmptranslate", "-M", "%s:/usr/share/snmp/mibs:%s" % (base_dir(), MIBS),
                          "-m", "IBSNMPD-MIB", "-On", "IBSNMPD-MIB::ibsnmpdMadsSent",
                          "IBSNMPD-MIB::ibsnmpdPortExtRate"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [".1.3.6.1.4.1.8072.9999.9999.117.1.1.1",
                                  ".1.3.6.1.4.1.8072.9999.9999.117.1.2.1.1.6"]


def test_snmptranslate_resolves_partition_mib_objects():
    out = subprocess.run(["snmptranslate", "-M", "%s:/usr/share/snmp/mibs:%s" % (base_dir(), MIBS),
                          "-m", "IBSNMPD-PARTITION-MIB", "-On",
                          "IBSNMPD-PARTITION-MIB::ibPartitionRowStatus",
                          "IBSNMPD-PARTITION-MIB::ibPartitionMemberStatus",
                          "IBSNMPD-PARTITION-MIB::ibPartitionNotVerified"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [".1.3.6.1.4.1.8072.9999.9999.117.3.1.1.1.10",
                                  ".1.3.6.1.4.1.8072.9999.9999.117.3.1.2.1.3",
                                  ".1.3.6.1.4.1.8072.9999.9999.117.3.0.1"]


@pytest.mark.parametrize("which,seed,module", [
    ("sma", "000_482a3accf8b13ecd.txt", "SMA-MIB"),
    ("pm", "001_b31ca1058c403b60.txt", "IB-PM-MIB")])
def test_mib_is_the_rebuilt_seed(which, seed, module):
    """mibs/X.txt is what mibs/tools/rebuild-seed-mib.py makes of the seed."""
    seed = os.path.join(TOP, "..", "shared", "seeds", seed)
    if not os.path.exists(seed):
        pytest.skip("the seeds are not beside this checkout")
    out = subprocess.run(["python3", os.path.join(MIBS, "tools", "rebuild-seed-mib.py"), which,
                          seed], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    with open(os.path.join(MIBS, module + ".txt")) as f:
        assert f.read() == out.stdout


def test_snmptranslate_resolves_ib_pm_mib_objects():
    out = subprocess.run(["snmptranslate", "-M", "%s:%s" % (base_dir(), MIBS), "-m", "IB-PM-MIB",
                          "-On", "IB-PM-MIB::pmPortCountersSymbolErrors",
                          "IB-PM-MIB::pmClassPortInfoAllPortSelect"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [".1.3.6.1.3.117.1.4.1.3", ".1.3.6.1.3.117.1.1.1.2"]


TEST_MIBS = os.path.join(TOP, "tests", "mibs")  # the test-only stand-ins (README there)


def test_dcbx_mib_smilint_level_3_is_clean():
    env = dict(os.environ, SMIPATH=":%s:%s:%s" % (base_dir(), TEST_MIBS, MIBS))
    for path in (os.path.join(TEST_MIBS, "LLDP-MIB.txt"),
                 os.path.join(MIBS, "LLDP-EXT-DCBX-MIB.txt")):
        out = subprocess.run(["smilint", "-l", "3", path], capture_output=True, text=True,
                             env=env)
        assert out.returncode == 0 and out.stdout + out.stderr == "", out.stdout + out.stderr


@pytest.mark.parametrize("module", ["ENTITY-MIB", "IF-MIB", "IP-MIB", "LLDP-EXT-DOT1-MIB",
                                    "LLDP-EXT-DOT3-MIB", "LLDP-EXT-MED-MIB"])
def test_the_test_only_stand_ins_are_clean(module):
    """tests/mibs/: what the node contexts' tests and SNMP::Info resolve names with."""
    env = dict(os.environ, SMIPATH=":%s:%s" % (base_dir(), TEST_MIBS))
    out = subprocess.run(["smilint", "-l", "3", os.path.join(TEST_MIBS, module + ".txt")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0 and out.stdout + out.stderr == "", out.stdout + out.stderr


def test_snmptranslate_resolves_dcbx_mib_objects():
    out = subprocess.run(["snmptranslate", "-M", "%s:%s:%s" % (base_dir(), TEST_MIBS, MIBS),
                          "-m", "LLDP-EXT-DCBX-MIB", "-On",
                          "LLDP-EXT-DCBX-MIB::lldpXdcbxPortEnable",
                          "LLDP-EXT-DCBX-MIB::lldpXdcbxFeatPgBwAllocBwDesired",
                          "LLDP-EXT-DCBX-MIB::lldpXdcbxPeerConfigMismatch"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [".1.0.8802.1.1.2.1.5.6945.1.1.1.2",
                                  ".1.0.8802.1.1.2.1.5.6945.2.2.3.1.2",
                                  ".1.0.8802.1.1.2.1.5.6945.0.10"]


def test_dcbx_mib_is_the_rebuilt_seed():
    seed = os.path.join(TOP, "..", "shared", "seeds", "002_43b0f44a220542fb.txt")
    if not os.path.exists(seed):
        pytest.skip("the seeds are not beside this checkout")
    out = subprocess.run(["python3", os.path.join(MIBS, "tools", "rebuild-dcbx-mib.py"), seed],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    with open(os.path.join(MIBS, "LLDP-EXT-DCBX-MIB.txt")) as f:
        assert f.read() == out.stdout


def test_oid_header_is_what_the_tool_makes():
    """include/ibsnmpd/mib_oids.h (the handlers' OID_, COLUMN_ and SCALAR_
    names) is generated from mibs/ and committed: it must not drift."""
    out = subprocess.run(["python3", os.path.join(MIBS, "tools", "gen-mib-oids.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_oid_header_agrees_with_snmptranslate():
    """Every name in the header resolves, in net-snmp's own MIB parser, to the
    arcs the header gives it (an independent reading of the same modules)."""
    header = open(os.path.join(TOP, "include", "ibsnmpd", "mib_oids.h")).read()
    defs = re.findall(r"^#define (OID|COLUMN|SCALAR)_\w+ ([\d, ]+) /\* ([\w-]+::\w+) \*/$",
                      header, re.M)
    assert len(defs) > 400
    path = "%s:/usr/share/snmp/mibs:%s:%s" % (base_dir(), MIBS, os.path.join(TOP, "tests", "mibs"))
    names = sorted({name for _, _, name in defs})
    out = subprocess.run(["snmptranslate", "-M", path, "-m", "ALL", "-On"] + names,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    resolved = dict(zip(names, out.stdout.split()))
    assert len(resolved) == len(names)
    for kind, arcs, name in defs:
        full = [int(a) for a in resolved[name].strip(".").split(".")]
        if kind == "OID":
            assert full == [int(a) for a in arcs.split(",")], name
        else:
            assert full[-1] == int(arcs), name
