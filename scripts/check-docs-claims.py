#!/usr/bin/env python3
"""Check the docs' claims against the source: the Keras layers docs/ names
as supported are in the engine's layer table (src/engine/keras_layers.c),
those it names as refused are not, and every function page in
docs/functions/*.md names a function of the built install script
(madlib_dl--*.sql) with the parameters it documents.  Also: every file
of the tree that README.md and docs/ name (`src/...`, `test/...`, ...)
exists (a paragraph about removed files, build outputs and placeholders
such as OLD--NEW excepted), and every banner of src/, test/ and bench/ C files names its own file
(its first line and its IDENTIFICATION).  --self-test plants
discrepancies and checks that they are found."""
import glob, os, re, subprocess, sys

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


TREE_PATH = re.compile(r"`((?:src|test|scripts|bench|include|docs|sql|expected|debian|\.ci)/[A-Za-z0-9_./+-]*)`")
# not files of the tree: build outputs, and placeholders (OLD--NEW, PREV, X.Y.Z)
NOT_A_TREE_PATH = re.compile(r"(^|/)(build|out|results|tmp_check)(/|$)|[A-Z]{3,}|X\.Y\.Z")
# a file named alone: a file of the tree by its name, or one of PostgreSQL's
# or Greenplum's own
BARE_FILE = re.compile(r"`([A-Za-z0-9_.-]+\.(?:sql|c|h|py|sh|pl))`")
NOT_OURS = {"postgres.h", "pg_config.h", "cdbcat.c", "cdbgroupingpaths.c", "cloudberry-env.sh"}
HISTORY = re.compile(r"\bremoved\b|git history|git show", re.I)


def tree_files():
    """The tree's files (git's, else every file but build outputs) and folders."""
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files"], capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        files = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(ROOT) for f in fs]
    dirs = {os.path.dirname(f) for f in files}
    for d in list(dirs):
        while d:
            dirs.add(d)
            d = os.path.dirname(d)
    return set(files), dirs


def banner_errors(path, text):
    """A src/ file's banner names it: its first line and its IDENTIFICATION."""
    head = "\n".join(text.split("\n")[:60])
    first = re.match(r"/\*-+\n \*\s*\n \*\s*(\S+)\n", head)
    ident = re.search(r"IDENTIFICATION\s*\n\s*\*\s*(\S+)", head)
    errs = []
    if not first or first.group(1) != os.path.basename(path):
        errs.append("%s: its banner's first line names %s" % (path, first.group(1) if first else "no file"))
    if not ident or ident.group(1) != path:
        errs.append("%s: its banner's IDENTIFICATION names %s" % (path, ident.group(1) if ident else "no file"))
    return errs


def check_paths(files, dirs, docs, sources):
    """docs: {page: text}; sources: {src/... path: text}."""
    errs = []
    names = {os.path.basename(f) for f in files}
    for page, text in sorted(docs.items()):
        for para in re.split(r"\n\s*\n", text):
            if HISTORY.search(para):
                continue
            for m in TREE_PATH.finditer(para):
                path = m.group(1).rstrip("/.")
                if NOT_A_TREE_PATH.search(path) or path in files or path in dirs or path + ".sql" in files:
                    continue
                errs.append("%s names %s, which is not in the tree" % (os.path.relpath(page, ROOT), path))
            for m in BARE_FILE.finditer(para):
                name = m.group(1)
                if name in NOT_OURS or NOT_A_TREE_PATH.search(name) or name in names:
                    continue
                errs.append("%s names %s, which no file of the tree is called" % (os.path.relpath(page, ROOT), name))
    for path, text in sorted(sources.items()):
        errs += banner_errors(path, text)
    return errs


def load_paths():
    rd = lambda p: open(p, encoding="utf-8").read()
    files, dirs = tree_files()
    docs = {p: rd(p) for p in glob.glob(os.path.join(ROOT, "docs/**/*.md"), recursive=True)}
    docs[os.path.join(ROOT, "README.md")] = rd(os.path.join(ROOT, "README.md"))
    sources = {f: rd(os.path.join(ROOT, f)) for f in files
               if re.match(r"(src|test|bench)/.*\.[ch]$", f) and ".pb-c." not in f}
    return files, dirs, docs, sources


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
    files, dirs, docs, sources = load_paths()
    assert check_paths(files, dirs, docs, sources) == [], "the real tree's paths must pass first"
    some = sorted(sources)[0]
    path_cases = [
        ("a page naming a file not in the tree",
         (files, dirs, dict(docs, fake="see `src/engine/no_such_file.c`"), sources)),
        ("a page naming a SQL piece by an old name",
         (files, dirs, dict(docs, fake="see `01_util.sql`"), sources)),
        ("a banner naming another file",
         (files, dirs, docs, dict(sources, **{some: sources[some].replace(some, some + "x", 1)}))),
    ]
    for what, args in path_cases:
        if not check_paths(*args):
            sys.exit("check-docs-claims self-test: %s was not found" % what)
    if check_paths(files, dirs, dict(docs, fake="It was removed: `src/engine/no_such_file.c`."), sources):
        sys.exit("check-docs-claims self-test: a paragraph about removed files was not excepted")
    print("check-docs-claims self-test: %d planted discrepancies found" % (len(cases) + len(path_cases)))


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    args = load()
    paths = load_paths()
    errs = check(*args) + check_paths(*paths)
    for e in errs:
        print(e)
    if errs:
        sys.exit(1)
    _, engine_md, texts, _, pages = args
    print("check-docs-claims: %d supported and %d refused layers, %d function pages agree with the source; "
          "the files %d pages name exist, %d banners name their files"
          % (len(doc_supported(engine_md)), len(doc_refused(texts)), len(pages), len(paths[2]), len(paths[3])))
