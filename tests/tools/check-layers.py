#!/usr/bin/env python3
"""The layering of the sources, checked on what the compiler made:

1. the layers (src/README.md): src/base uses nothing above it; src/mad
   and src/snmp use base only; an area (every other folder) uses the
   three and the other areas' shared headers (include/ibsnmpd), never
   another area's private header (src/AREA/*.h); main.c and areas.c use
   anything, and nothing uses them. Checked on the includes (a header of
   include/ibsnmpd belongs to the folder of the file that defines it) and
   on the calls (an object file uses another when it needs a symbol the
   other defines: nm). No file is loose in src/ but main.c and areas.c;
2. no include circle between files of different folders (the #include
   "..." lines of src/ and include/ibsnmpd/);
3. no call circle between files of different folders;
4. one event path: an area's data code never calls its MIB code (a
   *_mib.c or *_notify.c file is used only by the core, the area's
   *_area.c and the context registrations of node_contexts.c).

Usage: check-layers.py SOURCE_DIR OBJECT_FILE...
Prints each violation and exits 1, or prints a summary and exits 0."""
import os
import re
import subprocess
import sys


def tarjan(graph):
    """The strongly connected components of graph {node: set(nodes)}."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def cross_folder_cycles(graph):
    """Components of more than one file whose files are in more than one folder."""
    return [c for c in tarjan(graph)
            if len(c) > 1 and len({os.path.dirname(f) for f in c}) > 1]


def include_graph(top):
    graph = {}
    files = []
    for base in ("src", os.path.join("include", "ibsnmpd")):
        for root, _, names in os.walk(os.path.join(top, base)):
            files += [os.path.join(root, n) for n in names if n.endswith((".c", ".h"))]
    rel = {os.path.relpath(f, top): f for f in files}
    for name, path in rel.items():
        deps = set()
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc = m.group(1)
                for cand in (os.path.join(os.path.dirname(name), inc), os.path.join("include", inc),
                             os.path.join("src", inc)):
                    cand = os.path.normpath(cand)
                    if cand in rel:
                        deps.add(cand)
                        break
        graph[name] = deps
    return graph


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    defined, needed = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            needed.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRGSCV":
            defined.add(parts[2])
    return defined, needed


def source_of(obj, top):
    """src/pm/pm_area.c.o (CMake's object path) -> src/pm/pm_area.c"""
    m = re.search(r"/CMakeFiles/[^/]+\.dir/(.+)\.o$", obj)
    return m.group(1) if m and os.path.exists(os.path.join(top, m.group(1))) else obj


def call_graph(objects, top):
    defs, needs = {}, {}
    for obj in objects:
        src = source_of(obj, top)
        d, n = symbols(obj)
        needs[src] = n
        for sym in d:
            defs[sym] = src
    return {src: {defs[s] for s in n if s in defs and defs[s] != src}
            for src, n in needs.items()}


MIB_SIDE = re.compile(r"_(mib|notify)\.c$")
MAY_USE_MIB = re.compile(r"^src/(base|mad|snmp)/|^src/[^/]+\.c$|_area\.c$|_mib\.c$|_notify\.c$|"
                         r"node_contexts\.c$")

CORE = ("base", "mad", "snmp")
TOP_FILES = ("src/main.c", "src/areas.c")
# what each core folder may use besides itself
CORE_USES = {"base": set(), "mad": {"base"}, "snmp": {"base"}}
# shared headers that no source file of the same name defines
HEADER_HOME = {"netsnmp.h": "base", "octets.h": "base", "mib_oids.h": "base",
               "notice.h": "trap", "sa_view.h": "topology"}


def folder_of(path):
    """'base', 'mad', 'snmp', an area's folder, or '' (main.c, areas.c) of a
    file under src/; a header of include/ibsnmpd: its home's"""
    parts = path.split("/")
    if parts[0] == "src":
        return parts[1] if len(parts) > 2 else ""
    return None  # include/ibsnmpd: see header_homes


def header_homes(top):
    """{include/ibsnmpd/X.h: folder}: of the source file X.c, else of the
    area its name starts with (sma_attr.h: sma), else HEADER_HOME"""
    sources = {}
    for root, _, names in os.walk(os.path.join(top, "src")):
        for n in names:
            if n.endswith(".c"):
                sources[n[:-2]] = folder_of(os.path.relpath(os.path.join(root, n), top))
    areas = {f for f in os.listdir(os.path.join(top, "src"))
             if os.path.isdir(os.path.join(top, "src", f))}
    homes = {}
    inc = os.path.join(top, "include", "ibsnmpd")
    for n in os.listdir(inc):
        stem = n[:-2]
        home = HEADER_HOME.get(n) or sources.get(stem) or \
            next((a for a in areas if stem == a or stem.startswith(a + "_")), None)
        homes["include/ibsnmpd/" + n] = home
    return homes


def allowed(user, used):
    """may a file of folder `user` use one of folder `used`?"""
    if user == used or user == "":
        return True
    if used == "":
        return False  # main.c, areas.c: nothing uses them
    if user in CORE:
        return used in CORE_USES[user]
    return True  # an area: the core and the other areas (their shared headers)


def layer_problems(top, includes, calls):
    homes = header_homes(top)
    out = []
    for f, home in sorted(homes.items()):
        if home is None:
            out.append("a shared header of no folder (name it after its file or area): " + f)
    for root, _, names in os.walk(os.path.join(top, "src")):
        for n in names:
            rel = os.path.relpath(os.path.join(root, n), top)
            if n.endswith((".c", ".h")) and folder_of(rel) == "" and rel not in TOP_FILES:
                out.append("a file loose in src/ (only main.c and areas.c are): " + rel)

    def home_of(f):
        return homes.get(f) if f.startswith("include/") else folder_of(f)

    for src, deps in sorted(includes.items()):
        user = home_of(src)
        for d in sorted(deps):
            used = home_of(d)
            if None in (user, used):
                continue
            private = d.startswith("src/") and d.endswith(".h")
            if private and used != user and user != "":
                out.append("includes another folder's private header: %s -> %s" % (src, d))
            elif not allowed(user, used):
                out.append("a layer uses one above it: %s (%s) includes %s (%s)" % (
                    src, user or "top", d, used or "top"))
    for src, deps in sorted(calls.items()):
        user = home_of(src)
        for d in sorted(deps):
            used = home_of(d)
            if None not in (user, used) and not allowed(user, used):
                out.append("a layer uses one above it: %s (%s) calls %s (%s)" % (
                    src, user or "top", d, used or "top"))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top, objects = sys.argv[1], sys.argv[2:]
    problems = []
    includes = include_graph(top)
    calls = call_graph(objects, top)
    problems += layer_problems(top, includes, calls)
    for c in cross_folder_cycles(includes):
        problems.append("include circle between folders: " + " -> ".join(c))
    for c in cross_folder_cycles(calls):
        problems.append("call circle between folders: " + " -> ".join(c))
    for src, deps in sorted(calls.items()):
        for d in sorted(deps):
            same_area = os.path.dirname(d) == os.path.dirname(src)
            if MIB_SIDE.search(d) and same_area and not MAY_USE_MIB.search(src):
                problems.append("data code calls its MIB code: %s -> %s" % (src, d))
    for p in problems:
        print(p)
    if problems:
        sys.exit(1)
    folders = {os.path.dirname(f) for f in calls}
    print("layers: %d files in %d folders, %d include and %d call edges; base, mad and snmp "
          "below the areas, no circle between folders, no data code calling MIB code" %
          (len(calls), len(folders), sum(len(v) for v in includes.values()),
           sum(len(v) for v in calls.values())))


if __name__ == "__main__":
    main()
