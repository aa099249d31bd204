#!/usr/bin/env bash
# test.sh: the project's test command: build, unit tests, install,
# regression tests and TAP tests, each in its own throwaway server.
#
#   scripts/test.sh           everything
#   scripts/test.sh --quick   skip the sanitizer build and the fuzz runs
#   scripts/test.sh --only=build,install,greenplum
#                             only the steps named (a developer's rerun; the
#                             others are listed as not run, and the last
#                             line counts only the steps that ran)
#
# Works on a fresh Debian 12 machine as root (CI) or as a user with sudo.
# Each step runs even if an earlier one failed (so one run shows every
# problem); the last line is "N passed, M failed" counting the steps, and
# the exit status is non-zero when any step failed.
#
# Steps:
#   tree        no tracked file over 5 MB and no core dump in the repository
#   deps        scripts/install-deps.sh
#   meta        scripts/check-meta.py: META.json against the PGXN Meta Spec
#               (required keys, version formats, provides; its version is
#               the Makefile's and the control file's), and its self-test
#   build       make (fails if the compiler prints "warning:")
#   layers      scripts/check-layers.py: no cycle between the built objects
#               (a file using a symbol of a file that uses it back, directly
#               or around a ring, from nm) nor between the headers' #include
#               lines, and the layer order (engine never uses src/pg; runtime
#               and transport never use api); and its self-test
#   compat      scripts/check-pg-compat.sh: every file of src/pg compiled
#               against the PostgreSQL 12 and 14 headers of test/pg-headers
#               with GP_VERSION_NUM defined and Greenplum's -Werror flags
#               (Greenplum 7, Cloudberry), no error and no warning; the
#               control file and the install script checked for what
#               PostgreSQL 12 lacks and what Greenplum refuses (an object
#               without its schema, a SQL function before one it calls)
#   unit        make unit (cmocka)
#   interchange test/interchange/check.sh: every model the ONNX tests export
#               passes onnx.checker (python3-onnx) and runs in ONNX Runtime
#               (onnxruntime-node from npm, installed into an ignored folder)
#               within 1e-5 of madlib_dl; the PyTorch models load_onnx_model's
#               tests import run in ONNX Runtime within 1e-5 of PyTorch
#   unit-asan   make unit SANITIZE=1 (ASan + UBSan, clang)
#   fuzz        each libFuzzer target (test/fuzz) replays its saved corpus
#               and runs a fixed number of mutations from a fixed seed
#               (make -C test/fuzz check): the same inputs on every
#               machine; skipped with --quick
#   install     make install (with sudo when not root)
#   regress     pg_regress (make installcheck) inside pg_virtualenv, a
#               temporary cluster; regression.diffs is printed on failure
#   docs        scripts/check-docs.py inside pg_virtualenv: every page of
#               docs/ (and README.md) runs its ```sql blocks in order in a
#               fresh database, after the setup it names
#               (docs/example-data.md); pages and blocks marked as
#               illustrations are skipped and listed with their reasons
#   transforms  test/python/check_transform_stats.py inside pg_virtualenv:
#               the statistics and features of training_preprocessor_dl's
#               transform against numpy and scikit-learn
#   notebook    docs/examples' notebook, executed headless (scripts/run_notebook.sh)
#   tap         make prove_installcheck (test/t/*.pl), among them the
#               hostile calls of every function and a sqlsmith run
#               (docs/fuzzing.md), the trojan test of every function
#               (033_trojan, docs/security.md); initdb refuses to run as root, so as
#               root it runs as the user madlib_dl_test (created when
#               missing) in a copy of the tree, with MADLIB_DL_GIT_DIR
#               naming a bare copy of this checkout's history (050_upgrade
#               builds 0.1.0 from it)
#   greenplum   when ../shared/greenplum/setup.sh is beside the checkout
#               (CI has a read-only copy of shared/ there) or GPHOME names
#               an installed Greenplum with a running cluster: setup.sh
#               installs the server into /opt/gpdb and starts a coordinator
#               (port 7000) and 3 primaries (nothing is written into
#               shared/); in a copy of the tree, make with Greenplum's
#               pg_config (no warning) and make install there; pg_regress
#               against the coordinator (00_create_extension,
#               97_greenplum_cluster); test/greenplum/run.sh inside
#               pg_virtualenv (the flow on the segments, the same weights
#               as PostgreSQL's 3 virtual segments, a primary stopped
#               during a fit, DROP EXTENSION, the upgrade from 0.1.0).
#               Without either it says so in one line (docs/greenplum.md)
#   package     the Debian package (docs/packaging.md), last because it
#               replaces the files of the install step: dpkg-buildpackage in
#               a copy of the tree, lintian (no error, no unexplained
#               warning), apt-get install of the .deb, dpkg -S owns every
#               file the extension loads, pg_regress against the installed
#               package (debian/tests/installcheck: pg_buildext
#               installcheck), CREATE EXTENSION from it; then, unless it was
#               installed before, the package is removed and make install
#               puts back what the install step had installed
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

