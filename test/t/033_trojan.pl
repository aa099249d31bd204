#-------------------------------------------------------------------------
#
# 033_trojan.pl
#	  Code of another role never runs inside a madlib_dl call
#	  (docs/security.md, "Whose code runs").
#
#	  An ordinary role, attacker, owns every fixture of the hostile-call
#	  test (schema hostile: packed tables, models, architecture and model
#	  selection tables, fit_multiple outputs, and their decoys) and turns
#	  them into trojans: columns of its own enum (with casts to text,
#	  varchar, json, jsonb, bigint and an IMPLICIT cast to integer, and a
#	  cast from varchar), of a composite type (casts to text, json,
#	  jsonb), of domains whose CHECK calls its function; ids, mst_keys,
#	  class values and the names a summary records retyped to them;
#	  row-security policies, triggers, rules and column defaults that call
#	  its function; views whose query calls it; operators of its own.
#	  Every such function bumps a sequence (which no rollback undoes) and
#	  logs a WARNING when it runs as any role but attacker.
#
#	  Then, as the role victim and as a superuser:
#	    * the attacks of issue 25 by hand (predict on an id of an
#	      attacker type, a model whose class values are of an attacker
#	      type, fit on a packed table whose summary holds an attacker
#	      type, validation_preprocessor_dl against enum class values,
#	      fit_multiple with a model selection table whose summary's
#	      object_table is of an attacker type, an enum mst_key with an
#	      implicit cast, an id domain with a CHECK, class values of an
#	      attacker enum array inherited by the caller's own summary),
#	      each refused with 42501;
#	    * every function of schema madlib_dl as the catalog lists it,
#	      called with the trojan fixtures by the hostile-call generator
#	      (test/perl/MadlibDLHostile.pm), so a new function is covered
#	      without editing this test;
#	  and the test fails if any trap fired, if a table of the victim's got
#	  a column of an attacker type, or if attacker became superuser.
#	  Then: a trigger the attacker may add to the victim's own table (TRIGGER
#	  privilege) does not fire either; the attacker can take no lock on
#	  madlib_dl's objects that blocks another role's DROP TABLE or fit;
#	  PUBLIC has no privilege beyond SELECT, USAGE and EXECUTE in schema
#	  madlib_dl.
#
#	  The traps are live: a self-check reads the columns as the victim
#	  outside madlib_dl and sees them fire.
#
#	  Environment (optional): MADLIB_DL_TROJAN_CALLS (calls per role,
#	  default 4000), MADLIB_DL_TROJAN_SEED.
#
# IDENTIFICATION
#	  test/t/033_trojan.pl
#
#-------------------------------------------------------------------------
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use MadlibDLHostile;
use MadlibDLTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $budget = $ENV{MADLIB_DL_TROJAN_CALLS} // 4000;
my $seed = $ENV{MADLIB_DL_TROJAN_SEED} // 20261202;
my $arch = iris_arch();

my $node = new_node('trojan',
	"restart_after_crash = on\nlog_min_messages = warning\nlog_min_error_statement = panic\nlog_statement = none\n"
	  . "max_locks_per_transaction = 1024\n");
my $fx = hostile_fixtures($node);
my $super = $node->safe_psql('postgres', 'SELECT current_user');

# The fixture owner becomes the attacker; the victim has its own schema
# and its own model.
$node->safe_psql('postgres', q{
	ALTER ROLE hostile RENAME TO attacker;
	CREATE ROLE victim LOGIN;
	CREATE SCHEMA victim AUTHORIZATION victim;
	GRANT USAGE ON SCHEMA madlib_dl TO victim;
	ALTER ROLE victim SET search_path = victim, hostile, public;
	ALTER ROLE victim SET statement_timeout = '2s';
});
load_iris($node, 'postgres', 'victim');
$node->safe_psql('postgres', qq{
	SET ROLE victim;
	SET search_path = victim;
	SET client_min_messages = warning;
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'packed', 'class_text', 'attributes', NULL, 1.0, NULL, '2');
	SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'vpacked', 'class_text', 'attributes', 'packed');
	SELECT madlib_dl.load_keras_model('arch', '$arch');
	SELECT madlib_dl.fit('packed', 'model', 'arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 1);
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1], ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=16']);
});

