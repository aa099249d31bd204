#!/usr/bin/env bash
# test.sh: the project's test command: build, unit tests, install,
# regression tests and TAP tests, each in its own throwaway server.
#
#   scripts/test.sh           everything
#   scripts/test.sh --quick   skip the sanitizer build and the fuzz runs
#
# Works on a fresh Debian 12 machine as root (CI) or as a user with sudo.
# Each step runs even if an earlier one failed (so one run shows every
# problem); the last line is "N passed, M failed" counting the steps, and
# the exit status is non-zero when any step failed.
#
# Steps:
#   tree        no tracked file over 5 MB and no core dump in the repository
#   deps        scripts/install-deps.sh
#   build       make (fails if the compiler prints "warning:")
#   compat      scripts/check-pg-compat.sh: every file of src/pg compiled
#               against the PostgreSQL 12 and 14 headers of test/pg-headers
#               with GP_VERSION_NUM defined and Greenplum's -Werror flags
#               (Greenplum 7, Cloudberry), no error and no warning; the
#               control file and the install script checked for what
#               PostgreSQL 12 lacks
#   unit        make unit (cmocka)
#   unit-asan   make unit SANITIZE=1 (ASan + UBSan, clang)
#   fuzz        each libFuzzer target (test/fuzz) replays its saved corpus
#               and runs a fixed number of mutations from a fixed seed
#               (make -C test/fuzz check): the same inputs on every
#               machine; skipped with --quick
#   install     make install (with sudo when not root)
#   regress     pg_regress (make installcheck) inside pg_virtualenv, a
#               temporary cluster; regression.diffs is printed on failure
#   notebook    docs/examples' notebook, executed headless (scripts/run_notebook.sh)
#   tap         make prove_installcheck (test/t/*.pl), among them the
#               hostile calls of every function and a sqlsmith run
#               (docs/fuzzing.md); initdb refuses to run as root, so as
#               root it runs as the user madlib_dl_test (created when
#               missing) in a copy of the tree, with MADLIB_DL_GIT_DIR
#               naming this checkout's .git (050_upgrade builds 0.1.0
#               from its history)
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

QUICK=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
  tar --exclude=./build --exclude=./tmp_check --exclude=./results --exclude=./.pgdata \
      --exclude=./.git -cf - . | tar -xf - -C "$copy" || return 1
  chown -R "$TAP_USER": "$copy"
  # The copy has no .git: 050_upgrade builds 0.1.0 from this checkout's
  # history (git archive, read only).
  local git_dir
  git_dir="$(git rev-parse --absolute-git-dir 2>/dev/null)" || git_dir=
  local rc=0
  runuser -u "$TAP_USER" -- env -C "$copy" HOME="$(getent passwd "$TAP_USER" | cut -d: -f6)" \
    ${git_dir:+MADLIB_DL_GIT_DIR="$git_dir"} make prove_installcheck || rc=$?
  rm -rf "$copy"
  return "$rc"
}

step tree do_tree
step deps do_deps
step build do_build
step compat scripts/check-pg-compat.sh
step unit do_unit
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
step notebook do_notebook
if compgen -G "test/t/*.pl" >/dev/null; then
  step tap do_tap
else
  echo
  echo "=== tap: skipped, test/t has no *.pl tests yet"
fi

echo
echo "logs: $LOGDIR"
if [ "$failed" -gt 0 ]; then
  echo "failed steps: ${failed_steps[*]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
