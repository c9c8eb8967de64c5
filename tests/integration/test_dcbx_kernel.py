"""DCBX against the real kernel of this machine: no netdev here has dcbnl ops
(lo, eth0 and veth answer EOPNOTSUPP; ../shared/notes/dcbx.md), so ibsnmpd
must serve an empty DCBX table, say why once, and stay healthy."""
import os
import subprocess
import time

import pytest

from conftest import start_testbed, stop_testbed, wait_for

DCBX = ".1.0.8802.1.1.2.1.5.6945"


@pytest.fixture(scope="module")
def veth():
    if os.geteuid() != 0:
        pytest.skip("creating a veth pair needs root")
    name = "ibsv%d" % (os.getpid() % 100000)
    subprocess.run(["ip", "link", "add", name, "type", "veth", "peer", "name", name + "p"],
                   check=True)
    try:
        yield name
    finally:
        subprocess.run(["ip", "link", "del", name], check=False)


@pytest.fixture(scope="module")
def bed(veth):
    b = start_testbed(node="hca1", extra_conf=["cacheLifetime dcbx 1"])
    yield b
    stop_testbed(b)


def test_empty_table_logged_once_and_healthy(bed, veth):
    note = "no interface answers dcbnl"
    assert wait_for(lambda: note in bed.log("ibsnmpd.log"))
    log = bed.log("ibsnmpd.log")
    assert "lo (Operation not supported)" in log and veth + " (" in log
    time.sleep(4)  # several more polls, one a second
    assert bed.log("ibsnmpd.log").count(note) == 1
    assert bed.walk(DCBX) == {}
    # the rest of the agent answers as before
    out = bed.snmp("snmpget", ".1.3.6.1.3.117.3.1.1.1.0")
    assert out.returncode == 0 and "No Such" not in out.stdout, out.stdout + out.stderr
