#!/usr/bin/env bash
# check-pg-compat.sh: can madlib_dl build and install on Greenplum 7
# (PostgreSQL 12) and Apache Cloudberry (PostgreSQL 14)?  What can be
# checked without those servers (docs/greenplum.md, "Building"):
#
#   headers   the two include trees of test/pg-headers are what they say
#             (PG_VERSION_NUM 12xxxx and 14xxxx), so the compiles below
#             cannot silently use this machine's PostgreSQL 15 headers;
#   compile   every file of src/pg, with what it includes from the engine,
#             compiled (gcc -fsyntax-only) against each tree with
#             GP_VERSION_NUM defined (70000 for Greenplum 7 on the 12
#             tree, 20000 for Cloudberry 2.0 on the 14 tree) and the
#             flags Greenplum builds extensions with,
#             -Werror=implicit-function-declaration -Werror=uninitialized:
#             no error and no warning; and src/pg/api/serving_batch.c,
#             whose planner hook only plain PostgreSQL 14 and later build,
#             against the 14 tree without GP_VERSION_NUM;
#   types     the install script (src/sql) declares no type PostgreSQL
#             12 lacks (anycompatible and its family, multiranges);
#   qualified every object the install script creates is named
#             madlib_dl.<name> (Greenplum, upstream issue #6716);
#   order     no SQL-language function calls a function defined later in
#             the install script (Greenplum checks their bodies inside
#             CREATE EXTENSION, PostgreSQL does not);
#   control   madlib_dl.control has only parameters PostgreSQL 12 knows
#             (Greenplum 7's CREATE EXTENSION rejects any other);
#   sql       the install script calls no built-in function that
#             PostgreSQL 12 or 14 lacks: none of the functions this
#             server's headers declare (utils/fmgrprotos.h) and the
#             tree's do not, unless the tree's pg_proc.dat has its name.
#
# Run from anywhere; PG_CONFIG (default pg_config) names this server, for
# its fmgrprotos.h; the install script is the src/sql/ pieces in the order the
# Makefile assembles it, followed by the upgrade scripts src/sql/releases/madlib_dl--*--*.sql
# (which run there too).
# Exit status 0 when every check passes.
set -uo pipefail
cd "$(dirname "$0")/.."
PG_CONFIG="${PG_CONFIG:-pg_config}"
CC="${CC:-gcc}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/madlib_dl_compat.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
fail=0
cat $(make -s --no-print-directory print-sql-pieces PG_CONFIG="${PG_CONFIG:-pg_config}") $(LC_ALL=C ls src/sql/releases/madlib_dl--*--*.sql) > "$TMP/install.sql"

FLAGS=(-std=gnu11 -fsyntax-only -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
       -Werror=implicit-function-declaration -Werror=uninitialized
       -DGUC_GPDB_NEED_SYNC=0x00400000
       -Iinclude -Isrc/engine -Isrc/pg -Isrc/pg/api -Isrc/pg/runtime -Isrc/pg/transport)

# TREE NAME MAJOR GP_VERSION_NUM, one line each
TREES="postgresql-12.5-server-include.tar.xz 12 12 70000
postgresql-14.13-server-include.tar.xz 14 14 20000"

while read -r archive name major gpnum; do
  dir="$TMP/$name"
  mkdir -p "$dir"
  if ! tar -C "$dir" -xJf "test/pg-headers/$archive"; then
    echo "compat: cannot unpack test/pg-headers/$archive"; fail=1; continue
  fi
  # headers: the tree is the version it claims, and it is the one used
  printf '#include "postgres.h"\n#if PG_VERSION_NUM / 10000 != %s\n#error not PostgreSQL %s\n#endif\n' \
    "$major" "$major" > "$TMP/probe.c"
  if ! "$CC" "${FLAGS[@]}" -I"$dir/include" "$TMP/probe.c"; then
    echo "compat: $archive is not a PostgreSQL $major include tree"; fail=1; continue
  fi
  nfiles=0
  for f in src/pg/*.c src/pg/*/*.c; do
    out="$("$CC" "${FLAGS[@]}" -DGP_VERSION_NUM="$gpnum" -I"$dir/include" "$f" 2>&1)"
    rc=$?
    nfiles=$((nfiles + 1))
    if [ $rc -ne 0 ] || printf '%s' "$out" | grep -q "warning:"; then
      echo "compat: $f against PostgreSQL $major headers (GP_VERSION_NUM=$gpnum):"
      echo "$out"
      fail=1
    fi
  done
  echo "compat: $nfiles files of src/pg compiled against PostgreSQL $major headers with GP_VERSION_NUM=$gpnum"
  # plain PostgreSQL 14 (not Greenplum or Cloudberry): the code that only it builds
  if [ "$major" = 14 ]; then
    for f in src/pg/api/serving_batch.c; do
      out="$("$CC" "${FLAGS[@]}" -I"$dir/include" "$f" 2>&1)"
      if [ $? -ne 0 ] || printf '%s' "$out" | grep -q "warning:"; then
        echo "compat: $f against PostgreSQL 14 headers:"; echo "$out"; fail=1
      else
        echo "compat: $f compiled against PostgreSQL 14 headers"
      fi
    done
  fi

  # sql: built-in functions this server has and PostgreSQL $major has not
  missing="$(python3 - "$("$PG_CONFIG" --includedir-server)/utils/fmgrprotos.h" \
                       "$dir/include/utils/fmgrprotos.h" "$dir/include/catalog/pg_proc.dat" \
                       "$TMP/install.sql" <<'PY'