QUICK=0
ONLY=
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    --only=*) ONLY=",${arg#--only=}," ;;
    --only) echo "test.sh: write --only=STEP[,STEP...]" >&2; exit 2 ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown argument $arg (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
JOBS="$(nproc 2>/dev/null || echo 2)"
LOGDIR="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_test.XXXXXX")"
chmod 755 "$LOGDIR"
TAP_USER=madlib_dl_test
# Server options of every throwaway cluster: extra workers for the parallel
# tests, and the library preloaded for the fit_progress view.
PGV_OPTS="-o shared_preload_libraries=madlib_dl -o max_worker_processes=16 -o max_parallel_workers=8"

passed=0
failed=0
failed_steps=()

# step NAME CMD...: run CMD, log its output to $LOGDIR/NAME.log and the
# terminal, and count it.
step() {
  local name="$1"; shift
  if [ -n "$ONLY" ] && [[ "$ONLY" != *",$name,"* ]]; then
    echo "=== $name: not run (--only)"
    return 0
  fi
  echo
  echo "=== $name"
  if "$@" 2>&1 | tee "$LOGDIR/$name.log"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
    echo "=== $name: ok"
    passed=$((passed + 1))
  else
    echo "=== $name: FAILED"
    failed=$((failed + 1))
    failed_steps+=("$name")
  fi
}

# make with the compiler's output checked for warnings.
make_no_warnings() {
  local out="$LOGDIR/make.$$.$RANDOM"
  make "$@" 2>&1 | tee "$out"
  local rc="${PIPESTATUS[0]}"
  if [ "$rc" -ne 0 ]; then
    return "$rc"
  fi
  if grep -q "warning:" "$out"; then
    echo "test.sh: the build printed warnings:"
    grep "warning:" "$out"
    return 1
  fi
}

# Artifacts do not belong in the repository: a tracked file over 5 MB, or
# a core dump, fails the run (outside a git checkout: any such file in the
# tree, build outputs excepted).
do_tree() {
  local files bad
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    files=$(git ls-files)
  else
    files=$(find . -type f -not -path './.git/*' -not -path './build/*' -not -path './tmp_check/*' \
              -not -path './results/*' -not -path './.pgdata/*' -not -name '*.o' -not -name '*.so' | sed 's|^\./||')
  fi
  bad=$(printf '%s\n' "$files" | while IFS= read -r f; do
          [ -f "$f" ] || continue
          size=$(stat -c %s "$f")
          if [ "$size" -gt 5242880 ]; then echo "$f ($size bytes)"; fi
          case "${f##*/}" in core|core.[0-9]*) echo "$f (a core dump)";; esac
        done)
  if [ -n "$bad" ]; then
    echo "test.sh: these files look like artifacts (over 5 MB, or core dumps); remove them and ignore them:"
    echo "$bad"
    return 1
  fi
  echo "no tracked file over 5 MB, no core dump ($(printf '%s\n' "$files" | wc -l) files checked)"
}

do_deps() {
  scripts/install-deps.sh
}

do_layers() {
  python3 scripts/check-layers.py --self-test && python3 scripts/check-layers.py && no_abort_imports madlib_dl.so
}

# no_abort_imports LIB: the server library calls no abort(), exit() or
# assert(), which would take the backend down (protoc-c's generated asserts
# are compiled out of onnx.pb-c.o with -DNDEBUG, see the Makefile).
no_abort_imports() {
  local syms bad
  syms=$(nm -D --undefined-only "$1") || { echo "no_abort_imports: cannot read $1"; return 1; }
  bad=$(printf '%s\n' "$syms" | awk '{print $NF}' | sed 's/@.*//' |
        grep -xE 'abort|exit|_exit|_Exit|quick_exit|__assert_fail|__assert_perror_fail|__assert' | tr '\n' ' ')
  if [ -n "$bad" ]; then
    echo "$1 imports $bad: code in the server must return an error, not abort or exit"
    return 1
  fi
  echo "$1 imports no abort, exit or assert"
}

