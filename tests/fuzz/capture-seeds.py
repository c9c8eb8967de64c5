#!/usr/bin/env python3
"""Captures the fuzz targets' seed corpora from real sources, into
tests/fuzz/corpus/TARGET/ (committed; run again to refresh them):

- every MAD ibsnmpd receives on the simulated fabric (-Drawmad): SMP answers
  of the switch and a CA, PerfMgt answers of the sweep and of a sampling
  PMA, SA Reports carrying the traps opensm forwards (injected 128-259);
  on the project's simulator, NVIDIA's vendor MADs (GeneralInfo, every
  register read over AccessRegisterGMP, the EEPROMs MCIA reads where PDDR
  is not), the same registers wrapped as AccessRegister TLVs;
- the datagrams of the fake DCB kernel of the tests and of this machine's
  kernel (-Drawdcbnl);
- the bed's partition file and the unit tests' one, the discovery helper's
  output on the bed, opensm's log lines, the example configuration's lines.

Usage: tests/fuzz/capture-seeds.py [BUILD_DIR] [BED...]   (default: build, every bed;
       beds: files switch traps kernel vitals; the vitals bed alone rewrites
       only the vitals_* targets, any other bed every target it captured)
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
BEDS = sys.argv[2:]
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
# NVIDIA's registers by ID (AccessRegisterGMP's attribute modifier)
REGISTERS = {0x9020: "mgir", 0x9021: "msgi", 0x9009: "mtcap", 0x900a: "mtmp", 0x9001: "mfcr",
             0x9003: "mfsm", 0x9007: "fore", 0x9100: "mgpir", 0x5012: "pmaos", 0x5002: "pmlp",
             0x5031: "pddr", 0x9014: "mcia"}
seeds = {}
kinds = set()
eeproms = {}  # (LID, module) -> {(page, offset): octets} of the MCIA answers


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
    for m in re.finditer(r"rawmad: from LID (\d+) status 0: ([0-9a-f]+)", log):
        mad = bytes.fromhex(m.group(2))
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
        elif mclass == 0x0a and method & 0x80:
            take_vendor(int(m.group(1)), mad)


def take_vendor(lid, mad):
    """A vendor answer: GeneralInfo, or a register over GMP (the register
    also wrapped in AccessRegister's TLVs, which no simulated node needs)"""
    attr, reg_id = int.from_bytes(mad[16:18], "big"), int.from_bytes(mad[20:24], "big")
    data = mad[24:]
    if attr == 0x0017:
        keep("vitals_general_info", data)
    elif attr == 0x0051 and reg_id in REGISTERS:
        keep("vitals_access_reg_gmp", data)
        reg = data[12:]
        keep("vitals_" + REGISTERS[reg_id], reg)
        size = {"mtmp": 32, "pmaos": 16, "mcia": 148, "mgir": 160, "pddr": 204}.get(
            REGISTERS[reg_id], 64)
        body = reg[:size][:len(reg[:size]) // 4 * 4]
        op = bytes([0x08, 0x04, 0, 0]) + reg_id.to_bytes(2, "big") + bytes([0x81, 0x01]) + bytes(8)
        rt = bytes([0x18, (len(body) + 4) // 4, 0, 0])
        keep("vitals_access_reg", bytes(8) + op + rt + body)
        if REGISTERS[reg_id] == "mcia" and reg[3] == 0:  # status ok: EEPROM octets
            module, page, offset = reg[1], reg[5], int.from_bytes(reg[6:8], "big")
            eeproms.setdefault((lid, module), {})[(page, offset)] = reg[16:16 + reg[11]]


def take_eeproms():
    """Each module's EEPROM as fuzz_vitals_eeprom takes it: lower page and
    upper page 00h, page 11h, page 02h (128 octets each, from the MCIA
    answers' chunks)"""
    for chunks in eeproms.values():
        pages = {}
        for (number, offset), octets in chunks.items():
            page = pages.setdefault(number, bytearray(256))
            page[offset:offset + len(octets)] = octets
        blank = bytearray(256)
        lower = pages.get(0, blank)
        thresholds = pages.get(2, pages.get(3, blank))
        keep("vitals_eeprom", bytes(lower[:256] + pages.get(0x11, blank)[128:] +
                                    thresholds[128:]))


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


def written_sff8636():
    """The simulator's modules are all CMIS: an SFF-8636 QSFP28 copper cable
    written from SFF-8636's layout (monitors at 22-57, upper page 00h's
    identity at 128-223, page 03h's thresholds)"""
    e = bytearray(512)
    e[0] = e[128] = 0x11
    e[22:24] = (35 * 256).to_bytes(2, "big")
    e[26:28] = (33000).to_bytes(2, "big")
    for lane in range(4):
        e[34 + 2 * lane:36 + 2 * lane] = (5000 + lane).to_bytes(2, "big")
        e[42 + 2 * lane:44 + 2 * lane] = (3000).to_bytes(2, "big")
        e[50 + 2 * lane:52 + 2 * lane] = (6000).to_bytes(2, "big")
    e[146], e[147] = 3, 0xa0
    e[148:164] = b"Mellanox".ljust(16)
    e[168:184] = b"MCP1600-E003".ljust(16)
    e[184:186] = b"A2"
    e[196:212] = b"MT1234VS00001".ljust(16)
    e[212:220] = b"20110100"
    e[384:386] = (75 * 256).to_bytes(2, "big")
    keep("vitals_eeprom", bytes(e))


def vitals_bed(work):
    """ibsnmpd on a host of the project's simulator (16 hosts, radix 8), the
    vitals swept every 3 s, a spine whose PDDR is missing (its modules from
    their EEPROM), a hot sensor, a stopped fan, a module out."""
    d = os.path.join(work, "vitals")
    os.mkdir(d)
    cmd = [SIMFABRIC, "up", "--dir", d, "--big", "16", "--radix", "8", "--minimal",
           "--ibsnmpd", os.path.join(BUILD, "ibsnmpd"), "--ibsnmpd-debug", "rawmad",
           "--conf-extra", "cacheLifetime vitalsSensors 3"]
    subprocess.run(cmd, check=True, capture_output=True, env=env())
    try:
        for command in ('Vendor "spine-1-4" noregister PDDR', 'Temperature "leaf-1-1" 0 110',
                        'Fan "leaf-1-2" 3 0', 'Module "leaf-1-3"[1] Remove'):
            subprocess.run([SIMFABRIC, "sim", "--dir", d, command], capture_output=True)
        # again, so the inventory sees the spine without PDDR
        subprocess.run([SIMFABRIC, "stop", "ibsnmpd", "--dir", d], capture_output=True)
        subprocess.run([SIMFABRIC, "start", "ibsnmpd", "--dir", d], capture_output=True)
        time.sleep(15)
        take_mads(open(os.path.join(d, "ibsnmpd.log"), errors="replace").read())
        take_eeproms()
        written_sff8636()
    finally:
        down(d)


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


def scrape_queries():
    """The queries of a /metrics scrape, as the README and the shipped
    Prometheus configuration write them (libmicrohttpd decodes them)"""
    for query in ("", "collect[]=vitals&collect[]=modules", "node_type=switch",
                  "collect[]=counters&node_type=ca&shard=3&shards=8", "shards=4096&shard=4095",
                  "shard=1", "collect[]=nothing", "node_type=switch&node_type=router&x"):
        keep("prom_query", query.encode())


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
    beds = {"files": lambda: (files(), written_from_iba(), scrape_queries()), "switch": switch_bed,
            "traps": trap_bed, "kernel": this_kernel, "vitals": vitals_bed}
    try:
        for name in BEDS or beds:
            if name not in beds:
                sys.exit("capture-seeds: no bed %s (%s)" % (name, " ".join(beds)))
            beds[name](work) if name != "files" else beds[name]()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    only = "vitals_" if BEDS == ["vitals"] else ""
    for target, found in sorted(seeds.items()):
        if not target.startswith(only):
            continue
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