import re, sys
here, there, dat, script = sys.argv[1:5]
def syms(p):
    return set(re.findall(r"extern Datum (\w+)\(PG_FUNCTION_ARGS\)", open(p).read()))
names = set(re.findall(r"proname => '([^']+)'", open(dat).read()))
new = syms(here) - syms(there) - names
sql = open(script).read()
for n in sorted(new):
    if re.search(r"(?<![\w.])" + re.escape(n) + r"\s*\(", sql, re.I):
        print(n)
PY
)"
  if [ -n "$missing" ]; then
    echo "compat: the install script calls functions PostgreSQL $major does not have: $missing"
    fail=1
  else
    echo "compat: the install script calls no built-in function PostgreSQL $major lacks"
  fi
done <<< "$TREES"

# types: the install script declares no type PostgreSQL 12 lacks (the
# anycompatible family and multiranges are 13 and 14).  The upgrade scripts
# are left out: they drop 0.1.0's anycompatible functions, which exist only
# where 0.1.0 installed (PostgreSQL 13 and later).
newtypes="$(cat $(make -s --no-print-directory print-sql-pieces PG_CONFIG="${PG_CONFIG:-pg_config}") | sed -e 's/--.*$//' |
            grep -owiE 'anycompatible(array|nonarray|range|multirange)?|any(multirange)|[a-z0-9]+multirange' | sort -u)"
if [ -n "$newtypes" ]; then
  echo "compat: the install script uses types PostgreSQL 12 does not have: $newtypes"
  fail=1
else
  echo "compat: the install script uses no type PostgreSQL 12 lacks (anycompatible, multiranges)"
fi

# order: no SQL-language function of the install script calls a function
# the script defines later.  PostgreSQL does not check SQL function bodies
# inside CREATE EXTENSION; Greenplum 7 does, and fails there.
later="$(cat $(make -s --no-print-directory print-sql-pieces PG_CONFIG="${PG_CONFIG:-pg_config}") | python3 -c '
import re, sys
sql = re.sub(r"--[^\n]*", "", sys.stdin.read())
defs = {}
for m in re.finditer(r"CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|AGGREGATE)\s+madlib_dl\.(\w+)\s*\(", sql, re.I):
    defs.setdefault(m.group(1).lower(), m.start())
bad = set()
fn = r"CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION"
for m in re.finditer(fn + r"\s+madlib_dl\.(\w+)\s*\(((?:(?!" + fn + r").)*?)\bAS\s+(\$\w*\$)(.*?)\3", sql, re.I | re.S):
    if re.search(r"LANGUAGE\s+sql", m.group(2), re.I):
        for r in set(re.findall(r"madlib_dl\.(\w+)\s*\(", m.group(4))):
            if defs.get(r.lower(), -1) > m.start():
                bad.add(m.group(1) + " calls " + r)
print(", ".join(sorted(bad)))
')"
if [ -n "$later" ]; then
  echo "compat: SQL functions of the install script call functions defined after them (Greenplum checks their bodies): $later"
  fail=1
else
  echo "compat: no SQL function of the install script calls one defined after it"
fi

# qualified: every object the install script creates at the top level is
# named with its schema (Greenplum creates an unqualified one in the
# segments' own search_path and CREATE EXTENSION fails, upstream #6716).
unq="$(cat $(make -s --no-print-directory print-sql-pieces PG_CONFIG="${PG_CONFIG:-pg_config}") |
       grep -iE '^\s*CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|PROCEDURE|AGGREGATE|TYPE|TABLE|VIEW|DOMAIN|OPERATOR|CAST|SEQUENCE)\s' |
       grep -viE '^\s*CREATE\s+(OR\s+REPLACE\s+)?\w+\s+(madlib_dl\.|\(|IF\s+NOT\s+EXISTS\s+madlib_dl\.)' |
       grep -v '%')"   # (format() strings make user tables at run time)
if [ -n "$unq" ]; then
  echo "compat: the install script creates objects without the schema madlib_dl: $unq"
  fail=1
else
  echo "compat: every object the install script creates is schema-qualified"
fi

# control: PostgreSQL 12's control file parameters (src/backend/commands/extension.c)
bad="$(grep -vE '^\s*(#|$)' madlib_dl.control | sed -E 's/\s*=.*//' |
       grep -vxE 'directory|default_version|module_pathname|comment|schema|relocatable|superuser|requires|encoding')"
if [ -n "$bad" ]; then
  echo "compat: madlib_dl.control has parameters PostgreSQL 12 rejects: $bad"
  fail=1
else
  echo "compat: madlib_dl.control has only parameters PostgreSQL 12 knows"
fi

exit $fail
