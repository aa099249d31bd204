#!/usr/bin/env python3
"""check-layers.py: the layers of madlib_dl form a DAG (issue 27 item 3).

After a build, reads every object file under src/ with `nm` and draws the
graph file -> file (A uses a symbol that B defines), and the graph of
`#include "..."` lines between the headers of include/ and src/ (resolved
along the Makefile's -I path).  Every strongly connected component of more
than one file is a cycle: it is reported with one concrete ring and the
symbols (or include lines) that make each of its edges.  Also checks the
layer order (api -> runtime -> transport -> engine, LAYER_RULES):
src/engine never uses src/pg; src/pg/transport and src/pg/runtime never
use src/pg/api; src/pg/transport never uses src/pg/runtime (it runs the
segments' work through the executor the driver hands it).

    scripts/check-layers.py              check the built tree (exit 1 on a cycle
                                         or a layer violation)
    scripts/check-layers.py --self-test  a tiny synthetic graph must be found
                                         cyclic, a DAG must not

Python 3 standard library only.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_PATH = ["include", "src/engine", "src/pg", "src/pg/api",
                "src/pg/runtime", "src/pg/transport"]
# (prefix of the user, prefix it must never use, why)
LAYER_RULES = [
    ("src/engine/", "src/pg/", "the engine never uses the PostgreSQL glue"),
    ("src/pg/transport/", "src/pg/api/", "transport never uses api"),
    ("src/pg/runtime/", "src/pg/api/", "runtime never uses api"),
    ("src/pg/transport/", "src/pg/runtime/", "transport never uses runtime"),
]
DEFINED = set("TDBRVWGS")


def object_files():
    out = []
    for d, _dirs, files in os.walk(os.path.join(ROOT, "src")):
        for f in files:
            if f.endswith(".o"):
                out.append(os.path.join(d, f))
    return sorted(out)


def source_of(obj):
    """src/pg/runtime/limits.o -> src/pg/runtime/limits.c"""
    rel = os.path.relpath(obj, ROOT)
    return rel[:-2] + ".c"


def read_nm(obj):
    defined, undefined = set(), set()
    res = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True)
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in DEFINED:
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
    return defined, undefined


def symbol_graph():
    """{file: {file: sorted symbols}} from the objects' nm."""
    objs = object_files()
    defs, undefs = {}, {}
    for o in objs:
        src = source_of(o)
        defs[src], undefs[src] = read_nm(o)
    owner = {}
    for f, syms in defs.items():
        for s in syms:
            owner.setdefault(s, f)
    graph = {f: {} for f in defs}
    for f, syms in undefs.items():
        for s in syms:
            g = owner.get(s)
            if g is not None and g != f:
                graph[f].setdefault(g, []).append(s)
    for f in graph:
        for g in graph[f]:
            graph[f][g].sort()
    return graph


INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def resolve(name, includer):
    cand = [os.path.dirname(includer)] + INCLUDE_PATH
    for d in cand:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(ROOT, p)):
            return p
    return None


def include_graph():
    """{header: {header: [include line]}} between the project's headers."""
    headers = []
    for top in ("include", "src"):
        for d, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for f in files:
                if f.endswith(".h"):
                    headers.append(os.path.relpath(os.path.join(d, f), ROOT))
    graph = {h: {} for h in headers}
    for h in headers:
        with open(os.path.join(ROOT, h), encoding="utf-8",
                  errors="replace") as fh:
            for line in fh:
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                t = resolve(m.group(1), h)
                if t is not None and t in graph and t != h:
                    graph[h].setdefault(t, []).append(
                        '#include "%s"' % m.group(1))
    return graph


def sccs(graph):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def ring(graph, comp):
    """One concrete cycle inside comp, as a list of files (first == last)."""
    members = set(comp)
    start = comp[0]
    # BFS from start's successors back to start, within the component
    prev = {}
    frontier = [start]
    seen = set()
    while frontier:
        nf = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in members:
                    continue
                if w == start:
                    path = [start]
                    x = v
                    while x != start:
                        path.append(x)
                        x = prev[x]
                    path.append(start)
                    path.reverse()
                    return path
                if w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nf.append(w)
        frontier = nf
    return [start, start]


def report(kind, graph):
    comps = sccs(graph)
    for comp in comps:
        print("%s cycle among %d files: %s" % (kind, len(comp),
                                               ", ".join(comp)))
        r = ring(graph, comp)
        print("  one ring:")
        for a, b in zip(r, r[1:]):
            syms = graph[a][b]
            shown = ", ".join(syms[:6]) + (" ..." if len(syms) > 6 else "")
            print("    %s -> %s  (%s)" % (a, b, shown))
    return len(comps)


def layer_violations(graph):
    bad = 0
    for a in sorted(graph):
        for b in sorted(graph[a]):
            for user, used, why in LAYER_RULES:
                if a.startswith(user) and b.startswith(used):
                    print("layer violation: %s -> %s (%s): %s" % (
                        a, b, ", ".join(graph[a][b][:6]), why))
                    bad += 1
    return bad


def self_test():
    cyclic = {"a.c": {"b.c": ["f"]}, "b.c": {"c.c": ["g"]},
              "c.c": {"a.c": ["h"]}, "d.c": {"a.c": ["f"]}}
    dag = {"a.c": {"b.c": ["f"]}, "b.c": {"c.c": ["g"]}, "c.c": {},
           "d.c": {"a.c": ["f"], "c.c": ["g"]}}
    comps = sccs(cyclic)
    ok = comps == [["a.c", "b.c", "c.c"]]
    r = ring(cyclic, comps[0]) if comps else []
    ok = ok and r[0] == r[-1] and len(r) == 4
    ok = ok and sccs(dag) == []
    two = {"x.c": {"y.c": ["p"]}, "y.c": {"x.c": ["q"]}}
    ok = ok and sccs(two) == [["x.c", "y.c"]]
    lay = {"src/engine/m.c": {"src/pg/n.c": ["s"]}, "src/pg/n.c": {}}
    saved = sys.stdout
    sys.stdout = open(os.devnull, "w")
    try:
        ok = ok and layer_violations(lay) == 1
    finally:
        sys.stdout.close()
        sys.stdout = saved
    print("self-test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main(argv):
    if "--self-test" in argv:
        return self_test()
    if not object_files():
        print("check-layers: no object file under src/ (build first)")
        return 1
    if self_test() != 0:
        return 1
    sym = symbol_graph()
    inc = include_graph()
    n = report("symbol", sym) + report("include", inc)
    v = layer_violations(sym)
    print("check-layers: %d objects, %d headers: %d cycle(s), "
          "%d layer violation(s)" % (len(sym), len(inc), n, v))
    return 1 if n or v else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
