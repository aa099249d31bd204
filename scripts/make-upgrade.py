#!/usr/bin/env python3
"""make-upgrade.py: generate the upgrade script madlib_dl--OLD--NEW.sql.

    scripts/make-upgrade.py OLD NEW [-o src/sql/releases/madlib_dl--OLD--NEW.sql]

Both versions must be installed where psql's server finds them (make
install of the new tree puts src/sql/releases/madlib_dl--OLD.sql and the new install
script in the extension directory); psql connects with the usual PG*
variables, for example under pg_virtualenv (docs/releasing.md):

    make install && pg_virtualenv -t scripts/make-upgrade.py 0.1.0 0.2.0

It creates two scratch databases, one with CREATE EXTENSION madlib_dl
VERSION OLD and one with VERSION NEW, reads the extension's members of
each (pg_depend, deptype 'e': functions, aggregates, composite types,
views, tables, event triggers) and writes the statements that move the
OLD catalog to the NEW one:

  1. DROP the members that NEW lacks or that cannot be replaced in place
     (another result type, other argument names, fewer defaults; changed
     aggregates, composite types whose attributes are not only appended),
     and every member that depends on one of them, latest created first;
  2. the hand-written part before the generated definitions
     (scripts/upgrade/OLD--NEW.sql up to the line "-- @@ generated @@"):
     the extension's own tables, whose rows must be kept (ALTER TABLE,
     never DROP; the generator refuses a changed table it is not told
     about);
  3. ALTER TYPE ... ADD ATTRIBUTE for composite types that gained
     attributes at the end;
  4. the NEW definitions of the added and changed members, in the order a
     fresh install creates them (their OIDs in the NEW database): types,
     functions (pg_get_functiondef), aggregates, views, event triggers;
     then their grants and comments where they differ;
  5. a DO block that drops the members a plain PostgreSQL install of NEW
     does not have: the ones made by the install script's conditional
     blocks (PL/Proxy's proxy functions, Greenplum's functions), which the
     hand-written part after "-- @@ generated @@" creates again as a fresh
     install would.

The result is checked by test/t/050_upgrade.pl: the catalog after CREATE
EXTENSION at NEW equals the catalog after CREATE EXTENSION VERSION OLD and
ALTER EXTENSION UPDATE.  Read the diff of the script before committing it.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MARK = '-- @@ generated @@'


def psql(db, sql):
    out = subprocess.run(['psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql],
                         check=True, capture_output=True, text=True)
    return out.stdout


def query_json(db, sql):
    text = psql(db, 'SELECT coalesce(json_agg(q), \'[]\') FROM (%s) q' % sql)
    return json.loads(text)


MEMBERS = """
SELECT d.classid::regclass::text AS cls, d.objid::bigint AS oid
  FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = 'madlib_dl'
"""

# One row per member function or aggregate: what identifies it, what must
# be equal for it to be unchanged, and how to create it.
PROCS = """
SELECT p.oid::bigint AS oid, p.oid::regprocedure::text AS ident, p.prokind AS kind,
       CASE WHEN p.prokind = 'a' THEN NULL ELSE pg_get_functiondef(p.oid) END AS def,
       pg_get_function_arguments(p.oid) AS args,
       p.prorettype::regtype::text AS rettype, p.proretset AS retset,
       coalesce(p.proallargtypes::regtype[]::text[], p.proargtypes::regtype[]::text[]) AS alltypes,
       p.proargmodes::text[] AS modes, p.proargnames AS names, p.pronargdefaults AS ndefaults,
       p.proparallel AS parallel, p.proacl::text[] AS acl,
       obj_description(p.oid, 'pg_proc') AS comment,
       CASE WHEN p.prokind = 'a' THEN (
           SELECT json_build_object(
               'sfunc', a.aggtransfn::regproc::text, 'stype', format_type(a.aggtranstype, NULL),
               'finalfunc', nullif(a.aggfinalfn::regproc::text, '-'),
               'combinefunc', nullif(a.aggcombinefn::regproc::text, '-'),
               'serialfunc', nullif(a.aggserialfn::regproc::text, '-'),
               'deserialfunc', nullif(a.aggdeserialfn::regproc::text, '-'),
               'finalextra', a.aggfinalextra, 'finalmodify', a.aggfinalmodify,
               'initcond', a.agginitval, 'kind', a.aggkind,
               'msfunc', nullif(a.aggmtransfn::regproc::text, '-'))
             FROM pg_aggregate a WHERE a.aggfnoid = p.oid) END AS agg
  FROM pg_proc p WHERE p.oid IN (SELECT oid FROM members WHERE cls = 'pg_proc')
