"""The Debian package (scripts/package): what it holds, lintian, and the
installed daemon serving a simulated fabric.

The package is built in a scratch directory and installed on this machine
with dpkg (the test runs as root on a machine of its own, as CI does; it is
skipped where ibsnmpd is installed already, so as not to replace a site's),
then purged, pass or fail. What is checked:
- the files where Debian puts them, the conffile, the Depends;
- lintian reports nothing the package's overrides do not explain;
- each man page renders (man) without a groff warning;
- systemd-analyze verify accepts the unit;
- /usr/sbin/ibsnmpd with the installed /etc/snmp/ibsnmpd.conf and the helper
  in /usr/libexec/ibsnmpd serves a simulated fabric: NodeInfo as smpquery
  reads it, and every port's row in the 64-bit table."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import TOP, fields, start_testbed, stop_testbed, wait_for

NODE_GUID = ".1.3.6.1.3.117.3.1.1.6.0"   # ibSmaNodeGuid.0
PM_LID = ".1.3.6.1.4.1.8072.9999.9999.117.1.3.1.1.4"
FILES = ["usr/sbin/ibsnmpd", "usr/libexec/ibsnmpd/ibsnmpd-discover", "etc/snmp/ibsnmpd.conf",
         "lib/systemd/system/ibsnmpd.service", "lib/systemd/system/ibsnmpd@.service",
         "usr/share/man/man8/ibsnmpd.8.gz",
         "usr/share/man/man5/ibsnmpd.conf.5.gz", "usr/share/doc/ibsnmpd/copyright",
         "usr/share/doc/ibsnmpd/changelog.Debian.gz"] + \
        ["usr/share/doc/ibsnmpd/examples/prometheus/%s" % f for f in (
            "prometheus.yml", "ibsnmpd-rules.yml", "ibsnmpd-rules.test.yml",
            "prometheus-snmp-exporter.yml", "ibsnmpd-snmp-rules.yml", "snmp.yml",
            "web-config.yml")] + \
        ["usr/share/snmp/mibs/%s.txt" % m for m in ("SMA-MIB", "IB-PM-MIB", "IB-TC-MIB",
                                                    "IBSNMPD-MIB", "IBSNMPD-PARTITION-MIB",
                                                    "LLDP-EXT-DCBX-MIB")]
DEPENDS = ("snmpd", "libsnmp40", "libibumad3", "libibmad5", "libibnetdisc5", "libmnl0",
           "libmicrohttpd12", "libgnutls30", "libcrypt1")


def run(*cmd, **kw):
    return subprocess.run(list(cmd), capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def package():
    if os.geteuid() != 0:
        pytest.skip("installs the package: needs root")
    if run("dpkg-query", "-W", "-f", "${Status}", "ibsnmpd").stdout.startswith("install"):
        pytest.skip("an ibsnmpd package is installed already")
    work = tempfile.mkdtemp(prefix="ibsnmpd-pkg.")
    try:
        out = run(os.path.join(TOP, "scripts", "package"), work,
                  env=dict(os.environ, PACKAGE_BUILD_DIR=os.path.join(work, "build")))
        assert out.returncode == 0, out.stderr[-3000:]
        deb = out.stdout.strip().splitlines()[-1]
        assert deb.endswith(".deb") and os.path.exists(deb)
        yield deb, out.stderr
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def installed(package):
    deb, _ = package
    out = run("dpkg", "-i", deb)
    try:
        assert out.returncode == 0, out.stdout + out.stderr
        yield deb
    finally:
        run("dpkg", "--purge", "ibsnmpd")
        assert not os.path.exists("/usr/sbin/ibsnmpd")


def test_the_files_the_conffile_and_the_depends(package):
    deb, _ = package
    listing = run("dpkg-deb", "-c", deb).stdout
    for f in FILES:
        assert "./%s\n" % f in listing + "\n", f
    assert "/usr/bin/" not in listing  # the helper is not on PATH
    control = tempfile.mkdtemp(prefix="ibsnmpd-pkg-control.")
    try:
        run("dpkg-deb", "-e", deb, control)
        assert open(os.path.join(control, "conffiles")).read().split() == ["/etc/snmp/ibsnmpd.conf"]
    finally:
        shutil.rmtree(control, ignore_errors=True)
    depends = run("dpkg-deb", "-f", deb, "Depends").stdout
    names = [d.strip().split()[0] for d in depends.split(",")]
    for d in DEPENDS:
        assert d in names, depends


def test_lintian_says_nothing_unexplained(package):
    if not shutil.which("lintian"):
        pytest.skip("lintian not installed")
    deb, _ = package
    out = run("lintian", "--tag-display-limit", "0", deb)
    tags = [l for l in out.stdout.splitlines() if l[:2] in ("E:", "W:")]
    assert not tags, out.stdout


def test_the_man_pages_render(installed):
    for page in ("8 ibsnmpd", "5 ibsnmpd.conf"):
        out = run("man", "--warnings", *page.split(), env=dict(os.environ, MANWIDTH="80"))
        assert out.returncode == 0 and "NAME" in out.stdout, out.stderr
        assert not out.stderr.strip(), out.stderr


def test_systemd_accepts_the_unit(installed):
    if not shutil.which("systemd-analyze"):
        pytest.skip("no systemd here")
    out = run("systemd-analyze", "verify", "/lib/systemd/system/ibsnmpd.service")
    assert out.returncode == 0, out.stdout + out.stderr
    # the template, as an instance (systemd verifies instances, not templates)
    d = tempfile.mkdtemp(prefix="ibsnmpd-unit.")
    try:
        shutil.copy("/lib/systemd/system/ibsnmpd@.service",
                    os.path.join(d, "ibsnmpd@storage.service"))
        out = run("systemd-analyze", "verify", os.path.join(d, "ibsnmpd@storage.service"))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_installed_daemon_serves_a_simulated_fabric(installed):
    bed = start_testbed(node="hca1", ibsnmpd="/usr/sbin/ibsnmpd",
                        extra_conf=["includeFile /etc/snmp/ibsnmpd.conf",
                                    "partitionFile {dir}/partitions.conf",
                                    "fabricStateFile {dir}/baseline"])
    try:
        got = bed.get(NODE_GUID)[NODE_GUID][1]
        theirs = fields(bed.run_on_node("smpquery", "nodeinfo", "-D", "0"))
        assert int(got.replace(" ", ""), 16) == int(theirs["Guid"], 16)
        # the discovery helper from /usr/libexec: every port of the subnet
        assert wait_for(lambda: len(bed.walk(PM_LID)) == 11, seconds=60)
    finally:
        stop_testbed(bed)
