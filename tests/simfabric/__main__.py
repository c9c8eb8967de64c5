"""simfabric: a private, complete stack for trying ibsnmpd without hardware and
for the integration tests: ibsim (the fabric), opensm (SM/SA), snmpd (AgentX
master on a loopback UDP port), snmptrapd (writing to a file) and ibsnmpd
attached to one node of the fabric. Everything lives in one directory; every
process is recorded there and stopped by PID.

  simfabric up [--topology FILE] [--node NAME] [--dir DIR] [--ibsnmpd PATH]
               [--conf-extra LINE]... [--snmpd-extra LINE]... [--no-ibsnmpd] [--direct]
               [--ibsnmpd-preload LIB] [--ibsnmpd-debug TOKENS]
               [--no-traps] [--no-partitions] [--minimal]
               [--big HOSTS [--radix R] [--layout fattree3|fattree2|rail] [--speed S]
                [--real-names] [--mkey KEY [--mkey-protect LEVEL]] [--fabrics 2]]
      starts the stack, waits until the subnet is up and ibsnmpd has
      registered, prints shell assignments (SIMFABRIC_DIR=, SNMP_TARGET=, ...)
      Every feature works in the bed as it comes: IB traps reach ibsnmpd
      (the IsSM shim sim_issm_shim.so preloaded, found beside the daemon's
      build or by $SIM_ISSM_SHIM; saKey and osmLogFile of the bed's opensm)
      and the partition policy edits the bed's opensm partition file and
      signals that opensm. --no-traps and --no-partitions leave those out,
      --minimal both (the integration tests: each configures what it tests).
      --big HOSTS: the project's simulator of big fabrics (fabricsim) in place
      of ibsim and opensm: a three-level fat tree of radix R (64) by default,
      NDR 4X links; --layout rail: HOSTS servers of 8 HCAs, one per rail.
      fabricsim plays the SM (LIDs, SMInfo, trap 128 Reports); there is no
      partition policy (no opensm). ibsnmpd attaches to host-1 (srv-1-hca1).
      --real-names: nodes described as on real fabrics (every switch of a
      model alike, hosts "HOST mlx5_N"), and a node-name map naming the leaf
      switches (SIMFABRIC_NODE_NAME_MAP) given to ibsnmpd (nodeNameMap).
      --mkey KEY: every port protected by that M_Key (opensm's m_key), at
      --mkey-protect LEVEL (0-3, default 3); ibsnmpd is given no key (add
      --conf-extra 'mKey KEY'); infiniband-diags take it as -y KEY.
      --fabrics 2: two simulated fabrics (GUIDs apart) and one ibsnmpd on each
      (ibsnmpd, ibsnmpd-2) under the one snmpd, each with fabricName
      fabric-N: SIMFABRIC_FABRIC_N_CONTEXT and each one's other variables;
      sim and run take --fabric 2 for the second.
  simfabric down [--dir DIR]          stops everything it started
  simfabric sim [--dir DIR] [--fabric 2] 'COMMAND' one command to ibsim's console
  simfabric stop|start SERVICE [--dir DIR] [--node NAME]
      SERVICE is ibsnmpd, snmpd, snmptrapd or opensm: stop it, or start it
      again with the command line it was first started with (--node: attach
      it to another node, e.g. to move the SM)
  simfabric run [--dir DIR] [--node NAME] [--fabric 2] -- CMD...
      runs CMD (e.g. smpquery) attached to a node of the simulated fabric
  simfabric spawn SERVICE [--dir DIR] [--node NAME] -- CMD...
      starts CMD in the background attached to a node, recorded as SERVICE
      (stop SERVICE or down stops it by PID); output in DIR/SERVICE.out

DIR defaults to $SIMFABRIC_DIR, else (for up) a new directory under /tmp."""
import os
import sys

from .bed import Bed, BedError, up


def usage(code):
    print(__doc__.strip())
    sys.exit(code)


def die(text):
    print("simfabric: %s" % text, file=sys.stderr)
    sys.exit(1)


