#!/usr/bin/env python3
"""check-meta.py: checks META.json against the PGXN Meta Spec 1.0.0.

No validator is packaged for Debian, so this one follows the spec
(https://pgxn.org/spec/) and its JSON schemas (github.com/pgxn/meta,
schema/v1) with the standard library only:

  * the required keys (name, abstract, maintainer, license, provides,
    version, meta-spec), no key the spec does not define (other than
    x_/X_ custom keys), and the type and format of each;
  * versions are semantic versions (SemVer 2.0: MAJOR.MINOR.PATCH, with
    an optional pre-release and build part), version ranges as the spec
    writes them ("1.0.0", ">= 1.0.0, < 2.0.0", or 0);
  * each provides entry has a file and a version, its file and docfile
    exist in the tree, and there is one entry per *.control file;
  * the release is consistent: META.json's version, each provides
    version, the Makefile's EXTVERSION and madlib_dl.control's
    default_version are one and the same.

  scripts/check-meta.py [META.json]   check (exit status 1 on a problem)
  scripts/check-meta.py --self-test   check that each kind of problem is
                                      caught, on broken copies of META.json

scripts/test.sh runs both (step "meta").
"""

import copy
import json
import os
import re
import sys
import unicodedata

SEMVER = (r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
          r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
          r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
          r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?")
SEMVER_RE = re.compile(r"^" + SEMVER + r"$", re.ASCII)
RANGE_PART_RE = re.compile(r"^(?:(?:[=!]=|[<>]=?)\s*)?(?:" + SEMVER + r"|0)$", re.ASCII)

LICENSES = {
    "agpl_3", "apache_1_1", "apache_2_0", "artistic_1", "artistic_2", "bsd",
    "freebsd", "gfdl_1_2", "gfdl_1_3", "gpl_1", "gpl_2", "gpl_3", "lgpl_2_1",
    "lgpl_3_0", "mit", "mozilla_1_0", "mozilla_1_1", "openssl", "perl_5",
    "postgresql", "qpl_1_0", "ssleay", "sun", "zlib", "open_source",
    "restricted", "unrestricted", "unknown",
}
REQUIRED = ["name", "abstract", "maintainer", "license", "provides", "version", "meta-spec"]
TOP_KEYS = set(REQUIRED) | {"description", "generated_by", "tags", "no_index",
                            "prereqs", "release_status", "resources"}
SPEC_URLS = {"https://pgxn.org/meta/spec.txt", "http://pgxn.org/meta/spec.txt"}
PHASES = {"configure", "build", "test", "runtime", "develop"}
RELATIONS = {"requires", "recommends", "suggests", "conflicts"}
URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")


class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []

    def err(self, where, msg):
        self.errors.append(f"{where}: {msg}")

    # -- value types of the spec ------------------------------------------------

    def is_custom(self, key):
        return key[:2] in ("x_", "X_") and len(key) > 2

    def keys(self, where, obj, allowed):
        for k in obj:
            if k not in allowed and not self.is_custom(k):
                self.err(where, f"unknown key \"{k}\" (the spec allows {sorted(allowed)} and x_ keys)")

    def obj(self, where, v):
        if not isinstance(v, dict):
            self.err(where, f"must be an object, not {json.dumps(v)}")
            return False
        return True

    def string(self, where, v, minlen=1):
        if not isinstance(v, str) or len(v) < minlen:
            self.err(where, f"must be a string of at least {minlen} character(s), not {json.dumps(v)}")
            return False
        return True

    def term(self, where, v, space_ok=False, maxlen=None):
        # term: 2+ characters, none of / \ control characters (nor space, except in tags)
        if not self.string(where, v, 2):
            return
        bad = [c for c in v if c in "/\\" or unicodedata.category(c) == "Cc"
               or (not space_ok and c.isspace())]
        if bad:
            self.err(where, f"\"{v}\" contains {json.dumps(''.join(sorted(set(bad))))}, "
                            "which a PGXN term cannot hold")
        if maxlen is not None and len(v) > maxlen:
            self.err(where, f"longer than {maxlen} characters")

    def version(self, where, v):
        if not isinstance(v, str) or not SEMVER_RE.match(v):
            self.err(where, f"{json.dumps(v)} is not a semantic version (MAJOR.MINOR.PATCH, SemVer 2.0)")

    def version_range(self, where, v):
        if v == 0 and not isinstance(v, bool):
            return
        if not isinstance(v, str) or not all(RANGE_PART_RE.match(p.strip()) for p in v.split(",")):
            self.err(where, f"{json.dumps(v)} is not a version range (\"1.2.0\", \">= 1.2.0, < 2.0.0\" or 0)")

    def uri(self, where, v):
        if not isinstance(v, str) or not URI_RE.match(v):
            self.err(where, f"{json.dumps(v)} is not a URI")

    def path(self, where, v):
        if not self.string(where, v, 2):
            return
        if os.path.isabs(v) or ".." in v.split("/") or "\\" in v:
            self.err(where, f"\"{v}\" must be a relative path inside the distribution")
        elif not os.path.isfile(os.path.join(self.root, v)):
            self.err(where, f"\"{v}\" does not exist in the tree")

    # -- the sections -----------------------------------------------------------

    def check(self, meta):
        if not self.obj("META.json", meta):
            return self.errors
        for k in REQUIRED:
            if k not in meta:
                self.err("META.json", f"the required key \"{k}\" is missing")
        self.keys("META.json", meta, TOP_KEYS)

        if "name" in meta:
            self.term("name", meta["name"])
        if "version" in meta:
            self.version("version", meta["version"])
        for k in ("abstract", "description", "generated_by"):
            if k in meta:
                self.string(k, meta[k])
        if "maintainer" in meta:
            m = meta["maintainer"]
            if isinstance(m, list):
                if not m or len(set(map(json.dumps, m))) != len(m):
                    self.err("maintainer", "a list of maintainers must be non-empty, without duplicates")
                for i, x in enumerate(m):
                    self.string(f"maintainer[{i}]", x)
            else:
                self.string("maintainer", m)
        if "license" in meta:
            self.license(meta["license"])
        if "meta-spec" in meta:
            self.meta_spec(meta["meta-spec"])
        if "provides" in meta:
            self.provides(meta["provides"], meta.get("version"))
        if "tags" in meta:
            self.tags(meta["tags"])
        if "no_index" in meta:
            self.no_index(meta["no_index"])
        if "prereqs" in meta:
            self.prereqs(meta["prereqs"])
        if "release_status" in meta and meta["release_status"] not in ("stable", "testing", "unstable"):
            self.err("release_status", f"{json.dumps(meta['release_status'])} is not stable, testing or unstable")
        if "resources" in meta:
            self.resources(meta["resources"])
        return self.errors

    def license(self, v):
        if isinstance(v, str):
            if v not in LICENSES:
                self.err("license", f"\"{v}\" is not one of the spec's license strings")
        elif isinstance(v, list):
            if not v or len(set(map(json.dumps, v))) != len(v):
                self.err("license", "a list of licenses must be non-empty, without duplicates")
            for i, x in enumerate(v):
                if x not in LICENSES:
                    self.err(f"license[{i}]", f"{json.dumps(x)} is not one of the spec's license strings")
        elif isinstance(v, dict):
            if not v:
                self.err("license", "an object of licenses must name at least one")
            for k, u in v.items():
                self.uri(f"license.{k}", u)
        else:
            self.err("license", "must be a license string, a list of them, or an object of name: URL")

    def meta_spec(self, v):
        if not self.obj("meta-spec", v):
            return
        self.keys("meta-spec", v, {"version", "url"})
        if not isinstance(v.get("version"), str) or not re.match(r"^1\.0\.\d+$", v["version"], re.ASCII):
            self.err("meta-spec.version", f"{json.dumps(v.get('version'))} is not a 1.0.x version of the spec")
        if "url" in v and v["url"] not in SPEC_URLS:
            self.err("meta-spec.url", f"{json.dumps(v['url'])} is not the spec's URL ({sorted(SPEC_URLS)[-1]})")

    def provides(self, v, dist_version):
        if not self.obj("provides", v):
            return
        if not v:
            self.err("provides", "must name at least one extension")
        for name, ext in v.items():
            where = f"provides.{name}"
            self.term(where, name)
            if not self.obj(where, ext):
                continue
            self.keys(where, ext, {"file", "version", "abstract", "docfile", "docpath"})
            for k in ("file", "version"):
                if k not in ext:
                    self.err(where, f"the required key \"{k}\" is missing")
            if "file" in ext:
                self.path(f"{where}.file", ext["file"])
            if "docfile" in ext:
                self.path(f"{where}.docfile", ext["docfile"])
            if "version" in ext:
                self.version(f"{where}.version", ext["version"])
                if dist_version is not None and ext["version"] != dist_version:
                    self.err(f"{where}.version", f"\"{ext['version']}\" differs from the distribution's "
                                                 f"version \"{dist_version}\"")
            for k in ("abstract", "docpath"):
                if k in ext:
                    self.string(f"{where}.{k}", ext[k])

    def tags(self, v):
        if not isinstance(v, list) or not v:
            self.err("tags", "must be a non-empty list")
            return
        if len(set(map(json.dumps, v))) != len(v):
            self.err("tags", "has duplicates")
        for i, t in enumerate(v):
            self.term(f"tags[{i}]", t, space_ok=True, maxlen=255)

    def no_index(self, v):
        if not self.obj("no_index", v):
            return
        self.keys("no_index", v, {"file", "directory"})
        if "file" not in v and "directory" not in v:
            self.err("no_index", "must have file or directory")
        for k in ("file", "directory"):
            if k in v:
                items = v[k] if isinstance(v[k], list) else [v[k]]
                if not items:
                    self.err(f"no_index.{k}", "must not be empty")
                for x in items:
                    self.string(f"no_index.{k}", x, 2)

    def prereqs(self, v):
        if not self.obj("prereqs", v):
            return
        self.keys("prereqs", v, PHASES)
        if not any(p in v for p in PHASES):
            self.err("prereqs", f"must have one of {sorted(PHASES)}")
        for phase in PHASES & v.keys():
            where = f"prereqs.{phase}"
            if not self.obj(where, v[phase]):
                continue
            self.keys(where, v[phase], RELATIONS)
            if not any(r in v[phase] for r in RELATIONS):
                self.err(where, f"must have one of {sorted(RELATIONS)}")
            for rel in RELATIONS & v[phase].keys():
                deps = v[phase][rel]
                if not self.obj(f"{where}.{rel}", deps):
                    continue
                if not deps:
                    self.err(f"{where}.{rel}", "must name at least one prerequisite")
                for name, rng in deps.items():
                    self.term(f"{where}.{rel}", name)
                    self.version_range(f"{where}.{rel}.{name}", rng)

    def resources(self, v):
        if not self.obj("resources", v):
            return
        self.keys("resources", v, {"homepage", "bugtracker", "repository"})
        if not any(k in v for k in ("homepage", "bugtracker", "repository")):
            self.err("resources", "must have homepage, bugtracker or repository")
        if "homepage" in v:
            self.uri("resources.homepage", v["homepage"])
        for k, fields in (("bugtracker", ("web", "mailto")), ("repository", ("url", "web", "type"))):
            if k in v and self.obj(f"resources.{k}", v[k]):
                self.keys(f"resources.{k}", v[k], set(fields))
                for f in fields:
                    if f in v[k] and f in ("web", "url"):
                        self.uri(f"resources.{k}.{f}", v[k][f])


def project_versions(root):
    """The versions the build uses: the Makefile's EXTVERSION and the
    default_version of each *.control file at the top of the tree."""
    found = {}
    with open(os.path.join(root, "Makefile"), encoding="utf-8") as f:
        m = re.search(r"^EXTVERSION\s*[:?]?=\s*(\S+)\s*$", f.read(), re.M)
    found["Makefile EXTVERSION"] = m.group(1) if m else None
    controls = sorted(f for f in os.listdir(root) if f.endswith(".control"))
    for c in controls:
        with open(os.path.join(root, c), encoding="utf-8") as f:
            m = re.search(r"^\s*default_version\s*=\s*'([^']*)'", f.read(), re.M)
        found[f"{c} default_version"] = m.group(1) if m else None
    return found, [c[:-len(".control")] for c in controls]


def check_project(meta, root, errors):
    versions, extensions = project_versions(root)
    mv = meta.get("version") if isinstance(meta, dict) else None
    for what, v in versions.items():
        if v is None:
            errors.append(f"{what}: not found")
        elif v != mv:
            errors.append(f"version: META.json says {json.dumps(mv)} but the {what} is \"{v}\"")
    provides = meta.get("provides") if isinstance(meta, dict) else None
    if isinstance(provides, dict):
        for ext in extensions:
            if ext not in provides:
                errors.append(f"provides: no entry for the extension {ext} ({ext}.control)")
    return errors


def check_file(path):
    root = os.path.dirname(os.path.abspath(path))
    try:
        with open(path, encoding="utf-8") as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: {e}"]
    errors = Checker(root).check(meta)
    return check_project(meta, root, errors)


def self_test(path):
    """Each broken copy must be refused, with a message naming the problem;
    the file as it is must pass (else the self-test proves nothing)."""
    root = os.path.dirname(os.path.abspath(path))
    with open(path, encoding="utf-8") as f:
        good = json.load(f)

    def without(key):
        return lambda m: m.pop(key)

    def setter(*keys_and_value):
        *keys, value = keys_and_value

        def f(m):
            for k in keys[:-1]:
                m = m[k]
            m[keys[-1]] = value
        return f

    ext = next(iter(good["provides"]))
    cases = [(f"no {k}", without(k), f"\"{k}\" is missing") for k in REQUIRED]
    cases += [
        ("version 1.0", setter("version", "1.0"), "not a semantic version"),
        ("version v1.0.0", setter("version", "v1.0.0"), "not a semantic version"),
        ("version 01.0.0", setter("version", "01.0.0"), "not a semantic version"),
        ("version 0.2.0-rc.01", setter("version", "0.2.0-rc.01"), "not a semantic version"),
        ("provides version 0.2", setter("provides", ext, "version", "0.2"), "not a semantic version"),
        ("provides without file", lambda m: m["provides"][ext].pop("file"), "\"file\" is missing"),
        ("provides without version", lambda m: m["provides"][ext].pop("version"), "\"version\" is missing"),
        ("provides file missing", setter("provides", ext, "file", "no/such.sql"), "does not exist"),
        ("provides docfile missing", setter("provides", ext, "docfile", "NOPE.md"), "does not exist"),
        ("provides version differs", setter("provides", ext, "version", "9.9.9"), "differs"),
        ("provides empty", setter("provides", {}), "at least one"),
        ("provides other key", setter("provides", ext, "files", "x"), "unknown key"),
        ("no entry for the control file", lambda m: m.update(provides={"other_ext": m["provides"][ext]}),
         "no entry for the extension"),
        ("name with a space", setter("name", "madlib dl"), "cannot hold"),
        ("license GPL", setter("license", "GPL"), "license strings"),
        ("meta-spec 2.0.0", setter("meta-spec", "version", "2.0.0"), "1.0.x"),
        ("meta-spec url", setter("meta-spec", "url", "https://example.org/spec"), "spec's URL"),
        ("prereq range 15", setter("prereqs", {"runtime": {"requires": {"PostgreSQL": "15"}}}),
         "not a version range"),
        ("release_status beta", setter("release_status", "beta"), "stable, testing"),
        ("unknown top-level key", setter("homepage", "x"), "unknown key"),
        ("tag of one letter", setter("tags", ["a"]), "at least 2"),
        ("abstract empty", setter("abstract", ""), "at least 1"),
        ("version differs from the build", setter("version", "9.9.9"), "but the Makefile EXTVERSION"),
    ]
    failures = []
    base = Checker(root).check(copy.deepcopy(good))
    check_project(good, root, base)
    if base:
        failures.append("META.json as it is fails, so the self-test proves nothing: " + "; ".join(base))
    for name, mutate, expect in cases:
        meta = copy.deepcopy(good)
        mutate(meta)
        errs = check_project(meta, root, Checker(root).check(meta))
        if not any(expect in e for e in errs):
            failures.append(f"{name}: not caught (expected \"{expect}\"; got {errs or 'no error'})")
    # the SemVer forms the spec accepts must pass
    for v in ("0.2.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0+20130313144700",
              "1.0.0-beta+exp.sha.5114f85"):
        c = Checker(root)
        c.version("v", v)
        if c.errors:
            failures.append(f"valid version {v} refused: {c.errors}")
    for r in (0, "1.2.0", ">= 1.2.0", ">= 1.2.0, < 2.0.0, != 1.5.0", "== 0"):
        c = Checker(root)
        c.version_range("r", r)
        if c.errors:
            failures.append(f"valid version range {r!r} refused: {c.errors}")
    for f in failures:
        print(f"check-meta self-test: {f}")
    print(f"check-meta self-test: {len(cases)} broken copies, "
          f"{len(cases) - sum(1 for f in failures if 'not caught' in f)} caught")
    return not failures


def main(argv):
    args = [a for a in argv if a != "--self-test"]
    path = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "META.json")
    if "--self-test" in argv:
        return 0 if self_test(path) else 1
    errors = check_file(path)
    for e in errors:
        print(f"META.json: {e}")
    if errors:
        return 1
    print("META.json: valid for PGXN Meta Spec 1.0.0, version matches the Makefile and the control file")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