# The traps.  hostile.rec(what) is what every trap calls.
$node->safe_psql('postgres', q{
SET ROLE attacker;
SET search_path = hostile;
CREATE SEQUENCE hostile.fired;
GRANT USAGE ON SEQUENCE hostile.fired TO PUBLIC;
CREATE FUNCTION hostile.rec(what text) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $f$
BEGIN
    IF current_user <> 'attacker' THEN
        PERFORM nextval('hostile.fired');
        RAISE WARNING 'trojan fired: % as %', what, current_user;
        IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
            BEGIN
                EXECUTE 'ALTER ROLE attacker SUPERUSER';
            EXCEPTION WHEN OTHERS THEN NULL;
            END;
        END IF;
    END IF;
    RETURN true;
END
$f$;
CREATE TYPE hostile.e AS ENUM ('0', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12',
                               'Iris-setosa', 'Iris-versicolor', 'Iris-virginica', 'x');
CREATE TYPE hostile.c AS (v text);
CREATE FUNCTION hostile.e_text(hostile.e) RETURNS text LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast enum to text') THEN $1::name::text END $f$;
CREATE FUNCTION hostile.e_varchar(hostile.e) RETURNS varchar LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast enum to varchar') THEN $1::name::varchar END $f$;
CREATE FUNCTION hostile.e_int(hostile.e) RETURNS integer LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('implicit cast enum to integer') THEN 1 END $f$;
CREATE FUNCTION hostile.e_bigint(hostile.e) RETURNS bigint LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast enum to bigint') THEN 1::bigint END $f$;
CREATE FUNCTION hostile.e_json(hostile.e) RETURNS json LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast enum to json') THEN '1'::json END $f$;
CREATE FUNCTION hostile.e_jsonb(hostile.e) RETURNS jsonb LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast enum to jsonb') THEN '1'::jsonb END $f$;
CREATE FUNCTION hostile.varchar_e(varchar) RETURNS hostile.e LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast varchar to enum') THEN 'x'::name::text::hostile.e END $f$;
CREATE FUNCTION hostile.c_text(hostile.c) RETURNS text LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast composite to text') THEN $1.v END $f$;
CREATE FUNCTION hostile.c_json(hostile.c) RETURNS json LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast composite to json') THEN '1'::json END $f$;
CREATE FUNCTION hostile.c_jsonb(hostile.c) RETURNS jsonb LANGUAGE sql AS
  $f$ SELECT CASE WHEN hostile.rec('cast composite to jsonb') THEN '1'::jsonb END $f$;
CREATE CAST (hostile.e AS text) WITH FUNCTION hostile.e_text(hostile.e);
CREATE CAST (hostile.e AS varchar) WITH FUNCTION hostile.e_varchar(hostile.e);
CREATE CAST (hostile.e AS integer) WITH FUNCTION hostile.e_int(hostile.e) AS IMPLICIT;
CREATE CAST (hostile.e AS bigint) WITH FUNCTION hostile.e_bigint(hostile.e) AS IMPLICIT;
CREATE CAST (hostile.e AS json) WITH FUNCTION hostile.e_json(hostile.e);
CREATE CAST (hostile.e AS jsonb) WITH FUNCTION hostile.e_jsonb(hostile.e);
CREATE CAST (varchar AS hostile.e) WITH FUNCTION hostile.varchar_e(varchar) AS IMPLICIT;
CREATE CAST (hostile.c AS text) WITH FUNCTION hostile.c_text(hostile.c);
CREATE CAST (hostile.c AS json) WITH FUNCTION hostile.c_json(hostile.c);
CREATE CAST (hostile.c AS jsonb) WITH FUNCTION hostile.c_jsonb(hostile.c);
CREATE FUNCTION hostile.e_eq_int(hostile.e, integer) RETURNS boolean LANGUAGE sql AS
  $f$ SELECT hostile.rec('operator enum = integer') $f$;
CREATE OPERATOR hostile.= (LEFTARG = hostile.e, RIGHTARG = integer, FUNCTION = hostile.e_eq_int);
CREATE FUNCTION hostile.chk(text) RETURNS boolean LANGUAGE sql AS $f$ SELECT hostile.rec('domain check') $f$;
CREATE DOMAIN hostile.d AS text CHECK (hostile.chk(VALUE));
CREATE DOMAIN hostile.di AS integer CHECK (hostile.chk(VALUE::text));
CREATE FUNCTION hostile.trg() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    PERFORM hostile.rec('trigger ' || TG_OP || ' on ' || TG_TABLE_NAME);
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END
$f$;
CREATE FUNCTION hostile.deflt() RETURNS text LANGUAGE sql AS $f$ SELECT 'd' WHERE hostile.rec('column default') $f$;
});