def split_dir(argv, directory):
    """--dir DIR anywhere before "--"; the other arguments."""
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--dir" and i + 1 < len(argv):
            directory = argv[i + 1]
            i += 2
        elif argv[i] == "--":
            args += argv[i:]
            break
        else:
            args.append(argv[i])
            i += 1
    return directory, args


def cmd_up(args, directory):
    opts = {"conf_extra": [], "snmpd_extra": [], "directory": directory}
    with_value = {"--topology": "topology", "--node": "node", "--dir": "directory",
                  "--ibsnmpd": "ibsnmpd", "--ibsnmpd-preload": "preload",
                  "--ibsnmpd-debug": "debug"}
    big_value = {"--big": "hosts", "--radix": "radix", "--layout": "layout", "--speed": "speed",
                 "--mkey": "mkey", "--mkey-protect": "mkey_protect", "--fabrics": "fabrics"}
    i = 0
    while i < len(args):
        a = args[i]
        if a in big_value and i + 1 < len(args):
            opts.setdefault("big", {})[big_value[a]] = args[i + 1]
            i += 2
            continue
        if a in with_value and i + 1 < len(args):
            opts[with_value[a]] = args[i + 1]
            i += 2
            continue
        if a in ("--conf-extra", "--snmpd-extra") and i + 1 < len(args):
            opts[a[2:].replace("-", "_")].append(args[i + 1])
            i += 2
            continue
        flags = {"--no-ibsnmpd": {"with_agent": False}, "--direct": {"direct": True},
                 "--no-traps": {"traps": False}, "--no-partitions": {"partitions": False},
                 "--minimal": {"traps": False, "partitions": False}}
        if a == "--real-names":
            opts.setdefault("big", {})["names"] = "real"
            i += 1
            continue
        if a not in flags:
            die("up: unknown option %s" % a)
        opts.update(flags[a])
        i += 1
    if "big" in opts and "hosts" not in opts["big"]:
        die("up: --radix, --layout, --speed, --real-names and --mkey go with --big HOSTS")
    bed = up(**opts)
    with open(bed.path("env")) as f:
        sys.stdout.write(f.read())


def cmd_run(bed, args, spawn_name=None):
    node, fabric = None, 1
    while args:
        if args[0] == "--node" and len(args) > 1:
            node = args[1]
            args = args[2:]
        elif args[0] == "--fabric" and len(args) > 1:
            fabric = int(args[1])
            args = args[2:]
        elif args[0] == "--":
            args = args[1:]
            break
        else:
            break
    if spawn_name is not None:
        if not args:
            die("spawn: give SERVICE -- COMMAND")
        bed.spawn(spawn_name, *args, node=node)
        return
    argv = bed.command(*args, node=node, fabric=fabric)
    os.execvp(argv[0], argv)


def main(argv):
    if not argv:
        usage(1)
    sub = argv[0]
    if sub in ("-h", "--help", "help"):
        usage(0)
    directory, args = split_dir(argv[1:], os.environ.get("SIMFABRIC_DIR") or None)
    try:
        if sub == "up":
            cmd_up(args, directory)
            return
        if sub not in ("down", "sim", "run", "spawn", "stop", "start"):
            die("unknown command '%s' (up, down, sim, run, spawn, stop, start)" % sub)
        if not directory or not os.path.isdir(directory):
            die("no test bed in '%s' (give --dir or SIMFABRIC_DIR)" % (directory or ""))
        bed = Bed(directory)
        if sub == "down":
            bed.down()
        elif sub == "sim":
            fabric = 1
            if args[:1] == ["--fabric"] and len(args) > 1:
                fabric, args = int(args[1]), args[2:]
            if not args:
                die("sim: give one console command")
            bed.sim(" ".join(args), fabric=fabric)
        elif sub == "run":
            cmd_run(bed, args)
        elif sub == "spawn":
            if not args:
                die("spawn: give SERVICE -- COMMAND")
            cmd_run(bed, args[1:], spawn_name=args[0])
        elif sub == "stop":
            bed.stop(args[0] if args else "")
        elif sub == "start":
            node = args[2] if len(args) > 2 and args[1] == "--node" else None
            bed.start(args[0] if args else "", node=node)
    except BedError as e:
        die(str(e))


if __name__ == "__main__":
    main(sys.argv[1:])
