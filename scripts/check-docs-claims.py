#!/usr/bin/env python3
"""Check the docs' claims against the source: the Keras layers docs/ names
as supported are in the engine's layer table (src/engine/keras_json.c),
those it names as refused are not, and every function page in
docs/functions/*.md names a function of the built install script
(madlib_dl--*.sql) with the parameters it documents.  --self-test plants
discrepancies and checks that they are found."""
import glob, os, re, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAMEL = re.compile(r"`([A-Z][A-Za-z0-9]+)`")


def engine_layers(src):
    """The layer table's class names, and InputLayer, which the graph
    reader recognizes by a class_name comparison."""
    names = set(re.findall(r'\{\s*"([A-Z][A-Za-z0-9]*)"\s*,\s*DL_LAYER_[A-Z0-9_]+\s*\}', src))
    names.update(re.findall(r'strcmp\((?:jget_str\([^()]*"class_name"\)|lcls),\s*"([A-Z][A-Za-z0-9]+)"\)', src))
    return names


def doc_supported(engine_md):
    """First cells of the layer table rows in engine.md."""
    names = set()
    for line in engine_md.splitlines():
        m = re.match(r"\|\s*([^|]+)\|", line)
        if m and line.count("|") >= 4:
            names.update(CAMEL.findall(m.group(1)))
    return names


def doc_refused(texts):
    """Layers named as refused: 'any other layer type (`X`, ...)',
    'has unsupported type "X"', 'does not implement (e.g. `X`)'."""
    names = set()
    for t in texts:
        t1 = re.sub(r"\s+", " ", t)
        for m in re.finditer(r"other layer type \(([^)]*)\)", t1):
            names.update(CAMEL.findall(m.group(1)))
        names.update(re.findall(r'unsupported type \\?"([A-Z][A-Za-z0-9]+)', t1))
        for m in re.finditer(r"does not implement \(e\.g\. ([^)]*)\)", t1):
            names.update(CAMEL.findall(m.group(1)))
        for m in re.finditer(r"layers outside \[engine\.md\][^(]*\(([^)]*)\)", t1):
            names.update(CAMEL.findall(m.group(1)))
    return names


def sql_functions(sql):
    """name -> list of parameter-name sets, one per overload."""
    funcs = {}
    for m in re.finditer(r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(?:@extschema@\.|madlib_dl\.)?\"?(\w+)\"?\s*\(", sql, re.I):
        i, depth = m.end(), 1
        while depth and i < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[i], 0)
            i += 1
        args = sql[m.end():i - 1]
        params = set()
        for a in re.split(r",(?![^(]*\))", args):
            w = a.split()
            if w and w[0].upper() in ("IN", "OUT", "INOUT", "VARIADIC"):
                w = w[1:]
            if len(w) >= 2:
                params.add(w[0].strip('"').lower())
        funcs.setdefault(m.group(1).lower(), []).append(params)
    return funcs


def doc_functions(pages):
    """page -> (function name, documented parameter names)."""
    out = {}
    for path, text in pages.items():
        h = re.search(r"^# (\w+)\s*$", text, re.M)
        if not h:
            continue
        params, in_table = set(), False
        for line in text.splitlines():
            if re.match(r"\|\s*parameter\s*\|", line):
                in_table = True
                continue
            if in_table:
                if not line.startswith("|"):
                    break
                cell = line.split("|")[1]
                params.update(p.lower() for p in re.findall(r"`(\w+)`", cell))
        out[path] = (h.group(1).lower(), params)
    return out


def check(layer_src, engine_md, texts, sql, pages):
    errs = []
    have = engine_layers(layer_src)
    if not have:
        return ["no layer table found in the engine source"]
    for n in sorted(doc_supported(engine_md) - have):
        errs.append("docs/engine.md lists layer %s, which the engine's layer table lacks" % n)
    for n in sorted(doc_refused(texts) & have):
        errs.append("docs name layer %s as refused, but the engine's layer table has it" % n)
    funcs = sql_functions(sql)
    for path, (name, params) in sorted(doc_functions(pages).items()):
        if name not in funcs:
            errs.append("%s: function %s is not in the install script" % (path, name))
        elif params and not any(params <= p for p in funcs[name]):
            missing = min((params - p for p in funcs[name]), key=len)
            errs.append("%s: %s has no overload with parameter(s) %s" % (path, name, ", ".join(sorted(missing))))
    return errs


def load():
    rd = lambda p: open(p, encoding="utf-8").read()
    layer_src = "".join(rd(p) for p in glob.glob(os.path.join(ROOT, "src/engine/*.c")))
    docs = {p: rd(p) for p in glob.glob(os.path.join(ROOT, "docs/**/*.md"), recursive=True)}
    scripts = [p for p in glob.glob(os.path.join(ROOT, "madlib_dl--*.sql")) if "--" not in os.path.basename(p)[len("madlib_dl--"):]]
    if not scripts:
        sys.exit("check-docs-claims: no madlib_dl--VERSION.sql: run make first")
    sql = rd(max(scripts, key=os.path.getmtime))
    pages = {p: t for p, t in docs.items() if "/docs/functions/" in p and not p.endswith("README.md")}
    return layer_src, docs[os.path.join(ROOT, "docs/engine.md")], list(docs.values()), sql, pages


def self_test():
    layer_src, engine_md, texts, sql, pages = load()
    assert check(layer_src, engine_md, texts, sql, pages) == [], "the real tree must pass first"
    cases = [
        ("a supported layer missing from the engine",
         (layer_src, engine_md + "\n| `Conv3D` | x | y |\n", texts, sql, pages)),
        ("a refused layer the engine has",
         (layer_src, engine_md, texts + ["any other layer type (`LSTM`, ...)"], sql, pages)),
        ("a function page for a missing function",
         (layer_src, engine_md, texts, sql, dict(pages, fake="# no_such_function\n"))),
        ("an undocumented parameter",
         (layer_src, engine_md, texts, sql,
          dict(pages, fake="# load_keras_model\n\n| parameter | default | meaning |\n|---|---|---|\n| `no_such_param` | x | y |\n"))),
    ]
    for what, args in cases:
        if not check(*args):
            sys.exit("check-docs-claims self-test: %s was not found" % what)
    print("check-docs-claims self-test: %d planted discrepancies found" % len(cases))


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    args = load()
    errs = check(*args)
    for e in errs:
        print(e)
    if errs:
        sys.exit(1)
    _, engine_md, texts, _, pages = args
    print("check-docs-claims: %d supported and %d refused layers, %d function pages agree with the source"
          % (len(doc_supported(engine_md)), len(doc_refused(texts)), len(pages)))