# Retype, add trap columns, policies, triggers, rules and defaults on
# every table of schema hostile but the few the call generator's own good
# values read directly (they stay clean, else the test's own expressions
# would fire the traps).  Views and materialized views are made again
# over the trojans, views with a query that calls the trap.
my $clean = q{'arch', 'model', 'packed', 'packed_summary', 'agg_rows'};
my ($ret, $out, $err) = $node->psql('postgres', qq{
SET ROLE attacker;
SET search_path = hostile;
SET client_min_messages = notice;
CREATE TEMP TABLE views AS
  SELECT c.relname::text AS name, c.relkind, d.refobjid::regclass::text AS base
    FROM pg_class c JOIN pg_rewrite r ON r.ev_class = c.oid
    JOIN pg_depend d ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
                    AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> c.oid
   WHERE c.relnamespace = 'hostile'::regnamespace AND c.relkind IN ('v', 'm')
   GROUP BY 1, 2, 3;
DO \$do\$
DECLARE
    v record;
    t record;
    a record;
BEGIN
    FOR v IN SELECT DISTINCT name, relkind FROM views LOOP
        EXECUTE format('DROP %s IF EXISTS hostile.%I CASCADE',
                       CASE WHEN v.relkind = 'v' THEN 'VIEW' ELSE 'MATERIALIZED VIEW' END, v.name);
    END LOOP;
    FOR t IN SELECT c.oid::regclass AS rel, c.relname FROM pg_class c
              WHERE c.relnamespace = 'hostile'::regnamespace AND c.relkind IN ('r', 'p')
                AND c.relname NOT IN ($clean) AND NOT c.relispartition LOOP
        FOR a IN SELECT attname::text AS col, format_type(atttypid, atttypmod) AS typ FROM pg_attribute
                  WHERE attrelid = t.rel AND attnum > 0 AND NOT attisdropped LOOP
            BEGIN
                IF a.col = 'id' AND a.typ = 'integer' THEN
                    EXECUTE format('ALTER TABLE %s ALTER COLUMN id TYPE hostile.di', t.rel);
                ELSIF a.col = 'mst_key' AND a.typ = 'integer' THEN
                    EXECUTE format('ALTER TABLE %s ALTER COLUMN mst_key DROP DEFAULT', t.rel);
                    EXECUTE format('ALTER TABLE %s ALTER COLUMN mst_key TYPE hostile.e USING mst_key::text::hostile.e', t.rel);
                ELSIF a.col LIKE '%_class_values' THEN
                    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I TYPE hostile.e[] USING %I::text[]::hostile.e[]',
                                   t.rel, a.col, a.col);
                ELSIF a.col = 'class_text' AND a.typ = 'text' THEN
                    EXECUTE format('ALTER TABLE %s ALTER COLUMN class_text TYPE hostile.e USING class_text::hostile.e', t.rel);
                ELSIF a.col IN ('object_table', 'model_arch_table', 'source_table', 'model', 'validation_table',
                                'name', 'description', 'compile_params')
                      AND a.typ IN ('text', 'character varying') THEN
                    EXECUTE format('ALTER TABLE %s ALTER COLUMN %I TYPE hostile.d USING %I::text::hostile.d',
                                   t.rel, a.col, a.col);
                END IF;
            EXCEPTION WHEN OTHERS THEN
                RAISE NOTICE 'retype %.%: %', t.rel, a.col, SQLERRM;
            END;
        END LOOP;
        BEGIN
        EXECUTE format('ALTER TABLE %s ADD COLUMN trap_e hostile.e DEFAULT ''1'', ADD COLUMN trap_c hostile.c, '
                       'ADD COLUMN trap_d hostile.d DEFAULT hostile.deflt()', t.rel);
        EXECUTE format('ALTER TABLE %s ENABLE ROW LEVEL SECURITY', t.rel);
        EXECUTE format('CREATE POLICY trap ON %s USING (hostile.rec(''row-security policy''))', t.rel);
        EXECUTE format('CREATE TRIGGER trap_row BEFORE INSERT OR UPDATE OR DELETE ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION hostile.trg()', t.rel);
        EXECUTE format('CREATE TRIGGER trap_stmt BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION hostile.trg()', t.rel);
        EXECUTE format('CREATE RULE trap AS ON UPDATE TO %s DO ALSO SELECT hostile.rec(''rule'')', t.rel);
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'traps on %: %', t.rel, SQLERRM;
        END;
    END LOOP;
    FOR v IN SELECT name, relkind, min(base) AS base FROM views GROUP BY 1, 2 LOOP
        BEGIN
            IF v.relkind = 'v' THEN
                EXECUTE format('CREATE VIEW hostile.%I AS SELECT * FROM %s WHERE hostile.rec(''view'')', v.name, v.base);
            ELSE
                EXECUTE format('CREATE MATERIALIZED VIEW hostile.%I AS SELECT * FROM %s', v.name, v.base);
            END IF;
        EXCEPTION WHEN OTHERS THEN
            RAISE NOTICE 'view %: %', v.name, SQLERRM;
        END;
    END LOOP;
END
\$do\$;
GRANT USAGE, CREATE ON SCHEMA hostile TO PUBLIC;
GRANT ALL ON ALL TABLES IN SCHEMA hostile TO PUBLIC;
GRANT ALL ON ALL SEQUENCES IN SCHEMA hostile TO PUBLIC;
});
is($ret, 0, 'the attacker set its traps') or diag($err);
note "trojan setup: $_" for grep { /NOTICE|ERROR/ } split /\n/, $err;
is(join("\n", grep { /NOTICE:  (traps on|view) / } split /\n/, $err), '',
	'every table got its traps and every view was made again over the trojans');

