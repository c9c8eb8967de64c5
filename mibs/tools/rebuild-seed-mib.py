#!/usr/bin/env python3
"""Rebuild a MIB module from a flattened IETF draft (the project's seeds).

The seeds 000 and 001 hold a whole draft on one line: line breaks are gone,
page headers and footers sit inside definitions, and ASN.1 comments ("--",
which end at a line break) swallow whatever follows them.  This script:

  1. cuts the module out (NAME DEFINITIONS ::= BEGIN ... END),
  2. removes the page headers/footers (a regex given per seed),
  3. splits the text into strings, comments and tokens, ending a comment at
     the next "--" or at the next token that can only start ASN.1 again,
  4. prints the module again in the usual layout, one clause per line,
  5. applies the fix-ups listed in FIXUPS (each one documented in
     mibs/README.md).

Usage: rebuild-seed-mib.py sma SEED.txt > mibs/SMA-MIB.txt
The output is committed; this script documents how it was made.
"""
import re
import sys
import textwrap

SEEDS = {
    "sma": {
        "module": "SMA-MIB",
        "page_break": r"\s*Expires December 2003 \[Page \d+\] Internet-Draft IPOVERIB SMA MIB June 2003\s*",
        "year": "2003",
    },
    "pm": {
        "module": "IB-PM-MIB",
        "page_break": r"\s*Yang/Tsang Internet Draft- Expires May 2002 \d+ Infiniband Performance Management MIB Nov 2001\s*",
        "year": "2001",
    },
}

# Tokens after which the text is ASN.1 again (they end a comment).
DEF_MACROS = ("OBJECT-TYPE", "OBJECT IDENTIFIER", "MODULE-IDENTITY", "TEXTUAL-CONVENTION",
              "NOTIFICATION-TYPE", "OBJECT-GROUP", "NOTIFICATION-GROUP", "MODULE-COMPLIANCE")
RESUME = re.compile(
    r"--|\b[a-zA-Z][A-Za-z0-9-]*\s+(?:" + "|".join(re.escape(m) for m in DEF_MACROS) +
    r")\b|\b[A-Z][A-Za-z0-9]*\s+::=|\bORGANIZATION\b|\bMANDATORY-GROUPS\b")

CLAUSES = ("SYNTAX", "MAX-ACCESS", "MIN-ACCESS", "STATUS", "DESCRIPTION", "REFERENCE", "INDEX",
           "AUGMENTS", "UNITS", "DEFVAL", "OBJECTS", "NOTIFICATIONS", "DISPLAY-HINT",
           "LAST-UPDATED", "ORGANIZATION", "CONTACT-INFO", "REVISION", "MODULE",
           "MANDATORY-GROUPS", "GROUP", "WRITE-SYNTAX", "IMPORTS")
STRING_CLAUSES = ("DESCRIPTION", "REFERENCE", "ORGANIZATION", "CONTACT-INFO")


def lex(text):
    """Yield ('str', s), ('comment', s) and ('tok', s)."""
    pos = 0
    while pos < len(text):
        c = text[pos]
        if c.isspace():
            pos += 1
        elif c == '"':
            end = text.index('"', pos + 1)
            yield "str", " ".join(text[pos + 1:end].split())
            pos = end + 1
        elif text.startswith("--", pos):
            m = RESUME.search(text, pos + 2)
            end = m.start() if m else len(text)
            yield "comment", text[pos + 2:end].strip()
            pos = end
        else:
            m = re.compile(r"::=|\.\.|[{}(),;|]|[^\s{}(),;|\"]+").match(text, pos)
            tok = m.group(0)
            if tok.endswith("..") and len(tok) > 2:  # "1..64" style ranges stay one token
                pass
            yield "tok", tok
            pos = m.end()


def wrap_string(s, indent):
    lines = textwrap.wrap(s, width=70 - len(indent), break_long_words=False,
                          break_on_hyphens=False) or [""]
    out = [indent + '"' + lines[0]]
    out += [indent + " " + ln for ln in lines[1:]]
    out[-1] += '"'
    return out


