#!/usr/bin/env python3
"""Captures the fuzz targets' seed corpora from real sources, into
tests/fuzz/corpus/TARGET/ (committed; run again to refresh them):

- every MAD ibsnmpd receives on the simulated fabric (-Drawmad): SMP answers
  of the switch and a CA, PerfMgt answers of the sweep and of a sampling
  PMA, SA Reports carrying the traps opensm forwards (injected 128-259);
- the datagrams of the fake DCB kernel of the tests and of this machine's
  kernel (-Drawdcbnl);
- the bed's partition file and the unit tests' one, the discovery helper's
  output on the bed, opensm's log lines, the example configuration's lines.

Usage: tests/fuzz/capture-seeds.py [BUILD_DIR]   (default: build)
"""
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "build"))
SIMFABRIC = os.path.join(TOP, "scripts", "simfabric")
CORPUS = os.path.join(HERE, "corpus")
PER_TARGET = 16  # seeds kept per target (distinct contents)
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
import fake_dcbnl as K  # noqa: E402

SMP = {0x10: "nodedesc", 0x11: "nodeinfo", 0x12: "switchinfo", 0x14: "guidinfo",
       0x15: "portinfo", 0x16: "pkey", 0x17: "sl2vl", 0x18: "vlarb", 0x19: "lft",
       0x1a: "rft", 0x1b: "mft", 0x20: "sminfo", 0x30: "vendordiag", 0x31: "ledinfo"}
PERF = {0x01: "pm_classportinfo", 0x10: "pm_sample_ctl", 0x11: "pm_sample_result",
        0x12: "pm_counters", 0x1d: "pm_counters_ext"}
seeds = {}
kinds = set()


def keep(target, data):
    seeds.setdefault(target, {})[hashlib.sha1(data).hexdigest()[:16]] = data


def env():
    return dict(os.environ, MIBS="")


def up(directory, node, conf=(), preload=None):
    cmd = [SIMFABRIC, "up", "--dir", directory, "--node", node, "--ibsnmpd",
           os.path.join(BUILD, "ibsnmpd"), "--ibsnmpd-debug", "rawmad,rawdcbnl"]
    if preload:
        cmd += ["--ibsnmpd-preload", preload]
    for line in conf:
        cmd += ["--conf-extra", line.replace("{dir}", directory)]
    subprocess.run(cmd, check=True, capture_output=True, env=env())


def down(directory):
    subprocess.run([SIMFABRIC, "down", "--dir", directory], capture_output=True)


def run(directory, *cmd, node=None):
    return subprocess.run([SIMFABRIC, "run", "--dir", directory] +
                          (["--node", node] if node else []) + ["--"] + list(cmd),
                          capture_output=True, text=True, env=env()).stdout


def take_mads(log):
    for m in re.finditer(r"rawmad: from LID \d+ status 0: ([0-9a-f]+)", log):
        mad = bytes.fromhex(m.group(1))
        if len(mad) < 64:
            continue
        mclass, method, attr = mad[1], mad[3], int.from_bytes(mad[16:18], "big")
        if ("mad_check", mclass, method, attr) not in kinds:  # one of each kind
            kinds.add(("mad_check", mclass, method, attr))
            keep("mad_check", mad)
        if mclass in (0x01, 0x81) and method & 0x80 and attr in SMP:
            keep("sma_" + SMP[attr], mad[64:128])
        elif mclass == 0x04 and method & 0x80 and attr in PERF:
            keep(PERF[attr], mad[64:256])
        elif mclass == 0x03 and method == 0x06 and attr == 0x0002:
            keep("notice", mad[56:136])


def take_dcbnl(log):
    for m in re.finditer(r"rawdcbnl: \d+ octets: ([0-9a-f]+)", log):
        keep("dcbnl", bytes.fromhex(m.group(1)))


def switch_bed(work):
    """ibsnmpd on the switch: SwitchInfo, forwarding tables, every port."""
    d = os.path.join(work, "switch")
    os.mkdir(d)
    up(d, "sw1")
    try:
        time.sleep(8)  # first fill of every group and a sweep
        take_mads(open(os.path.join(d, "ibsnmpd.log"), errors="replace").read())
    finally:
        down(d)