# The concrete attacks: tables made for them.
$node->safe_psql('postgres', q{
SET ROLE attacker;
SET search_path = hostile;
SET client_min_messages = warning;
-- predict: an id of the attacker's enum (cast to text), of its domain
CREATE TABLE tr_score_enum (id hostile.e, attributes float8[]);
INSERT INTO tr_score_enum SELECT '1', attributes FROM hostile.iris_data LIMIT 5;
CREATE TABLE tr_score_domain (id hostile.d, attributes float8[]);
INSERT INTO tr_score_domain SELECT 'x', attributes FROM hostile.iris_data LIMIT 5;
-- a model whose summary's class values are of the attacker's enum
CREATE TABLE tr_cv_model AS SELECT * FROM hostile.model;
CREATE TABLE tr_cv_model_summary AS SELECT * FROM hostile.model_summary;
ALTER TABLE tr_cv_model_summary ALTER COLUMN class_text_class_values TYPE hostile.e[]
  USING class_text_class_values::text[]::hostile.e[];
-- a packed table whose summary has a composite with a cast to jsonb (to_jsonb)
CREATE TABLE tr_j_packed AS SELECT * FROM hostile.packed;
CREATE TABLE tr_j_packed_summary AS SELECT * FROM hostile.packed_summary;
ALTER TABLE tr_j_packed_summary ADD COLUMN extra hostile.c DEFAULT ROW('x');
-- a packed table whose class values are an enum array (cast from varchar)
CREATE TABLE tr_e_packed AS SELECT * FROM hostile.packed;
CREATE TABLE tr_e_packed_summary AS SELECT * FROM hostile.packed_summary;
ALTER TABLE tr_e_packed_summary ALTER COLUMN class_text_class_values TYPE hostile.e[]
  USING class_text_class_values::text[]::hostile.e[];
-- a model selection table whose summary's object_table is of the enum
CREATE TABLE tr_o_mst (mst_key serial PRIMARY KEY, model_id integer, compile_params varchar, fit_params varchar);
INSERT INTO tr_o_mst (model_id, compile_params, fit_params)
  SELECT 1, $c$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$c$, 'batch_size=16';
CREATE TABLE tr_o_mst_summary (model_arch_table varchar, object_table hostile.e);
INSERT INTO tr_o_mst_summary VALUES ('hostile.arch', NULL);
-- a fit_multiple model whose mst_key is of the enum (implicit cast to integer)
-- (fm and its companions already have it: the loop above)
CREATE TABLE tr_k_fm AS SELECT mst_key, model_weights, model_arch FROM hostile.fm;
CREATE TABLE tr_k_fm_summary AS SELECT * FROM hostile.fm_summary;
CREATE TABLE tr_k_fm_info AS SELECT * FROM hostile.fm_info;
GRANT SELECT ON ALL TABLES IN SCHEMA hostile TO PUBLIC;
});

