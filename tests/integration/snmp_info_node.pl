#!/usr/bin/perl
# What Netdisco's device library, SNMP::Info (Debian's libsnmp-info-perl),
# makes of one node's context: its topology (LLDP) and interface methods
# and its ENTITY-MIB inventory, as JSON on standard output. A device class
# of SNMP::Info is its base class with roles mixed in (as its Layer2 and
# Layer3 classes are); this one has the LLDP and Entity roles only, so
# that it loads no MIB module ibsnmpd does not serve.
#
# Usage: snmp_info_node.pl HOST PORT CONTEXT MIBDIRS USER AUTHPASS PRIVPASS
use strict;
use warnings;
use JSON::PP;
use SNMP::Info;
use SNMP::Info::Entity;
use SNMP::Info::LLDP;

package SNMP::Info::IbsnmpdNode;
our @ISA     = qw(SNMP::Info::LLDP SNMP::Info::Entity SNMP::Info);
our %MIBS    = (%SNMP::Info::MIBS, %SNMP::Info::LLDP::MIBS, %SNMP::Info::Entity::MIBS);
our %GLOBALS = (%SNMP::Info::GLOBALS, %SNMP::Info::LLDP::GLOBALS, %SNMP::Info::Entity::GLOBALS);
our %FUNCS   = (%SNMP::Info::FUNCS, %SNMP::Info::LLDP::FUNCS, %SNMP::Info::Entity::FUNCS);
our %MUNGE   = (%SNMP::Info::MUNGE, %SNMP::Info::LLDP::MUNGE, %SNMP::Info::Entity::MUNGE);

package main;

my ($host, $port, $context, $mibdirs, $user, $auth, $priv) = @ARGV;
die "usage: $0 HOST PORT CONTEXT MIBDIRS USER AUTHPASS PRIVPASS\n" unless defined $priv;
my $info = SNMP::Info::IbsnmpdNode->new(
    AutoSpecify => 0, DestHost => $host, RemotePort => $port, Version => 3,
    SecName => $user, SecLevel => 'authPriv', AuthProto => 'SHA', AuthPass => $auth,
    PrivProto => 'AES', PrivPass => $priv, Context => $context,
    MibDirs => [split /:/, $mibdirs], IgnoreNetSNMPConf => 1, Retries => 1,
    Timeout => 3000000)
    or die "SNMP::Info could not open a session to $host:$port context $context\n";
my %out = (has_topo => $info->has_topo() || [], name => $info->name(),
           lldp_loc_id => $info->lldp_loc_id());
$out{$_} = $info->$_() || {} for qw(c_id c_if c_port c_platform interfaces i_name
                                    i_description e_class e_name e_model e_vendor
                                    e_parent e_port e_serial e_fwver e_hwver);
print JSON::PP->new->canonical->encode(\%out), "\n";