def trap_bed(work):
    """ibsnmpd on a CA, subscribed (IsSM shim), with every trap injected, a
    sampling PMA on hca3 (a node it watches), and the fake DCB kernel."""
    d = os.path.join(work, "traps")
    os.mkdir(d)
    kernel = K.FakeKernel(os.path.join(d, "dcbnl.sock"))
    kernel.add(K.Port(1, "lo", dcb=False))
    kernel.add(K.Port(5, "eth2"))
    kernel.start()
    shim = os.path.join(BUILD, "tests", "sim_issm_shim.so")
    up(d, "hca1", preload=shim, conf=["saKey 0x1", "osmLogFile {dir}/opensm.log",
                                      "trapResubscribeInterval 2", "dcbxSocket " +
                                      kernel.path, "cacheLifetime dcbx 2"])
    injector = os.path.join(BUILD, "tests", "sim-trap-injector")
    subprocess.run([SIMFABRIC, "spawn", "pma", "--dir", d, "--node", "hca3", "--",
                    os.path.join(BUILD, "tests", "sim-pma-responder")], capture_output=True)
    try:
        log = os.path.join(d, "ibsnmpd.log")
        for _ in range(60):
            if "subscribed to trap 259" in open(log, errors="replace").read():
                break
            time.sleep(1)
        for args in (["129", "lid=4", "port=1"], ["130", "lid=4", "port=1"],
                     ["131", "lid=4", "port=1"], ["144", "lid=4", "capmask=0x0251a04a"],
                     ["145", "lid=4", "sysguid=0xabcdef0123456789"],
                     ["256", "lid=4", "method=2", "attrid=0x15", "attrmod=7",
                      "key=0x1122334455667788"],
                     ["257", "lid1=4", "lid2=2", "key=0x8001", "sl=3", "qp1=0x123",
                      "qp2=0x456", "gid1=fe800000000000000000000000100005"],
                     ["258", "lid1=4", "lid2=2", "key=0x80010000", "sl=9", "qp1=0xabcdef"],
                     ["259", "valid=0x00ff", "lid1=4", "lid2=2", "key=0x8002", "swlid=1",
                      "port=3"]):
            run(d, injector, *args, node="hca3")
        subprocess.run([SIMFABRIC, "sim", "--dir", d, 'Unlink "hca2"[1]'], capture_output=True)
        time.sleep(2)
        subprocess.run([SIMFABRIC, "sim", "--dir", d, 'ReLink "hca2"[1]'], capture_output=True)
        kernel.notify(5)
        guid = re.search(r'"H-([0-9a-f]+)"\s+# "hca3"', run(d, "ibnetdiscover"))
        if guid:  # its sampling state: read while the node is watched
            with open(os.path.join(d, "ibsnmpd.conf"), "a") as f:
                f.write("pmSampleNode 0x%s\n" % guid.group(1))
            subprocess.run(["kill", "-HUP", open(os.path.join(d, "ibsnmpd.pid")).read().strip()])
        keep("discovery", run(d, os.path.join(BUILD, "ibsnmpd-discover"), "ibsim0", "1", "500",
                              "2").encode())
        time.sleep(12) # the rediscovery after trap 128, then a read of the watched node
        text = open(log, errors="replace").read()
        if not guid or "SIGHUP" not in text:
            print("no sampling state read (hca3 not found, or no SIGHUP)", file=sys.stderr)
        take_mads(text)
        take_dcbnl(text)
        for line in open(os.path.join(d, "opensm.log"), errors="replace"):
            if "Received Generic Notice" in line or len(seeds.get("osm_log", {})) < 4:
                keep("osm_log", line.encode())
        keep("partition_file", open(os.path.join(d, "partitions.conf"), "rb").read())
    finally:
        down(d)
        kernel.stop()


def this_kernel(work):
    """This machine's kernel: link dumps and refusals (no DCB device here)."""
    d = os.path.join(work, "kernel")
    os.mkdir(d)
    up(d, "hca1")
    try:
        time.sleep(4)
        take_dcbnl(open(os.path.join(d, "ibsnmpd.log"), errors="replace").read())
    finally:
        down(d)


def files():
    text = open(os.path.join(TOP, "tests", "unit", "test_partition_file.c")).read()
    m = re.search(r'static const char \w+\[\] =\s*((?:"(?:[^"\\]|\\.)*"\s*)+);', text)
    if m:
        joined = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
        keep("partition_file", joined.encode().decode("unicode_escape").encode())
    # fuzz_config: the first octet picks the parser (uint, bool, GUID, cacheLifetime)
    parser = {"yes": 1, "no": 1}
    for line in open(os.path.join(TOP, "conf", "ibsnmpd.conf")):
        line = line.strip().lstrip("#").strip()
        m = re.match(r"^([a-zA-Z]+) (\S.*)$", line)
        if not m:
            continue
        keep("config_tokens", line.encode())
        token, value = m.groups()
        if token == "cacheLifetime":
            which = 3
        elif token in ("pmSampleNode", "saKey"):
            which = 2
        elif value.split()[0] in parser:
            which = 1
        elif value.split()[0].isdigit():
            which = 0
        else:
            continue
        keep("config", bytes([which]) + value.encode())


def written_from_iba():
    """ibsim answers no RandomForwardingTable, VendorDiag nor LedInfo: their
    seeds are written from IBA's layouts (14.2.5.11, .14, .15)."""
    rft = b"".join(lid.to_bytes(2, "big") + bytes([0x80 | (lmc << 4), port])
                   for lid, lmc, port in [(1, 0, 1), (2, 1, 2), (0x20, 7, 36)] + [(0, 0, 0)] * 13)
    keep("sma_rft", rft)
    keep("sma_vendordiag", bytes([0, 1, 0, 0]) + bytes(range(60)))
    keep("sma_ledinfo", bytes([0x80]) + bytes(63))
    keep("sma_ledinfo", bytes(64))


def main():
    work = tempfile.mkdtemp(prefix="ibsnmpd-seeds.")
    try:
        files()
        written_from_iba()
        switch_bed(work)
        trap_bed(work)
        this_kernel(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for target, found in sorted(seeds.items()):
        d = os.path.join(CORPUS, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in sorted(found.items())[:PER_TARGET]:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print("%-20s %3d seeds (of %d distinct)" % (target, min(len(found), PER_TARGET),
                                                    len(found)))


if __name__ == "__main__":
    main()