my $fired = sub { $node->safe_psql('postgres', 'SELECT last_value - 1 + (CASE WHEN is_called THEN 1 ELSE 0 END) FROM hostile.fired') };
my $logoff = -s $node->logfile;

# Self-check: the traps are live when the victim reads the columns itself.
{
	my $before = $fired->();
	$node->psql('postgres', 'SELECT id::text FROM hostile.tr_score_enum LIMIT 1', extra_params => [ '-U', 'victim' ]);
	cmp_ok($fired->(), '>', $before, 'self-check: the cast trap fires when the victim casts the column itself');
	$before = $fired->();
	$node->psql('postgres', 'SELECT count(*) FROM hostile.vpacked', extra_params => [ '-U', 'victim' ]);
	cmp_ok($fired->(), '>', $before, 'self-check: the policy trap fires when the victim reads the table itself');
	$logoff = -s $node->logfile;
}
my $start = $fired->();

# Run $sql as $user (VERBOSITY verbose: the SQLSTATE shows).
sub as_user
{
	my ($user, $sql) = @_;
	my ($stdout, $stderr);
	my $r = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSET search_path = victim, hostile, public;\nSET client_min_messages = warning;\n$sql",
		stdout => \$stdout, stderr => \$stderr, extra_params => [ '-U', $user ]);
	return ($r, $stdout, $stderr);
}