def render(items):
    out = []
    cur = ""          # line being built
    depth = 0         # brace depth
    in_seq = False    # inside SEQUENCE { ... }
    prev = None

    def flush():
        nonlocal cur
        if cur.strip():
            out.append(cur.rstrip())
        cur = ""

    toks = list(items)
    for i, (kind, val) in enumerate(toks):
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        nxt2 = toks[i + 2][1] if i + 2 < len(toks) else ""
        if kind == "comment":
            flush()
            if prev != "comment" and out and out[-1].endswith("}"):
                out.append("")
            out.append(("-- " + val).rstrip() if val and not val.startswith("*") else "--" + val)
            prev = "comment"
            continue
        if kind == "str":
            if prev in STRING_CLAUSES or prev == "REVISION":
                flush()
                out.extend(wrap_string(val, "        " if depth == 0 else "            "))
            else:
                cur += ' "' + val + '"'
            prev = "str"
            continue
        tok = val
        starts_def = (depth == 0 and re.match(r"^[A-Za-z]", tok) and
                      tok not in ("IDENTIFIER", "DEFINITIONS") and
                      (nxt in ("OBJECT-TYPE", "MODULE-IDENTITY", "TEXTUAL-CONVENTION",
                               "NOTIFICATION-TYPE", "OBJECT-GROUP", "NOTIFICATION-GROUP",
                               "MODULE-COMPLIANCE", "::=") or
                       (nxt == "OBJECT" and nxt2 == "IDENTIFIER"))
                      and prev not in CLAUSES + ("::=", "FROM", ","))
        if starts_def:
            flush()
            if out and out[-1] != "" and not out[-1].startswith("--"):
                out.append("")
            cur = tok
        elif tok in CLAUSES and not (tok == "MODULE" and nxt == "IDENTITY"):
            flush()
            cur = "    " + tok
        elif tok == "::=" and depth == 0 and not cur.lstrip().startswith(("SEQUENCE",)) and \
                prev not in ("OBJECT-TYPE",) and not re.match(r"^[A-Za-z]\S*$", cur.strip()) and \
                not re.match(r"^[A-Za-z]\S* OBJECT IDENTIFIER$", cur.strip()) and \
                not re.match(r"^[A-Za-z]\S* DEFINITIONS$", cur.strip()):
            flush()
            cur = "    ::="
        elif tok == "{":
            depth += 1
            if prev == "SEQUENCE":
                in_seq = True
                cur += " {"
                flush()
                cur = "    "
            else:
                cur += " {"
        elif tok == "}":
            depth -= 1
            if in_seq and depth == 0:
                flush()
                out.append("}")
                out.append("")
                in_seq = False
            else:
                cur += " }"
        elif tok == ",":
            cur += ","
            if in_seq and depth == 1:
                flush()
                cur = "    "
        elif tok in (")", "..") or prev in ("(", ".."):
            cur += tok
        elif tok == "(":
            cur += "("
        elif tok == ";":
            cur += ";"
        else:
            cur += (" " if cur and not cur.endswith(" ") else "") + tok
        prev = tok
    flush()
    return out


def reflow_long(lines):
    """Break lines over 72 columns at commas (enumerations, OBJECTS lists)."""
    res = []
    for ln in lines:
        if len(ln) <= 72 or ln.lstrip().startswith(('"', "--")) or '"' in ln:
            res.append(ln)
            continue
        indent = re.match(r"^\s*", ln).group(0)
        parts = re.split(r"(?<=,)\s", ln)
        cur = parts[0]
        for p in parts[1:]:
            if len(cur) + 1 + len(p) > 72:
                res.append(cur)
                cur = indent + "        " + p.lstrip()
            else:
                cur += " " + p
        res.append(cur)
    return res


FIXUPS = {
    "sma": [
        # Gauge32 is used (the violation counters) but was never imported.
        ("experimental, Counter32,", "experimental, Counter32, Gauge32,"),
        # InterfaceIndex and SnmpAdminString are imported but never used; IF-MIB is
        # not needed for anything else.
        ("    SnmpAdminString\n        FROM SNMP-FRAMEWORK-MIB\n", ""),
        ("    InterfaceIndex\n        FROM IF-MIB\n", ""),
        # The SEQUENCE gives ibSmaSmGuid as OCTET STRING, its OBJECT-TYPE as IbGuid.
        ("    ibSmaSmGuid OCTET STRING,", "    ibSmaSmGuid IbGuid,"),
    ],
}

COPYRIGHT = """\
-- {module}: rebuilt by ibsnmpd's mibs/tools/rebuild-seed-mib.py from the IETF
-- Internet-Draft it was published in (see mibs/README.md for every change).
--
-- Copyright (C) The Internet Society ({year}). All Rights Reserved.
--
-- This document and translations of it may be copied and furnished to
-- others, and derivative works that comment on or otherwise explain it or
-- assist in its implementation may be prepared, copied, published and
-- distributed, in whole or in part, without restriction of any kind,
-- provided that the above copyright notice and this paragraph are included
-- on all such copies and derivative works.
"""


def main():
    which, path = sys.argv[1], sys.argv[2]
    cfg = SEEDS[which]
    text = open(path, encoding="utf-8", errors="replace").read()
    text = re.sub(cfg["page_break"], " ", text)
    # Two characters mangled by the draft's conversion (non-ASCII is illegal
    # in SMI strings): an apostrophe and a dash.
    text = text.replace("\u00c6", "'").replace("\u00fb", "-")
    start = text.index(cfg["module"] + " DEFINITIONS ::= BEGIN")
    end = re.compile(r"\sEND\s").search(text, start).end()
    module = text[start:end]
    imports = re.search(r"IMPORTS (.*?);", module, flags=re.S)
    imp_lines = ["IMPORTS"] + ["    " + " ".join(n.group(1).split()) + "\n        FROM " + n.group(2)
                               for n in re.finditer(r"\s*(.*?) FROM (\S+)", imports.group(1))]
    rest = module[imports.end():]
    lines = reflow_long(render(lex(rest)))
    body = "%s DEFINITIONS ::= BEGIN\n\n%s;\n\n" % (cfg["module"], "\n".join(reflow_long(imp_lines))) + \
        "\n".join(lines) + "\n"
    for old, new in ([] if "--raw" in sys.argv else FIXUPS.get(which, [])):
        if old not in body:
            sys.exit("fix-up no longer applies: %r" % old)
        body = body.replace(old, new)
    sys.stdout.write(COPYRIGHT.format(module=cfg["module"], year=cfg["year"]) + "\n" + body)


if __name__ == "__main__":
    main()
