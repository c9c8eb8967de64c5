#!/usr/bin/env python3
"""The layering of the sources, checked on what the compiler made:

1. no include circle between files of different folders (the #include
   "..." lines of src/ and include/ibsnmpd/);
2. no call circle between files of different folders: an object file
   uses another when it needs a symbol the other defines (nm);
3. one event path: an area's data code never calls its MIB code (a
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
MAY_USE_MIB = re.compile(r"^src/[^/]+\.c$|_area\.c$|_mib\.c$|_notify\.c$|node_contexts\.c$")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top, objects = sys.argv[1], sys.argv[2:]
    problems = []
    includes = include_graph(top)
    for c in cross_folder_cycles(includes):
        problems.append("include circle between folders: " + " -> ".join(c))
    calls = call_graph(objects, top)
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
    print("layers: %d files in %d folders, %d include and %d call edges; no circle between "
          "folders, no data code calling MIB code" %
          (len(calls), len(folders), sum(len(v) for v in includes.values()),
           sum(len(v) for v in calls.values())))


if __name__ == "__main__":
    main()
