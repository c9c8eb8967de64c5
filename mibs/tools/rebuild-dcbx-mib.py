#!/usr/bin/env python3
"""Rebuilds mibs/LLDP-EXT-DCBX-MIB.txt from seed 002 (the draft of 2008-11-20,
as scraped: one text line per table row between '|' lines).

    python3 mibs/tools/rebuild-dcbx-mib.py ../shared/seeds/002_*.txt > mibs/LLDP-EXT-DCBX-MIB.txt

What it changes, so that the module is valid SMIv2 (smilint -l 3 clean with
the test-only LLDP-MIB of tests/mibs/), is listed in FIXES and in
mibs/README.md; names, OIDs and syntaxes stay the draft's."""
import re
import sys

HEADER = """-- LLDP-EXT-DCBX-MIB, rebuilt by the ibsnmpd project from the draft of
-- 2008-11-20 (organisation and contacts as the draft gives them, below).
-- Names, OIDs and syntaxes are the draft's; the changes that make it valid
-- SMIv2 are listed in its REVISION clause and in mibs/README.md.
"""

REVISION = '''REVISION "200811200000Z"
DESCRIPTION "The draft of November 20, 2008, as served by ibsnmpd: index
objects made not-accessible (accessible-for-notify for the two that
notifications carry), lldpXdcbxFeatPeerAdvertise read-only,
lldpXdcbxFeatAppProtoId sized, conformance statements added under
lldpXdcbxMIB 3 (see ibsnmpd's mibs/README.md)."
::= { lldpExtensions 6945 }
-- OUI for IEEE DCBX is 6945 (00-1B-21)'''

NOTIFY_INDEXES = ["lldpXdcbxPortNumber", "lldpXdcbxFeatType"]
OTHER_INDEXES = ["lldpXdcbxFeatSubType", "lldpXdcbxFeatPgPrioAllocPrioId",
                 "lldpXdcbxFeatPgBwAllocPgId", "lldpXdcbxFeatPfcPriority",
                 "lldpXdcbxFeatAppProtoIndex", "lldpXdcbxFeatAppProtoPriority"]


def set_access(body, name, access):
    pat = re.compile(r"(\n" + name + r" OBJECT-TYPE\nSYNTAX [^\n]*\n)MAX-ACCESS [a-z-]+")
    if not pat.search(body):
        sys.exit("not in the seed: " + name)
    return pat.sub(r"\1MAX-ACCESS " + access, body)


def fix(body):
    body = body.replace("SnmpAdminString\nFROM SNMP-FRAMEWORK-MIB\n", "")  # unused import
    body = body.replace("<20>", "-").replace("<4C>", "'")  # the scrape's mangled characters
    for n in NOTIFY_INDEXES:
        body = set_access(body, n, "accessible-for-notify")
    for n in OTHER_INDEXES:
        body = set_access(body, n, "not-accessible")
    body = set_access(body, "lldpXdcbxFeatPeerAdvertise", "read-only")  # a peer's value
    body = re.sub(r'(Machine\.")\nDEFVAL \{ 0 \}', r"\1", body)  # no DEFVAL on an index
    body = body.replace("lldpXdcbxFeatAppProtoId INTEGER }", "lldpXdcbxFeatAppProtoId Integer32 }")
    body = body.replace("lldpXdcbxFeatAppProtoId OBJECT-TYPE\nSYNTAX INTEGER\n",
                        "lldpXdcbxFeatAppProtoId OBJECT-TYPE\nSYNTAX Integer32 (0..65535)\n")
    body = body.replace('LAST-UPDATED "200811200000Z" -- November 20, 2008',
                        'LAST-UPDATED "200811200000Z"')
    body = body.replace("-- OUI for IEEE DCBX is 6945 (00-1B-21)\n::= { lldpExtensions 6945 }",
                        REVISION)
    return body


def conformance(body):
    objs = [m.group(1) for m in re.finditer(
        r"\n(\w+) OBJECT-TYPE\nSYNTAX [^\n]*\n(?:UNITS [^\n]*\n)?MAX-ACCESS "
        r"(?:read-only|read-write|accessible-for-notify)", body)]
    notifs = re.findall(r"\n(\w+) NOTIFICATION-TYPE", body)
    return body[:body.rindex("END")] + """--------
-- Conformance (added by ibsnmpd; the draft has none)
--------
lldpXdcbxConformance OBJECT IDENTIFIER ::= { lldpXdcbxMIB 3 }
lldpXdcbxCompliances OBJECT IDENTIFIER ::= { lldpXdcbxConformance 1 }
lldpXdcbxGroups OBJECT IDENTIFIER ::= { lldpXdcbxConformance 2 }
lldpXdcbxCompliance MODULE-COMPLIANCE
STATUS current
DESCRIPTION
"The objects and notifications of this module."
MODULE -- this module
MANDATORY-GROUPS { lldpXdcbxGroup, lldpXdcbxNotificationGroup }
::= { lldpXdcbxCompliances 1 }
lldpXdcbxGroup OBJECT-GROUP
OBJECTS { %s }
STATUS current
DESCRIPTION
"DCBX state and configuration."
::= { lldpXdcbxGroups 1 }
lldpXdcbxNotificationGroup NOTIFICATION-GROUP
NOTIFICATIONS { %s }
STATUS current
DESCRIPTION
"DCBX notifications."
::= { lldpXdcbxGroups 2 }
END
""" % (", ".join(objs), ", ".join(notifs))


DEFINITION = re.compile(r"^(\w[\w-]* (OBJECT-TYPE|NOTIFICATION-TYPE|OBJECT IDENTIFIER|"
                        r"MODULE-IDENTITY|MODULE-COMPLIANCE|OBJECT-GROUP|NOTIFICATION-GROUP)\b|"
                        r"\w+ ::= (TEXTUAL-CONVENTION|SEQUENCE)|IMPORTS|END|"
                        r"LLDP-EXT-DCBX-MIB DEFINITIONS|--)")


def indent(body):
    out, quoted = [], False
    for line in body.split("\n"):
        s = line.strip()
        if quoted:
            out.append("         " + s if s else "")
        elif not s or DEFINITION.match(s):
            if s and out and out[-1] and re.match(r"^\w", s) and not s.startswith("IMPORTS"):
                out.append("")
            out.append(s)
        elif s.startswith("FROM"):
            out.append("        " + s)
        elif s.startswith('"'):
            out.append("        " + s)
        else:
            out.append("    " + s)
        if s.count('"') % 2:
            quoted = not quoted
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def main():
    with open(sys.argv[1], encoding="utf-8", errors="replace") as f:
        lines = [l for l in f.read().split("\n") if not re.match(r"^\|*$", l)]
    start = lines.index("LLDP-EXT-DCBX-MIB DEFINITIONS ::= BEGIN")
    sys.stdout.write(HEADER + indent(conformance(fix("\n".join(lines[start:])))))


if __name__ == "__main__":
    main()
