"""The fabric's routes as infiniband-diags read them, for the routing
checks' tests: every switch's LinearForwardingTable from dump_fts, the
cabling from what fabricsim generated (its own account), and what follows
from them for every pair (a switch and a CA's LID, two CAs): where a route
ends nowhere or goes round, how long it is against the shortest path, and
whether it goes down then up. Written apart from ibsnmpd's checks
(src/route/) so that a test compares two accounts, not one with itself."""
import re
from collections import deque

from .manager import generated

FTS_HEADER = re.compile(r"^Unicast lids \[[^]]*\] of switch .*guid (0x[0-9a-f]+) \((.*)\):", re.M)
FTS_ENTRY = re.compile(r"^(0x[0-9a-f]+) (\d+)\s*$", re.M)
# ibsnmpdRouteOffenderKind's numbers for what a walk finds
UNASSIGNED, NO_LINK, NO_SUCH_PORT, SELF, WRONG_NODE, LOOP = 1, 2, 3, 4, 5, 6


def parse_dump_fts(text):
    """{switch name: {LID: out port}} of `dump_fts -a -n` (255: none)"""
    tables = {}
    heads = list(FTS_HEADER.finditer(text))
    for k, m in enumerate(heads):
        end = heads[k + 1].start() if k + 1 < len(heads) else len(text)
        tables[m.group(2)] = {int(lid, 16): int(port)
                              for lid, port in FTS_ENTRY.findall(text[m.end():end])}
    return tables


class Routes:
    """A bed's routes now: Routes(bed) reads dump_fts through the simulator."""

    def __init__(self, bed):
        self.nodes, links = generated(bed)
        self.peer = {}
        for link in links:
            (a, pa), (b, pb) = tuple(link)
            self.peer[(a, pa)], self.peer[(b, pb)] = (b, pb), (a, pa)
        self.lft = parse_dump_fts(bed.run_on_node("dump_fts", "-a", "-n", timeout=120))
        self.by_lid = {n[3]: name for name, n in self.nodes.items()}
        self.switches = sorted(n for n, v in self.nodes.items() if v[0] == "switch")
        self.cas = sorted(n for n, v in self.nodes.items() if v[0] == "ca")

    def lid(self, name):
        return self.nodes[name][3]

    def guid(self, name):
        return self.nodes[name][1]

    def is_switch(self, name):
        return self.nodes[name][0] == "switch"

    def leaf_of(self, ca):
        return self.peer[(ca, 1)][0]

    def walk(self, switch, lid, ports=None):
        """(kind, where, path) of the route to lid from switch: kind None
        when it is delivered (path: the switches it passes, from switch on),
        else the offender kind and the switch at fault (a loop: the first
        switch that comes round again). ports, a list: each switch's out
        port appended, as the route leaves it for the next switch."""
        path, cur = [], switch
        while True:
            if cur in path:
                return LOOP, cur, path
            path.append(cur)
            if self.lid(cur) == lid:
                return None, cur, path
            port = self.lft.get(cur, {}).get(lid, 255)
            if port == 255:
                return UNASSIGNED, cur, path
            if port == 0:
                return SELF, cur, path
            if port > self.nodes[cur][2]:
                return NO_SUCH_PORT, cur, path
            far = self.peer.get((cur, port))
            if far is None:
                return NO_LINK, cur, path
            if not self.is_switch(far[0]):
                return (None if self.lid(far[0]) == lid else WRONG_NODE), cur, path
            if ports is not None:
                ports.append(port)
            cur = far[0]

    def reach_failures(self):
        """{(kind, switch at fault, LID): switches whose route to that CA
        LID fails there}: every switch to every CA's LID. A loop is
        (LOOP, None, LID): where a route enters it depends on where it
        comes from (loop_members says which switches it is)"""
        found = {}
        for dest in self.cas:
            lid = self.lid(dest)
            for s in self.switches:
                kind, at, _ = self.walk(s, lid)
                if kind:
                    key = (kind, None if kind == LOOP else at, lid)
                    found[key] = found.get(key, 0) + 1
        return found

    def loop_members(self, switch, lid):
        """the switches of the loop the route from switch to lid ends in"""
        kind, at, path = self.walk(switch, lid)
        return set(path[path.index(at):]) if kind == LOOP else set()

    def distances(self, source):
        """{switch: links from source} over the cabling (switches only)"""
        dist, todo = {source: 0}, deque([source])
        while todo:
            s = todo.popleft()
            for p in range(1, self.nodes[s][2] + 1):
                far = self.peer.get((s, p))
                if far and self.is_switch(far[0]) and far[0] not in dist:
                    dist[far[0]] = dist[s] + 1
                    todo.append(far[0])
        return dist

    def rank(self, switch):
        """a switch's tier: 0 the leaves (CAs below), 1 above them, ..."""
        return {"leaf": 0, "spine": 1, "core": 2}[switch.split("-")[0]]

    def ca_pairs(self, dest):
        """[(source CA, switch hops routed, shortest, down then up)] of the
        routes from every other CA to dest's LID that are delivered"""
        lid, target = self.lid(dest), self.leaf_of(dest)
        shortest = self.distances(target)
        res = []
        for src in self.cas:
            if src == dest:
                continue
            kind, _, path = self.walk(self.leaf_of(src), lid)
            if kind:
                continue
            ranks = [self.rank(s) for s in path]
            went_down = False
            down_up = False
            for a, b in zip(ranks, ranks[1:]):
                if b < a:
                    went_down = True
                elif b > a and went_down:
                    down_up = True
            res.append((src, len(path) - 1, shortest[self.leaf_of(src)], down_up))
        return res

    def hop_offenders(self):
        """{LID: (CA pairs routed longer than the shortest, CA pairs routed
        down then up)} where either is not 0"""
        found = {}
        for dest in self.cas:
            longer = down_up = 0
            for _, hops, shortest, du in self.ca_pairs(dest):
                longer += hops > shortest
                down_up += du
            if longer or down_up:
                found[self.lid(dest)] = (longer, down_up)
        return found

    def credit_loops(self):
        """[set of links (switch, out port)] of every cycle of channel
        dependencies (a strongly connected part of more than one link, or
        one that depends on itself): for every CA pair's route, each
        switch-to-switch link it takes depends on the next one. The fabric's
        one VL (fabricsim maps every SL to VL 0)."""
        after = {}
        for dest in self.cas:
            lid = self.lid(dest)
            for src in self.cas:
                if src == dest:
                    continue
                ports = []
                kind, _, path = self.walk(self.leaf_of(src), lid, ports)
                if kind:
                    continue
                links = list(zip(path, ports))
                for a, b in zip(links, links[1:]):
                    after.setdefault(a, set()).add(b)
        return [part for part in strongly_connected(after)
                if len(part) > 1 or next(iter(part)) in after.get(next(iter(part)), ())]


def strongly_connected(graph):
    """the strongly connected parts of {node: {nodes after it}} (Tarjan's,
    without recursion)"""
    index, low, on_stack, stack, parts = {}, {}, set(), [], []
    counter = 0
    for root in list(graph):
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = set()
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    part.add(x)
                    if x == node:
                        break
                parts.append(part)
    return parts