do_meta() {
  python3 scripts/check-meta.py && python3 scripts/check-meta.py --self-test
}

# copy_tree DEST [TAR-OPTION...]: the source tree, without build outputs,
# test clusters and git metadata, copied into DEST.
copy_tree() {
  local dest="$1"; shift
  tar --exclude=./build --exclude=./tmp_check --exclude=./results --exclude=./.pgdata \
      --exclude=./.git "$@" -cf - . | tar -xf - -C "$dest"
}

do_build() {
  make_no_warnings -j"$JOBS"
}

do_unit() {
  make_no_warnings -j"$JOBS" unit-build && make unit
}

do_unit_asan() {
  make_no_warnings -j"$JOBS" unit-build SANITIZE=1 && make unit SANITIZE=1
}

do_install() {
  "${SUDO[@]}" make install
}

do_regress() {
  rm -f regression.diffs regression.out
  # pg_virtualenv: a throwaway cluster with PG* variables set for the
  # command; -t keeps it in a temporary directory also as root (where it
  # is owned by postgres), so it never touches /etc/postgresql.  Extra
  # workers for the parallel tests.  TAP_TESTS= : TAP runs in its own step.
  if pg_virtualenv -t $PGV_OPTS make installcheck TAP_TESTS=; then
    return 0
  fi
  if [ -f regression.diffs ]; then
    echo "---- regression.diffs"
    cat regression.diffs
  fi
  return 1
}

# The docs' examples, each page in a fresh database of a throwaway cluster
# (scripts/check-docs.py; the cluster preloads the library like the others).
# The docs' claims against the source: the layers docs/ names as supported
# or refused against the engine's layer table, the function pages against
# the built install script (scripts/check-docs-claims.py).
do_docs_claims() {
  python3 scripts/check-docs-claims.py && python3 scripts/check-docs-claims.py --self-test &&
    python3 docs/functions/make_pages.py --check
}

do_docs() {
  pg_virtualenv -t $PGV_OPTS scripts/check-docs.py
}

# The transform statistics and features against scikit-learn's.
do_transforms() {
  pg_virtualenv -t $PGV_OPTS /usr/bin/python3 test/python/check_transform_stats.py
}

# The notebook in docs/examples runs headless against a throwaway cluster,
# on a small subset, and fails if any cell fails.
do_notebook() {
  pg_virtualenv -t $PGV_OPTS env MADLIB_DL_NB_ROWS=2000 MADLIB_DL_NB_ITERATIONS=2 \
    scripts/run_notebook.sh
}

do_tap() {
  if [ "$(id -u)" -ne 0 ]; then
    make prove_installcheck
    return
  fi
  # As root: a dedicated user runs the tests in a copy of the tree.
  if ! id "$TAP_USER" >/dev/null 2>&1; then
    useradd --system --create-home --shell /bin/bash "$TAP_USER" || return 1
  fi
  local copy
  copy="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_tap.XXXXXX")" || return 1
  copy_tree "$copy" || return 1
  chown -R "$TAP_USER": "$copy"
  # The copy has no .git: 050_upgrade builds 0.1.0 from this checkout's
  # history (git archive).  The test user may not be able to read the
  # checkout (a clone under /root), so it gets a bare copy of the history
  # of its own (--no-local: new files, not hard links to the checkout's).
  local git_dir=
  if git rev-parse --git-dir >/dev/null 2>&1; then
    git clone --quiet --bare --no-local "$ROOT" "$copy/.git-history" &&
      chown -R "$TAP_USER": "$copy/.git-history" && git_dir="$copy/.git-history"
  fi
  local rc=0
  runuser -u "$TAP_USER" -- env -C "$copy" HOME="$(getent passwd "$TAP_USER" | cut -d: -f6)" \
    ${git_dir:+MADLIB_DL_GIT_DIR="$git_dir"} make prove_installcheck || rc=$?
  rm -rf "$copy"
  return "$rc"
}