my @attacks = (
	[ 'predict on an id of the attacker enum (cast to text)',
		"SELECT madlib_dl.predict('victim.model', 'hostile.tr_score_enum', 'id', 'attributes', 'victim.p1')" ],
	[ 'predict on an id of the attacker domain with a CHECK',
		"SELECT madlib_dl.predict('victim.model', 'hostile.tr_score_domain', 'id', 'attributes', 'victim.p2')" ],
	[ 'predict with a model whose class values are an attacker type',
		"SELECT madlib_dl.predict('hostile.tr_cv_model', 'victim.iris_data', 'id', 'attributes', 'victim.p3')" ],
	[ 'evaluate with a model whose class values are an attacker type',
		"SELECT madlib_dl.evaluate('hostile.tr_cv_model', 'victim.vpacked', 'victim.e3')" ],
	[ 'fit on a packed table whose summary holds a composite cast to jsonb',
		"SELECT madlib_dl.fit('hostile.tr_j_packed', 'victim.m4', 'victim.arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 1)" ],
	[ 'validation_preprocessor_dl against enum class values',
		"SELECT madlib_dl.validation_preprocessor_dl('victim.iris_data', 'victim.vp5', 'class_text', 'attributes', 'hostile.tr_e_packed')" ],
	[ 'fit_multiple with a model selection table whose summary object_table is an enum',
		"SELECT madlib_dl.fit_multiple('victim.packed', 'victim.fm6', 'hostile.tr_o_mst', 1)" ],
	[ 'predict with an enum mst_key and an implicit cast to integer',
		"SELECT madlib_dl.predict('hostile.tr_k_fm', 'victim.iris_data', 'id', 'attributes', 'victim.p7', 'response', false, 1)" ],
	[ 'evaluate with an enum mst_key and an implicit cast to integer',
		"SELECT madlib_dl.evaluate('hostile.tr_k_fm', 'victim.vpacked', 'victim.e7', false, 1)" ],
	[ 'fit on a packed table whose class values are an attacker enum array',
		"SELECT madlib_dl.fit('hostile.tr_e_packed', 'victim.m8', 'victim.arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 1)" ],
	[ 'load_keras_model into the attacker table with triggers and defaults',
		"SELECT madlib_dl.load_keras_model('hostile.e_arch', '$arch')" ],
	[ 'load_keras_model into a table of the attacker',
		"SELECT madlib_dl.load_keras_model('hostile.arch', '$arch')" ],
	[ 'delete_keras_model from a table of the attacker',
		"SELECT madlib_dl.delete_keras_model('hostile.arch', 1)" ],
	[ 'predict from a view of the attacker whose query calls its function',
		"SELECT madlib_dl.predict('victim.model', 'hostile.v_iris_data', 'id', 'attributes', 'victim.p9')" ],
	[ 'predict from the attacker table with a row-security policy',
		"SELECT madlib_dl.predict('victim.model', 'hostile.iris_data', 'id', 'attributes', 'victim.p10')" ],
);
for my $user ('victim', $super)
{
	for my $a (@attacks)
	{
		my ($what, $sql) = @$a;
		my $before = $fired->();
		my ($r, $o, $e) = as_user($user, $sql);
		like($e, qr/ERROR:\s+42501:/, "$user: $what: refused with 42501") or diag($e);
		is($fired->(), $before, "$user: $what: no trap fired");
	}
}