"""

TYPES = """
SELECT t.oid::bigint AS oid, format_type(t.oid, NULL) AS ident, t.typtype AS typtype,
       t.typarray::bigint AS typarray, t.typacl::text[] AS acl,
       (SELECT json_agg(json_build_array(a.attname, format_type(a.atttypid, a.atttypmod)) ORDER BY a.attnum)
          FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS attrs,
       obj_description(t.oid, 'pg_type') AS comment
  FROM pg_type t WHERE t.oid IN (SELECT oid FROM members WHERE cls = 'pg_type')
"""

RELS = """
SELECT c.oid::bigint AS oid, c.oid::regclass::text AS ident, c.relkind AS relkind,
       c.relacl::text[] AS acl, c.relrowsecurity AS rls,
       CASE WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid) END AS viewdef,
       (SELECT json_agg(json_build_array(a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                                         pg_get_expr(ad.adbin, ad.adrelid)) ORDER BY a.attnum)
          FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS cols,
       (SELECT json_agg(pg_get_constraintdef(k.oid) ORDER BY pg_get_constraintdef(k.oid))
          FROM pg_constraint k WHERE k.conrelid = c.oid) AS constraints,
       (SELECT json_agg(json_build_array(po.polname, po.polcmd, po.polpermissive,
                                         pg_get_expr(po.polqual, po.polrelid),
                                         pg_get_expr(po.polwithcheck, po.polrelid)) ORDER BY po.polname)
          FROM pg_policy po WHERE po.polrelid = c.oid) AS policies,
       obj_description(c.oid, 'pg_class') AS comment
  FROM pg_class c WHERE c.oid IN (SELECT oid FROM members WHERE cls = 'pg_class')
"""

EVTS = """
SELECT e.oid::bigint AS oid, e.evtname AS ident, e.evtevent AS event,
       e.evtfoid::regprocedure::text AS func, e.evttags AS tags, e.evtenabled AS enabled
  FROM pg_event_trigger e WHERE e.oid IN (SELECT oid FROM members WHERE cls = 'pg_event_trigger')
"""

# Dependencies between members (and through a member type's array type):
# (dependent, referenced) pairs of OIDs.
DEPS = """
SELECT d.objid::bigint AS dep, coalesce(arr.oid, d.refobjid)::bigint AS ref
  FROM pg_depend d
  LEFT JOIN pg_type arr ON arr.typarray = d.refobjid AND d.refclassid = 'pg_type'::regclass
  LEFT JOIN pg_rewrite rw ON rw.oid = d.objid AND d.classid = 'pg_rewrite'::regclass
 WHERE d.deptype IN ('n', 'a')
UNION
SELECT rw.ev_class::bigint, d.refobjid::bigint
  FROM pg_depend d JOIN pg_rewrite rw ON rw.oid = d.objid
 WHERE d.classid = 'pg_rewrite'::regclass AND d.deptype = 'n'
UNION
SELECT t.oid::bigint, c.oid::bigint FROM pg_type t JOIN pg_class c ON c.oid = t.typrelid
"""


def catalog(db):
    with_members = 'WITH members AS (%s) ' % MEMBERS
    cat = {}
    for kind, sql in (('proc', PROCS), ('type', TYPES), ('rel', RELS), ('evt', EVTS)):
        for row in query_json(db, with_members + sql):
            row['what'] = kind
            cat[(kind, row['ident'])] = row
    deps = query_json(db, DEPS)
    return cat, deps


def fingerprint(o):
    keep = {k: v for k, v in o.items() if k not in ('oid', 'typarray')}
    return json.dumps(keep, sort_keys=True)


def replaceable(old, new):
    """Can CREATE OR REPLACE turn old into new (same kind)?"""
    if old['what'] == 'proc':
        if old['kind'] != 'f' or new['kind'] != 'f':
            return False
        same = all(old[k] == new[k] for k in ('rettype', 'retset', 'alltypes', 'modes', 'names'))
        return same and new['ndefaults'] >= old['ndefaults']
    if old['what'] == 'rel':
        return old['relkind'] == 'v' and new['relkind'] == 'v' and \
            (old['cols'] or []) == (new['cols'] or [])[:len(old['cols'] or [])]
    if old['what'] == 'evt':
        return False
    return False


def appended_attrs(old, new):
    """The attributes new adds at the end of composite type old, or None."""
    oa, na = old['attrs'] or [], new['attrs'] or []
    if old['typtype'] != 'c' or na[:len(oa)] != oa or len(na) <= len(oa):
        return None
    if {k: v for k, v in old.items() if k not in ('attrs', 'oid', 'typarray')} != \
            {k: v for k, v in new.items() if k not in ('attrs', 'oid', 'typarray')}:
        return None
    return na[len(oa):]


def drop_stmt(o):
    if o['what'] == 'proc':
        kw = {'a': 'AGGREGATE', 'p': 'PROCEDURE'}.get(o['kind'], 'FUNCTION')
        return 'DROP %s %s;' % (kw, o['ident'])
    if o['what'] == 'type':
        return 'DROP TYPE %s;' % o['ident']
    if o['what'] == 'rel':
        kw = {'v': 'VIEW', 'r': 'TABLE', 'S': 'SEQUENCE', 'm': 'MATERIALIZED VIEW'}[o['relkind']]
        return 'DROP %s %s;' % (kw, o['ident'])
    if o['what'] == 'evt':
        return 'DROP EVENT TRIGGER %s;' % o['ident']
    raise SystemExit('make-upgrade: cannot drop %r' % (o,))


def create_stmt(o, replace):
    if o['what'] == 'proc' and o['kind'] != 'a':
        d = o['def'].rstrip() + ';'
        return d if replace else d.replace('CREATE OR REPLACE FUNCTION', 'CREATE FUNCTION', 1)
    if o['what'] == 'proc':
        a = o['agg']
        if a['kind'] != 'n' or a['msfunc']:
            raise SystemExit('make-upgrade: aggregate %s: only plain aggregates are written' % o['ident'])
        opts = ['SFUNC = %s' % a['sfunc'], 'STYPE = %s' % a['stype']]
        for k in ('finalfunc', 'combinefunc', 'serialfunc', 'deserialfunc'):
            if a[k]:
                opts.append('%s = %s' % (k.upper(), a[k]))
        if a['finalextra']:
            opts.append('FINALFUNC_EXTRA')
        if a['finalfunc'] and a['finalmodify'] != 'r':
            opts.append('FINALFUNC_MODIFY = %s' % {'s': 'SHAREABLE', 'w': 'READ_WRITE'}[a['finalmodify']])
        if a['initcond'] is not None:
            opts.append("INITCOND = '%s'" % a['initcond'].replace("'", "''"))
        opts.append('PARALLEL = %s' % {'s': 'SAFE', 'r': 'RESTRICTED', 'u': 'UNSAFE'}[o['parallel']])
        name = o['ident'].split('(')[0]
        return 'CREATE AGGREGATE %s(%s) (\n    %s\n);' % (name, o['args'], ',\n    '.join(opts))
    if o['what'] == 'type':
        if o['typtype'] != 'c':
            raise SystemExit('make-upgrade: type %s: only composite types are written' % o['ident'])
        return 'CREATE TYPE %s AS (\n    %s\n);' % (
            o['ident'], ',\n    '.join('%s %s' % (quote_ident(n), t) for n, t in o['attrs']))
    if o['what'] == 'rel' and o['relkind'] == 'v':
        return '%s VIEW %s AS\n%s' % ('CREATE OR REPLACE' if replace else 'CREATE', o['ident'],
                                      o['viewdef'].rstrip())
    if o['what'] == 'evt':
        tags = ''
        if o['tags']:
            tags = '\n    WHEN TAG IN (%s)' % ', '.join("'%s'" % t for t in o['tags'])
        return 'CREATE EVENT TRIGGER %s ON %s%s\n    EXECUTE FUNCTION %s;' % (
            quote_ident(o['ident']), o['event'], tags, o['func'].split('(')[0] + '()')
    raise SystemExit('make-upgrade: %s %s changed: write its upgrade by hand in scripts/upgrade/'
                     % (o['what'], o['ident']))


def quote_ident(name):
    if name.isidentifier() and name == name.lower() and name.isascii():
        return name
    return '"%s"' % name.replace('"', '""')


def on_clause(o):
    if o['what'] == 'proc':
        kw = {'a': 'FUNCTION', 'p': 'PROCEDURE'}.get(o['kind'], 'FUNCTION')
        return '%s %s' % (kw, o['ident'])
    if o['what'] == 'type':
        return 'TYPE %s' % o['ident']
    return 'TABLE %s' % o['ident']


PRIVS = {'r': 'SELECT', 'w': 'UPDATE', 'a': 'INSERT', 'd': 'DELETE', 'D': 'TRUNCATE',
         'x': 'REFERENCES', 't': 'TRIGGER', 'X': 'EXECUTE', 'U': 'USAGE'}


def acl_stmts(old_acl, o):
    """GRANT / REVOKE turning old_acl into o's ACL (the owner's own entry aside)."""
    new_acl = o.get('acl')
    if old_acl == new_acl:
        return []
    if new_acl is None:
        raise SystemExit('make-upgrade: %s: its ACL went back to the default; write it by hand'
                         % o['ident'])
    out = ['REVOKE ALL ON %s FROM PUBLIC;' % on_clause(o)]
    for item in new_acl:
        grantee, rest = item.split('=', 1)
        privs, grantor = rest.split('/', 1)
        if grantee == grantor:
            continue            # the owner's own privileges
        names = ', '.join(PRIVS[c] for c in privs if c != '*')
        out.append('GRANT %s ON %s TO %s;' % (names, on_clause(o), grantee or 'PUBLIC'))
    return out


def comment_stmt(o):
    kind = {'proc': 'FUNCTION', 'type': 'TYPE', 'evt': 'EVENT TRIGGER'}.get(o['what'])
    if o['what'] == 'rel':
        kind = 'VIEW' if o['relkind'] == 'v' else 'TABLE'
    if o['what'] == 'proc' and o['kind'] == 'a':
        kind = 'AGGREGATE'
    text = 'NULL' if o['comment'] is None else "'%s'" % o['comment'].replace("'", "''")
    return 'COMMENT ON %s %s IS %s;' % (kind, o['ident'], text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('old')
    ap.add_argument('new')
    ap.add_argument('-o', '--output')
    args = ap.parse_args()
    out_path = args.output or os.path.join(ROOT, 'src', 'sql', 'releases', 'madlib_dl--%s--%s.sql' % (args.old, args.new))
    hand_path = os.path.join(HERE, 'upgrade', '%s--%s.sql' % (args.old, args.new))
    hand = open(hand_path).read() if os.path.exists(hand_path) else MARK + '\n'
    if MARK not in hand:
        raise SystemExit('make-upgrade: %s has no line "%s"' % (hand_path, MARK))
    hand_before, hand_after = hand.split(MARK, 1)

    dbs = {'old': 'madlib_dl_upgrade_old', 'new': 'madlib_dl_upgrade_new'}
    for key, db in dbs.items():
        psql('postgres', 'DROP DATABASE IF EXISTS %s' % db)
        psql('postgres', 'CREATE DATABASE %s' % db)
        version = args.old if key == 'old' else args.new
        psql(db, "CREATE EXTENSION madlib_dl VERSION '%s'" % version)
    try:
        old, old_deps = catalog(dbs['old'])
        new, _ = catalog(dbs['new'])
    finally:
        for db in dbs.values():
            psql('postgres', 'DROP DATABASE IF EXISTS %s' % db)

    # Tables keep their rows: the hand-written part migrates them.
    for key in set(old) | set(new):
        o = old.get(key) or new.get(key)
        if o['what'] == 'rel' and o['relkind'] != 'v' and \
                (key not in old or key not in new or fingerprint(old[key]) != fingerprint(new[key])):
            if o['ident'] not in hand_before:
                raise SystemExit('make-upgrade: table %s differs between %s and %s; migrate it '
                                 '(ALTER TABLE, keeping its rows) in %s before "%s"'
                                 % (o['ident'], args.old, args.new, hand_path, MARK))

    drop, replace, create, alter = set(), set(), set(), {}
    for key, o in old.items():
        if o['what'] == 'rel' and o['relkind'] != 'v':
            continue
        n = new.get(key)
        if n is None:
            drop.add(key)
        elif fingerprint(o) != fingerprint(n):
            if o['what'] == 'type' and appended_attrs(o, n) is not None:
                alter[key] = appended_attrs(o, n)
            elif replaceable(o, n):
                replace.add(key)
            else:
                drop.add(key)
    # Whatever depends on a dropped member goes too (and comes back when NEW has it).
    by_oid = {o['oid']: k for k, o in old.items()}
    for o in old.values():
        if o['what'] == 'type' and o.get('typarray'):
            by_oid.setdefault(o['typarray'], None)
    dependents = {}
    for d in old_deps:
        dependents.setdefault(d['ref'], set()).add(d['dep'])
    todo = list(drop)
    while todo:
        k = todo.pop()
        for dep_oid in dependents.get(old[k]['oid'], ()):
            dk = by_oid.get(dep_oid)
            if dk is not None and dk not in drop:
                if old[dk]['what'] == 'rel' and old[dk]['relkind'] != 'v':
                    raise SystemExit('make-upgrade: table %s depends on %s, which is dropped'
                                     % (dk[1], k[1]))
                drop.add(dk)
                replace.discard(dk)
                alter.pop(dk, None)
                todo.append(dk)
    for key, n in new.items():
        if n['what'] == 'rel' and n['relkind'] != 'v':
            continue
        if key not in old or key in drop:
            create.add(key)

    lines = ['-- madlib_dl--%s--%s.sql: ALTER EXTENSION madlib_dl UPDATE from %s to %s.'
             % (args.old, args.new, args.old, args.new),
             '-- Generated by scripts/make-upgrade.py from the two install scripts, with',
             '-- the hand-written parts of scripts/upgrade/%s--%s.sql; do not edit.'
             % (args.old, args.new),
             '\\echo Use "ALTER EXTENSION madlib_dl UPDATE" to load this file. \\quit', '']
    lines.append('-- 1. Members %s lacks, or that cannot be replaced in place.' % args.new)
    for key in sorted(drop, key=lambda k: -old[k]['oid']):
        lines.append(drop_stmt(old[key]))
    lines += ['', '-- 2. Hand-written (scripts/upgrade/%s--%s.sql): the extension\'s tables.'
              % (args.old, args.new), hand_before.strip(), '']
    lines.append('-- 3. Composite types that gained attributes at the end.')
    for key, attrs in sorted(alter.items()):
        for name, typ in attrs:
            lines.append('ALTER TYPE %s ADD ATTRIBUTE %s %s;' % (key[1], quote_ident(name), typ))
    lines += ['', '-- 4. The new and changed members, in the order a fresh install creates them.']
    for key in sorted(create | replace, key=lambda k: new[k]['oid']):
        lines.append(create_stmt(new[key], key in replace))
        lines.append('')
    lines.append('-- Grants and comments that differ from what the statements above leave.')
    for key in sorted(new, key=lambda k: new[k]['oid']):
        n = new[key]
        if n['what'] == 'rel' and n['relkind'] != 'v':
            continue
        fresh = key in create
        base_acl = None if fresh else old[key].get('acl')
        lines += acl_stmts(base_acl, n)
        base_comment = None if fresh else old[key].get('comment')
        if n.get('comment') != base_comment:
            lines.append(comment_stmt(n))
    expected = sorted(k[1] for k, n in new.items() if n['what'] == 'proc')
    lines += ['', '-- 5. Members a plain PostgreSQL install of %s does not have: those of the' % args.new,
              '-- conditional blocks (PL/Proxy, Greenplum), made again below as a fresh install would.',
              'DO $upgrade$',
              'DECLARE',
              '    f record;',
              "    saved text := current_setting('search_path');",
              'BEGIN',
              "    PERFORM set_config('search_path', 'pg_catalog', true);   -- names as written below",
              '    FOR f IN SELECT p.oid::regprocedure AS ident, p.prokind',
              '               FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid',
              "              WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'",
              "                AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'madlib_dl')",
              '                AND p.oid::regprocedure::text <> ALL (%s)' % sql_text_array(expected),
              '              ORDER BY p.oid DESC LOOP',
              "        EXECUTE format('DROP %s %s', CASE WHEN f.prokind = 'a' THEN 'AGGREGATE' ELSE 'FUNCTION' END, f.ident);",
              '    END LOOP;',
              "    PERFORM set_config('search_path', saved, true);",
              'END',
              '$upgrade$;',
              '',
              '-- Hand-written (scripts/upgrade/%s--%s.sql): the conditional blocks.' % (args.old, args.new),
              hand_after.strip(), '']
    with open(out_path, 'w') as f:
        f.write('\n'.join(lines))
    print('make-upgrade: wrote %s (%d dropped, %d altered, %d replaced, %d created)'
          % (out_path, len(drop), len(alter), len(replace), len(create)))


def sql_text_array(items):
    body = ',\n                    '.join("'%s'" % i.replace("'", "''") for i in items)
    return 'ARRAY[\n                    %s]::text[]' % body


if __name__ == '__main__':
    main()