# Greenplum (docs/greenplum.md): the kit of ../shared/greenplum (setup.sh,
# a prebuilt Greenplum 7) or an installed one named by GPHOME.
# (MADLIB_DL_GP_KIT names another setup.sh, e.g. from a worktree.)
GP_KIT="${MADLIB_DL_GP_KIT:-$ROOT/../shared/greenplum/setup.sh}"
gp_home() {
  if [ -f "$GP_KIT" ]; then
    echo /opt/gpdb
  elif [ -n "${GPHOME:-}" ] && [ -x "$GPHOME/bin/pg_config" ]; then
    echo "$GPHOME"
  fi
}
do_greenplum() {
  local gphome work rc=0 t=$SECONDS
  gphome="$(gp_home)"
  [ -n "$gphome" ] || { echo "greenplum: no kit and no GPHOME"; return 1; }
  if [ -f "$GP_KIT" ]; then
    echo "--- $GP_KIT (the server into /opt/gpdb, the cluster started)"
    "${SUDO[@]}" bash "$GP_KIT" || return 1
  fi
  work="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_gp.XXXXXX")" || return 1
  chmod 755 "$work"
  copy_tree "$work" --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=./.deps || return 1
  echo "--- make PG_CONFIG=$gphome/bin/pg_config; make install ($((SECONDS - t)) s)"
  (cd "$work" && make_no_warnings -j"$JOBS" PG_CONFIG="$gphome/bin/pg_config" &&
     "${SUDO[@]}" make install PG_CONFIG="$gphome/bin/pg_config" >/dev/null) || { rm -rf "$work"; return 1; }
  echo "--- pg_regress against the coordinator ($((SECONDS - t)) s)"
  if ! (cd "$work" && env PGHOST=127.0.0.1 PGPORT="${GP_PORT:-7000}" PGUSER="${GP_USER:-gpadmin}" \
          make installcheck PG_CONFIG="$gphome/bin/pg_config" TAP_TESTS=); then
    [ -f "$work/regression.diffs" ] && { echo "---- regression.diffs"; cat "$work/regression.diffs"; }
    rc=1
  fi
  echo "--- test/greenplum/run.sh ($((SECONDS - t)) s)"
  (cd "$work" && "${SUDO[@]}" pg_virtualenv -t $PGV_OPTS env GPHOME="$gphome" test/greenplum/run.sh) || rc=1
  echo "--- greenplum: $((SECONDS - t)) s"
  rm -rf "$work"
  return "$rc"
}

# The Debian package (debian/, docs/packaging.md), built in a copy of the
# tree: dpkg-buildpackage cleans the tree it builds in and writes the .deb
# into its parent directory.
LINTIAN_EXPLAINED=initial-upload-closes-no-bugs   # docs/packaging.md, "Lintian"
do_package() {
  local work rc=0
  work="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_pkg.XXXXXX")" || return 1
  chmod 755 "$work"   # apt reads the .deb as the user _apt
  mkdir "$work/src" &&
    copy_tree "$work/src" --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=./.deps \
      --exclude=./demo_output --exclude=./bench/out --exclude=./log &&
    package_check "$work" || rc=1
  rm -rf "$work"
  return "$rc"
}

