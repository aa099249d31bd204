#!/usr/bin/env python3
"""check-docs.py: the docs test: run the ```sql blocks of every page of
docs/ (and docs/functions/, and README.md) as a reader would, and fail if
any statement fails.

    scripts/check-docs.py [--list] [PAGE.md ...]

For each page, in a fresh database (createdb, dropped afterwards), the
script runs the setup the page names, then every ```sql block of the page
in order, in one psql session with ON_ERROR_STOP, from the repository root
(so `\\i test/data/iris.sql` works).  The connection comes from the PG*
variables (pg_virtualenv sets them); the server needs
shared_preload_libraries=madlib_dl like the other test steps.

Markers (HTML comments, invisible when the page is rendered):

    <!-- docs-test: setup=NAME -->      on a page with ```sql blocks: what
        runs first.  NAME is a setup of docs/example-data.md (each of its
        sections starts with <!-- docs-setup: NAME -->; setup NAME runs
        that page's blocks from its start to the end of section NAME), or
        "none" (an empty database, without the extension).
    <!-- docs-test: skip: REASON -->     the page is an illustration only
        (Greenplum-only SQL, a PL/Proxy cluster of several servers, long
        benchmarks): none of its blocks runs.
    <!-- docs-test: skip-block: REASON -->   on the line before a block's
        opening fence: that block does not run (placeholders, another
        server, data no setup makes).

A page with ```sql blocks and no marker is an error, so every new page says
how it is tested.  Skipped pages and blocks are printed with their reasons.
Exit status: 0 when every block that runs succeeds, 1 otherwise.

IDENTIFICATION
    scripts/check-docs.py
"""
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETUP_PAGE = "docs/example-data.md"
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(setup=(?P<setup>[\w-]+)|skip:\s*(?P<skip>.*?))\s*-->\s*$")
SKIP_BLOCK = re.compile(r"^\s*<!--\s*docs-test:\s*skip-block:\s*(?P<why>.*?)\s*-->\s*$")
SETUP_MARK = re.compile(r"^\s*<!--\s*docs-setup:\s*(?P<name>[\w-]+)\s*-->\s*$")


class Page:
    """A page's ```sql blocks: [(first line number, text, skip reason)],
    its setup and its skip reason; setups: [(setup name, block index)]."""

    def __init__(self, path):
        self.path = path
        self.blocks = []
        self.setup = None
        self.skip = None
        self.setups = []
        self.errors = []
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
        fence = None
        prev = ""
        for i, line in enumerate(lines, 1):
            if fence is None:
                m = MARKER.match(line)
                if m:
                    if m.group("setup"):
                        self.setup = m.group("setup")
                    else:
                        self.skip = m.group("skip") or "no reason given"
                m = SETUP_MARK.match(line)
                if m:
                    self.setups.append((m.group("name"), len(self.blocks)))
                if line.startswith("```"):
                    m = SKIP_BLOCK.match(prev)
                    fence = (i, line[3:].strip(), m.group("why") if m else None, [])
                elif line.strip():
                    prev = line
            elif line.startswith("```"):
                start, lang, why, body = fence
                if lang == "sql":
                    self.blocks.append((start, "\n".join(body) + "\n", why))
                fence = None
                prev = ""
            else:
                fence[3].append(line)
        if fence is not None:
            self.errors.append("%s:%d: a code block is not closed" % (path, fence[0]))


def setup_blocks(setup_page, name):
    """The blocks of the setup page that setup name runs."""
    if name == "none":
        return []
    names = [n for n, _ in setup_page.setups]
    if name not in names:
        return None
    k = names.index(name)
    end = setup_page.setups[k + 1][1] if k + 1 < len(names) else len(setup_page.blocks)
    return [(setup_page.path, b) for b in setup_page.blocks[:end]]


def psql(args, **kw):
    return subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"] + args,
                          cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, **kw)


def run_page(page, blocks, dbname):
    """Run blocks [(path, (line, text, why))] in a fresh database; returns
    None or the failure's description."""
    subprocess.run(["dropdb", "--if-exists", dbname], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    r = subprocess.run(["createdb", dbname], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if r.returncode != 0:
        return "createdb %s failed: %s" % (dbname, r.stdout.strip())
    # One script; origin maps its lines back to the pages, so that an
    # error names the page and line of its statement.
    origin = {}
    script = []
    n = 1
    for path, (line, text, _) in blocks:
        for k, _ in enumerate(text.split("\n")[:-1]):
            origin[n + k] = (path, line + 1 + k)
        script.append(text)
        n += text.count("\n")
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write("".join(script))
        name = f.name
    os.chmod(name, 0o644)
    try:
        r = psql(["-d", dbname, "-f", name],
                 env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning"))
    finally:
        os.unlink(name)
        subprocess.run(["dropdb", "--if-exists", dbname], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if r.returncode == 0:
        return None
    where = ""
    m = re.search(r"psql:%s:(\d+): ERROR" % re.escape(name), r.stdout)
    if m and int(m.group(1)) in origin:
        where = "%s:%d: " % origin[int(m.group(1))]
    tail = "\n".join(r.stdout.replace(name, "<script>").strip().split("\n")[-15:])
    return "%sstatement failed (psql exit %d):\n%s" % (where, r.returncode, tail)


def main(argv):
    list_only = "--list" in argv
    wanted = [a for a in argv if not a.startswith("--")]
    os.chdir(ROOT)
    paths = wanted or (sorted(glob.glob("docs/*.md")) + sorted(glob.glob("docs/functions/*.md"))
                       + ["README.md"])
    setup_page = Page(SETUP_PAGE)
    ran = skipped_pages = skipped_blocks = blocks_run = no_sql = 0
    failures = []
    started = time.time()
    for i, path in enumerate(paths):
        page = Page(path)
        failures += page.errors
        if not page.blocks:
            no_sql += 1
            continue
        if page.skip:
            skipped_pages += 1
            skipped_blocks += len(page.blocks)
            print("skip %s (%d blocks): %s" % (path, len(page.blocks), page.skip))
            continue
        if page.setup is None:
            failures.append("%s: has ```sql blocks but no <!-- docs-test: setup=NAME --> or "
                            "<!-- docs-test: skip: REASON --> marker" % path)
            continue
        pre = [] if path == SETUP_PAGE else setup_blocks(setup_page, page.setup)
        if pre is None:
            failures.append("%s: setup %r is not a <!-- docs-setup: NAME --> of %s"
                            % (path, page.setup, SETUP_PAGE))
            continue
        own = [(path, b) for b in page.blocks if b[2] is None]
        for line, _, why in page.blocks:
            if why is not None:
                skipped_blocks += 1
                print("skip %s:%d: %s" % (path, line, why))
        if list_only:
            print("page %s: setup %s, %d blocks" % (path, page.setup, len(own)))
            continue
        t0 = time.time()
        err = run_page(page, pre + own, "madlib_dl_docs_%d" % i)
        ran += 1
        blocks_run += len(own)
        if err:
            failures.append("%s: %s" % (path, err))
            print("FAIL %s (setup %s, %d blocks, %.1f s)" % (path, page.setup, len(own), time.time() - t0))
        else:
            print("ok   %s (setup %s, %d blocks, %.1f s)" % (path, page.setup, len(own), time.time() - t0))
        sys.stdout.flush()
    print()
    for f in failures:
        print("check-docs: " + f)
    print("check-docs: %d pages run (%d blocks), %d pages skipped, %d blocks skipped, "
          "%d pages without sql blocks, %d failures, %.0f s"
          % (ran, blocks_run, skipped_pages, skipped_blocks, no_sql, len(failures),
             time.time() - started))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
