"""The simulated test bed (scripts/simfabric is its command line): beds of
ibsim, opensm, snmpd, snmptrapd and ibsnmpd (bed.py), what a manager does
with them (manager.py), and the fault and soak runs the tests and the
benches share (faults.py, soak.py)."""
from .bed import (PERIODIC_GROUPS, TOP, TOPOLOGIES, UMAD2SIM, Bed, BedError, alive, find_ibsnmpd,
                  free_udp_port, holds_udp_port, running, snmp_env, stop_all_on_sigterm, up)
from .manager import (TRAP_OID, fields, generated, guid_index, links, node_guids,
                      notifications, parse_varbinds, port_pkeys, wait_for)

__all__ = ["PERIODIC_GROUPS", "TOP", "TOPOLOGIES", "UMAD2SIM", "Bed", "BedError", "alive", "find_ibsnmpd",
           "free_udp_port", "holds_udp_port", "running", "snmp_env", "stop_all_on_sigterm", "up", "TRAP_OID", "fields",
           "generated", "guid_index", "links", "node_guids", "notifications", "parse_varbinds", "port_pkeys",
           "wait_for"]