package_check() {
  local work="$1" src="$1/src" t v pkg pgc libdir extdir defver f owner out
  local pkgs=() was_installed=() files=() rc=0
  t=$SECONDS
  echo "--- dpkg-buildpackage -b -us -uc (in $src)"
  (cd "$src" && dpkg-buildpackage -b -us -uc) || return 1
  echo "--- built in $((SECONDS - t)) s:"
  ls -l "$work"
  for f in "$work"/*.deb; do
    echo "--- dpkg -c $(basename "$f")"
    dpkg -c "$f"
  done
  for v in $(cd "$src" && pg_buildext supported-versions); do
    pkgs+=("postgresql-$v-madlib-dl")
  done
  [ ${#pkgs[@]} -gt 0 ] || { echo "package: debian/pgversions names no installed PostgreSQL"; return 1; }

  t=$SECONDS
  echo "--- lintian (fails on an error or on a warning other than: $LINTIAN_EXPLAINED)"
  lintian --fail-on error,warning --suppress-tags "$LINTIAN_EXPLAINED" "$work"/*.changes || return 1
  echo "--- lintian: no error, no unexplained warning ($((SECONDS - t)) s)"

  for pkg in "${pkgs[@]}"; do
    if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      was_installed+=("$pkg")
    fi
  done
  t=$SECONDS
  (cd "$work" || exit 1
   debs=()
   for pkg in "${pkgs[@]}"; do debs+=(./"$pkg"_*.deb); done
   echo "--- apt-get install -y ${debs[*]}"
   "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${debs[@]}") || return 1
  echo "--- installed in $((SECONDS - t)) s"

  for pkg in "${pkgs[@]}"; do
    v="${pkg#postgresql-}"; v="${v%%-*}"
    pgc="/usr/lib/postgresql/$v/bin/pg_config"
    libdir="$("$pgc" --pkglibdir)"; extdir="$("$pgc" --sharedir)/extension"
    defver="$(sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" \
              "$extdir/madlib_dl.control" 2>/dev/null)"
    # Every file the server may load for the extension, as found on disk:
    # the library (and JIT bitcode), the control file, every script.
    mapfile -t files < <(
      { find "$libdir" "$libdir/bitcode" -maxdepth 1 -name 'madlib_dl*'
        find "$extdir" -maxdepth 1 \( -name 'madlib_dl.control' -o -name 'madlib_dl--*.sql' \)
      } 2>/dev/null | sort)
    echo "--- dpkg -S: the files PostgreSQL $v loads for madlib_dl belong to $pkg"
    for f in "$libdir/madlib_dl.so" "$extdir/madlib_dl.control" "$extdir/madlib_dl--${defver:-?}.sql"; do
      if ! printf '%s\n' "${files[@]}" | grep -qxF "$f"; then
        echo "package: $f is missing (the library, the control file and the script of its default_version must be installed)"
        rc=1
      fi
    done
    for f in "${files[@]}"; do
      owner="$(dpkg -S "$f" 2>/dev/null | sed -n "s|: $f\$||p")"
      if [ "$owner" = "$pkg" ]; then
        echo "ok   $f ($owner)"
      else
        echo "FAIL $f belongs to ${owner:-no package}, not to $pkg"
        rc=1
      fi
    done
  done

  t=$SECONDS
  echo "--- pg_regress against the installed package (debian/tests/installcheck: pg_buildext installcheck)"
  (cd "$src" && debian/tests/installcheck) || rc=1
  echo "--- installcheck: $((SECONDS - t)) s"

  for pkg in "${pkgs[@]}"; do
    v="${pkg#postgresql-}"; v="${v%%-*}"
    echo "--- CREATE EXTENSION madlib_dl from $pkg, in a cluster with the default settings"
    defver="$(sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" \
              "$("/usr/lib/postgresql/$v/bin/pg_config" --sharedir)/extension/madlib_dl.control")"
    # (pg_virtualenv prints its own lines on stdout: psql writes to a file)
    rm -f "$work/create_extension.out"
    pg_virtualenv -t -v "$v" psql -X -q -At -v ON_ERROR_STOP=1 -o "$work/create_extension.out" \
      -c 'CREATE EXTENSION madlib_dl CASCADE' \
      -c "SELECT extversion FROM pg_extension WHERE extname = 'madlib_dl'" \
      -c "SELECT madlib_dl.weights_to_array('\\x0000803f'::bytea)" || { rc=1; continue; }
    out="$(cat "$work/create_extension.out")"
    echo "$out"
    if [ "$out" = "$defver"$'\n''{1}' ]; then
      echo "ok   version $defver, its library answers"
    else
      echo "FAIL expected the version $defver and {1}"
      rc=1
    fi
  done

  # Leave the system as the install step left it: a package that was not
  # installed before goes, and make install puts the checkout's build back.
  local remove=()
  for pkg in "${pkgs[@]}"; do
    printf '%s\n' "${was_installed[@]}" | grep -qxF "$pkg" || remove+=("$pkg")
  done
  if [ ${#remove[@]} -gt 0 ]; then
    echo "--- apt-get remove ${remove[*]}; make install"
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get remove -y -q "${remove[@]}" || rc=1
    (cd "$ROOT" && "${SUDO[@]}" make install >/dev/null) || rc=1
  fi
  return "$rc"
}

step tree do_tree
step deps do_deps
step meta do_meta
step build do_build
step docs-claims do_docs_claims
step layers do_layers
step compat scripts/check-pg-compat.sh
step unit do_unit
step interchange test/interchange/check.sh
if [ "$QUICK" -eq 1 ]; then
  echo
  echo "=== unit-asan: skipped (--quick)"
else
  step unit-asan do_unit_asan
fi
if [ "$QUICK" -eq 1 ]; then
  echo
  echo "=== fuzz: skipped (--quick)"
else
  step fuzz make -C test/fuzz check
fi
step install do_install
step regress do_regress
step docs do_docs
step transforms do_transforms
step notebook do_notebook
if compgen -G "test/t/*.pl" >/dev/null; then
  step tap do_tap
else
  echo
  echo "=== tap: skipped, test/t has no *.pl tests yet"
fi
if [ -n "$(gp_home)" ]; then
  step greenplum do_greenplum
else
  echo
  echo "=== greenplum: skipped, no ../shared/greenplum/setup.sh and no GPHOME (docs/greenplum.md)"
fi
step package do_package

echo
echo "logs: $LOGDIR"
if [ "$failed" -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