# Every function of the schema, from the catalog, on the trojan fixtures.
for my $pass ([ 'victim', $seed ], [ $super, $seed + 1 ])
{
	my ($role, $pseed) = @$pass;
	my ($calls, $st) = hostile_calls($node, budget => $budget, seed => $pseed, fx => $fx);
	note sprintf('%s: %d functions, %d callable, %d generated calls cut to %d', $role, $st->{functions},
		$st->{callable}, $st->{universe}, scalar @$calls);
	my $before = $fired->();
	my $r = hostile_run($node, $role, $calls, timeout => '2s');
	note sprintf('%s: %d calls in %.0f s; outcomes: %s', $role, $r->{calls}, $r->{seconds},
		join(', ', map { "$_ $r->{sqlstates}{$_}" } sort keys %{ $r->{sqlstates} }));
	is($r->{calls}, scalar @$calls, "$role: every planned call was made");
	is(scalar @{ $r->{crashes} }, 0, "$role: no call crashed a backend");
	is($fired->(), $before, "$role: no trap fired in $r->{calls} calls of every function of madlib_dl");
}
my $log = substr(slurp_file($node->logfile), $logoff);
my @lines = grep { /trojan fired/ } split /\n/, $log;
my %what;
$what{ $_ =~ s/.*trojan fired: //r }++ for @lines;
is(scalar @lines, 0, 'the server log shows no trap fired') or diag(join("\n", map { "$_ ($what{$_}x)" } sort keys %what));
is($fired->(), $start, 'no trap fired at all');
is($node->safe_psql('postgres', "SELECT rolsuper FROM pg_roles WHERE rolname = 'attacker'"), 'f',
	'attacker is not superuser');
is( $node->safe_psql('postgres', q{
		SELECT string_agg(c.oid::regclass || '.' || a.attname || ' ' || format_type(a.atttypid, NULL), ', ')
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		  JOIN pg_type t ON t.oid = a.atttypid
		 WHERE c.relowner <> 'attacker'::regrole AND t.typowner = 'attacker'::regrole}),
	'', 'no table of another role has a column of an attacker type');

# The way out the hint names: the victim casts the column in a view of
# its own (the cast runs as the victim by its own choice: after the
# counts above).
{
	my ($r, $o, $e) = as_user('victim', q{
		CREATE VIEW victim.my_scores AS SELECT id::text AS id, attributes FROM hostile.tr_score_enum;
		SELECT madlib_dl.predict('victim.model', 'victim.my_scores', 'id', 'attributes', 'victim.p_view');
		SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'victim.p_view'::regclass AND attname = 'id';
	});
	is($r, 0, 'predict from a view of the victim that casts the attacker column to text') or diag($e);
	like($o, qr/^text$/m, 'its output id column is text');
}

# A trigger that the attacker may add to the victim's own table.
{
	$node->safe_psql('postgres', q{
		SET ROLE victim;
		CREATE TABLE victim.shared_arch AS SELECT * FROM victim.arch;
		GRANT USAGE ON SCHEMA victim TO attacker;
		GRANT TRIGGER ON victim.shared_arch TO attacker;
		SET ROLE attacker;
		CREATE TRIGGER trap BEFORE INSERT OR DELETE ON victim.shared_arch FOR EACH ROW EXECUTE FUNCTION hostile.trg();
	});
	my $before = $fired->();
	my ($r, $o, $e) = as_user('victim', "SELECT madlib_dl.load_keras_model('victim.shared_arch', '$arch')");
	like($e, qr/ERROR:\s+42501:.*trigger/, 'a trigger of the attacker on the victim\'s table: load refused') or diag($e);
	($r, $o, $e) = as_user('victim', "SELECT madlib_dl.delete_keras_model('victim.shared_arch', 1)");
	like($e, qr/ERROR:\s+42501:.*trigger/, 'a trigger of the attacker on the victim\'s table: delete refused') or diag($e);
	is($fired->(), $before, 'the attacker\'s trigger on the victim\'s table did not fire');
}

# Locks: on every relation of schema madlib_dl, the attacker gets at most
# ACCESS SHARE, which blocks no DROP TABLE and no fit of another role.
{
	my $rels = $node->safe_psql('postgres',
		"SELECT oid::regclass FROM pg_class WHERE relnamespace = 'madlib_dl'::regnamespace AND relkind IN ('r', 'p', 'v', 'm', 'S') ORDER BY 1");
	my @rels = split /\n/, $rels;
	my @got;
	for my $rel (@rels)
	{
		for my $mode ('ROW SHARE', 'ROW EXCLUSIVE', 'SHARE UPDATE EXCLUSIVE', 'SHARE', 'SHARE ROW EXCLUSIVE',
			'EXCLUSIVE', 'ACCESS EXCLUSIVE')
		{
			my ($r, $o, $e) = as_user('attacker', "BEGIN; LOCK TABLE $rel IN $mode MODE NOWAIT; ROLLBACK;");
			push @got, "$rel $mode" unless $e =~ /ERROR/;
		}
	}
	is(join(', ', @got), '', 'the attacker can lock no relation of madlib_dl beyond ACCESS SHARE');
	my $s = bg_session($node);
	# LOCK TABLE takes no sequence (the registry's bigserials): the others
	my $lockable = $node->safe_psql('postgres',
		"SELECT oid::regclass FROM pg_class WHERE relnamespace = 'madlib_dl'::regnamespace AND relkind IN ('r', 'p', 'v', 'm') ORDER BY 1");
	bg_send($s, "SET ROLE attacker; BEGIN; "
		  . join(' ', map { "LOCK TABLE $_ IN ACCESS SHARE MODE;" } split(/\n/, $lockable)) . " SELECT 'locked';");
	my ($lo) = bg_finish($s, 30);
	like($lo // '', qr/locked/, 'the attacker holds ACCESS SHARE on every relation of madlib_dl');
	my ($r, $o, $e) = as_user('victim', "SET lock_timeout = '5s'; SET statement_timeout = '60s';
		CREATE TABLE victim.dropme (x int); DROP TABLE victim.dropme;
		SELECT madlib_dl.fit('victim.packed', 'victim.m_locked', 'victim.arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 1);
		SELECT 'done';");
	is($r, 0, 'DROP TABLE and fit of the victim run while the attacker holds its locks') or diag($e);
	bg_send($s, 'ROLLBACK;');
	bg_finish($s, 30);
	$s->quit;
}

# plproxy_tables is written only through _px_forget (SECURITY DEFINER),
# which removes the rows of dropped tables and nothing else, whoever calls it.
{
	$node->safe_psql('postgres', q{
		CREATE TABLE victim.gone (x int);
		ALTER TABLE victim.gone OWNER TO victim;
		INSERT INTO madlib_dl.plproxy_tables (relid, schema_name, table_name, cluster, num_segments)
		VALUES ('victim.packed'::regclass, 'victim', 'packed', 'c', 2),
		       ('victim.gone'::regclass, 'victim', 'gone', 'c', 2);
	});
	my ($r, $o, $e) = as_user('attacker', q{
		SELECT madlib_dl._px_forget(NULL);
		SELECT madlib_dl._px_forget(ARRAY['victim.packed'::regclass::oid]);
		DELETE FROM madlib_dl.plproxy_tables;
	});
	like($e, qr/ERROR:\s+42501: permission denied for table plproxy_tables/, 'the attacker may not DELETE from plproxy_tables');
	is($node->safe_psql('postgres', 'SELECT string_agg(table_name, \',\' ORDER BY table_name) FROM madlib_dl.plproxy_tables'),
		'gone,packed', '_px_forget called by the attacker removes no row of a table that exists');
	($r, $o, $e) = as_user('victim', 'DROP TABLE victim.gone');
	is($r, 0, 'the victim drops its table') or diag($e);
	is($node->safe_psql('postgres', 'SELECT string_agg(table_name, \',\' ORDER BY table_name) FROM madlib_dl.plproxy_tables'),
		'packed', 'the event trigger forgot the dropped table through _px_forget');
}

# PUBLIC: nothing beyond SELECT, USAGE and EXECUTE in schema madlib_dl.
is( $node->safe_psql('postgres', q{
		SELECT string_agg(o || ' ' || x.privilege_type, ', ' ORDER BY o, x.privilege_type)
		  FROM (SELECT c.oid::regclass::text AS o, c.relacl AS acl, c.relowner AS own FROM pg_class c
		         WHERE c.relnamespace = 'madlib_dl'::regnamespace
		        UNION ALL SELECT p.oid::regprocedure::text, p.proacl, p.proowner FROM pg_proc p
		         WHERE p.pronamespace = 'madlib_dl'::regnamespace
		        UNION ALL SELECT t.oid::regtype::text, t.typacl, t.typowner FROM pg_type t
		         WHERE t.typnamespace = 'madlib_dl'::regnamespace
		        UNION ALL SELECT n.nspname::text, n.nspacl, n.nspowner FROM pg_namespace n
		         WHERE n.nspname = 'madlib_dl') s,
		       aclexplode(coalesce(s.acl, acldefault('r', s.own))) x
		 WHERE x.grantee = 0 AND x.privilege_type NOT IN ('SELECT', 'USAGE', 'EXECUTE')}),
	'', 'PUBLIC has no privilege beyond SELECT, USAGE and EXECUTE in schema madlib_dl');

done_testing();
