#-------------------------------------------------------------------------
#
# 050_upgrade.pl
#	  The whole upgrade from madlib_dl 0.1.0 (commit 5bff818) to this tree
#	  (docs/releasing.md):
#	  1. a private copy of the PostgreSQL installation in the test's
#	     directory (bin, lib, share and include of pg_config: PostgreSQL 15
#	     has no extension_control_path, and the test may not write the
#	     system's directories); 0.1.0, from `git archive` of that commit,
#	     built and installed there; its install script must be the one kept
#	     in src/sql/releases/madlib_dl--0.1.0.sql;
#	  2. preprocessing, architectures, fit and fit_multiple under 0.1.0,
#	     and their predictions and evaluation;
#	  3. this tree installed into the copy and the server restarted: the
#	     0.1.0 SQL now calls the new library.  Every C symbol of the 0.1.0
#	     script is exported by it, and the 0.1.0 functions either work or
#	     fail cleanly (55000, hint ALTER EXTENSION madlib_dl UPDATE); the
#	     server stays up; the trained models predict as before (0.1.0's
#	     predict on the new library); the hostile calls of 030_hostile_calls over
#	     the 0.1.0 catalog crash nothing ($MADLIB_DL_UPGRADE_HOSTILE_CALLS
#	     calls, default 6000);
#	  4. ALTER EXTENSION madlib_dl UPDATE; the old model tables predict
#	     exactly as before, evaluate to the same loss and warm start (fit
#	     and fit_multiple);
#	  5. the catalog after the update equals the catalog of a fresh
#	     CREATE EXTENSION: every member function (signature, result,
#	     language, volatility, strictness, parallel safety, security,
#	     settings, cost, body, library symbol, aggregate parts, owner,
#	     grants), type, table, view, policy, event trigger, comment
#	     (grants compared as they act: no ACL is the default ACL).
#
#	  The git history is needed (the commit of 0.1.0): the test runs `git
#	  archive` in the repository of this tree, or in $MADLIB_DL_GIT_DIR
#	  (scripts/test.sh sets it for its copy of the tree, which has no
#	  .git).  Without it the test fails; it never skips.
#
# IDENTIFICATION
#	  test/t/050_upgrade.pl
#
#-------------------------------------------------------------------------
use strict;
use warnings;

use Cwd qw(abs_path);
use File::Path qw(make_path);
use FindBin;
use lib "$FindBin::RealBin/../perl";
use MadlibDLHostile;
use MadlibDLTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $OLD_VERSION = '0.1.0';
my $OLD_COMMIT = '5bff818bffe5ee2a2f9475c84d41144cab1e6f15';
my $root = abs_path("$FindBin::RealBin/../..");
my $tmp = PostgreSQL::Test::Utils::tempdir('upgrade');
my $hostile_budget = $ENV{MADLIB_DL_UPGRADE_HOSTILE_CALLS} // 6000;
my $jobs = $ENV{MADLIB_DL_UPGRADE_JOBS} // (`nproc 2>/dev/null` =~ /(\d+)/ ? $1 : 2);
my $t0 = time;

# --- the sources of 0.1.0 ----------------------------------------------
my $git_dir = $ENV{MADLIB_DL_GIT_DIR};
if (!defined $git_dir)
{
	my $found = `git -C '$root' rev-parse --absolute-git-dir 2>/dev/null`;
	chomp $found;
	$git_dir = $found if $? == 0 && $found ne '';
}
die "050_upgrade: the git history of madlib_dl is needed (commit $OLD_COMMIT of $OLD_VERSION): "
  . "run the test in a git checkout with its full history, or set MADLIB_DL_GIT_DIR to its .git"
  unless defined $git_dir && -d $git_dir;
my $old_src = "$tmp/madlib_dl-$OLD_VERSION";
make_path($old_src);
# safe.directory: the repository may belong to another user (scripts/test.sh
# runs the TAP tests as madlib_dl_test on root's checkout).
my ($out, $err);
run_log(['git', '-c', 'safe.directory=*', "--git-dir=$git_dir", 'archive', '--format=tar',
		'-o', "$tmp/old.tar", $OLD_COMMIT])
  or die "050_upgrade: git archive $OLD_COMMIT failed in $git_dir (a shallow clone? fetch the full history)";
run_log(['tar', '-xf', "$tmp/old.tar", '-C', $old_src]) or die "050_upgrade: tar failed";

# --- a private copy of the PostgreSQL installation ----------------------
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my %dir;
for my $what (qw(bindir pkglibdir sharedir includedir-server))
{
	my $d = `$pg_config --$what`;
	chomp $d;
	die "050_upgrade: $pg_config --$what failed" if $? != 0 || $d eq '';
	$dir{$what} = $d;
}
# The copy mirrors the absolute paths under $inst_root: pg_config and the
# server find their directories relative to their own (as a relocated
# installation), and PGXS installs into the copy.
my $inst_root = "$tmp/pg";
for my $what (qw(bindir pkglibdir sharedir includedir-server))
{
	my $src = $dir{$what};
	my $dst = "$inst_root$src";
	next if -d $dst;
	make_path($dst);
	run_log(['cp', '-a', "$src/.", $dst]) or die "050_upgrade: copying $src failed";
}
my $copy_pg_config = "$inst_root$dir{bindir}/pg_config";
my $copy_lib = "$inst_root$dir{pkglibdir}";
my $copy_ext = "$inst_root$dir{sharedir}/extension";
unlink glob("$copy_ext/madlib_dl*"), "$copy_lib/madlib_dl.so";
is(`$copy_pg_config --sharedir` =~ s/\s+$//r, "$inst_root$dir{sharedir}",
	'the copy of the installation is relocated (its pg_config names its own directories)');

# --- 0.1.0, built and installed into the copy ----------------------------
my $tb = time;
run_log(['make', '-C', $old_src, "-j$jobs", "PG_CONFIG=$copy_pg_config"])
  or die "050_upgrade: building $OLD_VERSION failed (see the log)";
run_log(['make', '-C', $old_src, 'install', "PG_CONFIG=$copy_pg_config"])
  or die "050_upgrade: installing $OLD_VERSION failed";
note sprintf('0.1.0 built and installed in %.0f s', time - $tb);
is(slurp_file("$copy_ext/madlib_dl--$OLD_VERSION.sql"), slurp_file("$root/src/sql/releases/madlib_dl--$OLD_VERSION.sql"),
	"src/sql/releases/madlib_dl--$OLD_VERSION.sql is the install script commit $OLD_COMMIT builds");

my $node = PostgreSQL::Test::Cluster->new('upgrade',
	install_path => abs_path("$inst_root$dir{bindir}/.."));
$node->init;
$node->append_conf('postgresql.conf',
	"max_worker_processes = 16\nmax_parallel_workers = 8\nlog_min_messages = warning\n"
	  . "restart_after_crash = on\n");
$node->start;
$node->safe_psql('postgres', "CREATE EXTENSION madlib_dl VERSION '$OLD_VERSION'");
is($node->safe_psql('postgres', 'SELECT madlib_dl.version()'), "madlib_dl $OLD_VERSION",
	"the node runs madlib_dl $OLD_VERSION");

# --- training under 0.1.0 ------------------------------------------------
# The hostile calls' fixtures (test/perl/MadlibDLHostile.pm: its own role
# and schema, tables trained by fit and fit_multiple), made by 0.1.0 first.
my $fx = hostile_fixtures($node);
$node->safe_psql('postgres', "ALTER ROLE hostile SET statement_timeout = '2s'");
load_iris($node);
my $arch = iris_arch();
my $fitp = 'batch_size=16, epochs=1';
$node->safe_psql('postgres', qq{
	CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
	CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
	SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_val', 'class_text', 'attributes',
		'iris_packed');
	SELECT madlib_dl.load_keras_model('arch', '$arch');
	SELECT madlib_dl.madlib_keras_fit('iris_packed', 'm_fit', 'arch', 1, \$\$$COMPILE\$\$, '$fitp', 3,
		validation_table => 'iris_val');
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
		ARRAY[\$\$$COMPILE\$\$, \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.05)', metrics=['accuracy']\$\$],
		ARRAY['$fitp']);
	SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'm_multi', 'mst', 2);
});

# The predictions of every model, exactly (float text round-trips), and
# the evaluation losses.
sub predictions
{
	my ($tag) = @_;
	my $q = '';
	$node->safe_psql('postgres', qq{
		DROP TABLE IF EXISTS p_fit_$tag, p_m1_$tag, p_m2_$tag;
		SELECT madlib_dl.madlib_keras_predict('m_fit', 'iris_test', 'id', 'attributes', 'p_fit_$tag', 'prob');
		SELECT madlib_dl.madlib_keras_predict('m_multi', 'iris_test', 'id', 'attributes', 'p_m1_$tag', 'prob',
			mst_key => 1);
		SELECT madlib_dl.madlib_keras_predict('m_multi', 'iris_test', 'id', 'attributes', 'p_m2_$tag', 'prob',
			mst_key => 2);
	});
	return $node->safe_psql('postgres', qq{
		SELECT string_agg(format('%s %s %s %s %s', t, id, class_value, prob::float8, rank), E'\\n'
		                  ORDER BY t, id, rank)
		  FROM (SELECT 'fit' t, * FROM p_fit_$tag UNION ALL SELECT 'm1', * FROM p_m1_$tag
		        UNION ALL SELECT 'm2', * FROM p_m2_$tag) q});
}

sub evaluation
{
	my ($tag) = @_;
	$node->safe_psql('postgres', qq{
		DROP TABLE IF EXISTS e_fit_$tag, e_m2_$tag;
		SELECT madlib_dl.madlib_keras_evaluate('m_fit', 'iris_val', 'e_fit_$tag');
		SELECT madlib_dl.madlib_keras_evaluate('m_multi', 'iris_val', 'e_m2_$tag', mst_key => 2);
	});
	return $node->safe_psql('postgres',
		"SELECT (SELECT loss::float8 || ' ' || metric::float8 FROM e_fit_$tag) || ' / ' || "
		  . "(SELECT loss::float8 || ' ' || metric::float8 FROM e_m2_$tag)");
}

my $pred_before = predictions('before');
my $eval_before = evaluation('before');
like($pred_before, qr/^fit \d+ Iris-\w+ [0-9.e-]+ 1\n/, "0.1.0 predicts (" . (() = $pred_before =~ /\n/g) . ' rows)');
my $weights_before = $node->safe_psql('postgres', 'SELECT md5(model_weights) FROM m_fit');

# --- the new library under the 0.1.0 SQL ---------------------------------
run_log(['make', '-C', $root, "-j$jobs", 'install', "PG_CONFIG=$copy_pg_config"])
  or die '050_upgrade: installing this tree into the copy failed';
$node->restart;
is($node->safe_psql('postgres', 'SELECT extversion FROM pg_extension WHERE extname = \'madlib_dl\''),
	$OLD_VERSION, 'after the package upgrade, the catalog is still 0.1.0');

# Every C symbol the 0.1.0 script names is exported by the new library.
my %old_syms = map { $_ => 1 } (slurp_file("$root/src/sql/releases/madlib_dl--$OLD_VERSION.sql") =~ /'(madlib_dl_\w+)'/g);
my $nm = `nm -D --defined-only '$copy_lib/madlib_dl.so'`;
die "050_upgrade: nm failed" if $? != 0;
my %exported = map { (split ' ')[-1] => 1 } split /\n/, $nm;
my @missing = grep { !$exported{$_} } sort keys %old_syms;
ok(keys(%old_syms) > 40, scalar(keys %old_syms) . " C symbols named by the $OLD_VERSION script");
is(join(', ', @missing), '', "the new library exports every C symbol of ${OLD_VERSION}'s SQL");

# The 0.1.0 functions with the new library: they work, or fail cleanly
# with 55000 and the hint to update; never a crash.
my @old_calls = (
	[ 'version', 'SELECT madlib_dl.version()', 'ok' ],
	[ 'load_keras_model', "SELECT madlib_dl.load_keras_model('arch', '$arch')", 'ok' ],
	[ 'keras_model_summary',
		'SELECT count(*) FROM madlib_dl.keras_model_summary((SELECT model_arch FROM arch WHERE model_id = 1))', 'ok' ],
	[ 'training_preprocessor_dl',
		"SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_packed2', 'class_text', 'attributes')", 'ok' ],
	[ 'validation_preprocessor_dl',
		"SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_val2', 'class_text', 'attributes', 'iris_packed')",
		'ok' ],
	[ 'fit', "SELECT madlib_dl.madlib_keras_fit('iris_packed', 'm_old', 'arch', 1, \$\$$COMPILE\$\$, '$fitp', 1)",
		'update' ],
	[ 'fit warm start', "SELECT madlib_dl.madlib_keras_fit('iris_packed', 'm_fit', 'arch', 1, \$\$$COMPILE\$\$, "
		  . "'$fitp', 1, warm_start => true)", 'update' ],
	[ 'fit_multiple', "SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'm_old2', 'mst', 1)", 'update' ],
	[ 'predict', "SELECT madlib_dl.madlib_keras_predict('m_fit', 'iris_test', 'id', 'attributes', 'p_old')", 'ok' ],
	[ 'evaluate', "SELECT madlib_dl.madlib_keras_evaluate('m_fit', 'iris_val', 'e_old')", 'update' ],
	[ 'gpu_configuration', "SELECT madlib_dl.gpu_configuration('g_old')", 'ok' ],
	[ 'fit_progress', 'SELECT count(*) >= 0 FROM madlib_dl.fit_progress', 'ok' ],
	[ 'weights_to_array', 'SELECT cardinality(madlib_dl.weights_to_array(model_weights)) FROM m_fit', 'ok' ],
	# The C functions whose arguments changed since 0.1.0, called directly
	# as 0.1.0 declared them (src/pg/api/compat.c).
	[ '_fit_run', "SELECT madlib_dl._fit_run('iris_packed', 'attributes', 'class_text', NULL, NULL, NULL, "
		  . "(SELECT model_arch FROM arch WHERE model_id = 1), NULL, \$\$$COMPILE\$\$, 'batch_size=16', 1, 1, 1)",
		'update' ],
	[ '_fit_multiple_run', "SELECT * FROM madlib_dl._fit_multiple_run('iris_packed', 'attributes', 'class_text', "
		  . "NULL, NULL, NULL, ARRAY[1], ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = 1)], "
		  . "ARRAY[NULL::bytea], ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=16'], 1, 1, 1, 1)", 'update' ],
	[ '_progress_label', "SELECT madlib_dl._progress_label('public.m_x')", 'update' ],
	[ '_gpu_list', "SELECT count(*) >= 0 FROM madlib_dl._gpu_list('nvidia')", 'ok' ],
	[ '_gp_fit_segment', 'SELECT madlib_dl._gp_fit_segment(NULL::bytea, NULL::bytea, NULL::integer[], '
		  . 'NULL::integer[], NULL::bytea, NULL::json, NULL, NULL, 1, 0) FROM iris_packed WHERE false', 'update' ],
	[ '_gp_eval_segment', 'SELECT madlib_dl._gp_eval_segment(NULL::bytea, NULL::bytea, NULL::integer[], '
		  . 'NULL::integer[], NULL::bytea, NULL::json, NULL, NULL) FROM iris_packed WHERE false', 'update' ],
	[ '_predict_rows', "SELECT count(*) FROM madlib_dl._predict_rows((SELECT model_arch FROM m_fit), "
		  . "(SELECT model_weights FROM m_fit), 'iris_test', 'id', 'attributes', 1.0, 16)", 'ok' ],
);
for my $c (@old_calls)
{
	my ($what, $sql, $expect) = @$c;
	my ($rc, $stdout, $stderr) = $node->psql('postgres', "BEGIN; $sql; ROLLBACK;");
	my $alive = $node->safe_psql('postgres', 'SELECT 1') eq '1';
	ok($alive && $stderr !~ /server closed the connection|terminated by signal/,
		"$OLD_VERSION $what with the new library: the server is up") or diag $stderr;
	if ($expect eq 'ok')
	{
		is($rc, 0, "$OLD_VERSION $what with the new library works") or diag $stderr;
	}
	else
	{
		like($stderr, qr/ERROR:  function madlib_dl\.\w+ was created by madlib_dl $OLD_VERSION.*\n.*\nHINT:  Run ALTER EXTENSION madlib_dl UPDATE\./,
			"$OLD_VERSION $what with the new library: asks for ALTER EXTENSION UPDATE");
	}
}
# Every function of the 0.1.0 catalog, called with hostile arguments as
# 030_hostile_calls does, with the new library: errors are fine, crashes,
# lost connections and hangs are not.
{
	my ($calls, $st) = hostile_calls($node, budget => $hostile_budget, seed => 20261201, fx => $fx);
	my $r = hostile_run($node, 'hostile', $calls, timeout => '2s', prologue => $fx->{temp_sql});
	note sprintf('hostile calls of the %s catalog: %d functions, %d calls in %.0f s; outcomes: %s', $OLD_VERSION,
		$st->{functions}, $r->{calls}, $r->{seconds},
		join(', ', map { "$_ $r->{sqlstates}{$_}" } sort keys %{ $r->{sqlstates} }));
	is($r->{calls}, scalar @$calls, "hostile calls of the $OLD_VERSION catalog: every planned call was made");
	my $list = join '', map { "$_->{fn}: $_->{label}\n    $_->{sql}\n" }
	  @{ $r->{crashes} }, @{ $r->{lost} }, @{ $r->{hangs} };
	is($list, '', "hostile calls of the $OLD_VERSION catalog with the new library: no crash, lost connection or hang");
}
is($node->safe_psql('postgres', 'SELECT md5(model_weights) FROM m_fit'), $weights_before,
	'the failed 0.1.0 calls left the model alone');
# Trained models keep predicting before the update: 0.1.0's predict runs
# on the new library (src/pg/api/compat_predict.c), the same bytes.
is(predictions('between'), $pred_before,
	"${OLD_VERSION}'s predict with the new library, before the update: the same predictions");
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC/, 'no backend crashed under the 0.1.0 SQL');

# --- ALTER EXTENSION UPDATE ----------------------------------------------
my $tu = time;
$node->safe_psql('postgres', 'ALTER EXTENSION madlib_dl UPDATE');
note sprintf('ALTER EXTENSION UPDATE in %.1f s', time - $tu);
is($node->safe_psql('postgres',
		"SELECT extversion || ' ' || madlib_dl.version() FROM pg_extension WHERE extname = 'madlib_dl'"),
	'0.2.0 madlib_dl 0.2.0', 'updated to 0.2.0');

is(predictions('after'), $pred_before, 'the 0.1.0 model tables predict exactly as before the update');
is(evaluation('after'), $eval_before, 'and evaluate to the same loss and metric');

# Warm start from the 0.1.0 tables.
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.madlib_keras_fit('iris_packed', 'm_fit', 'arch', 1, \$\$$COMPILE\$\$, '$fitp', 2,
		validation_table => 'iris_val', warm_start => true);
	SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'm_multi', 'mst', 2, warm_start => true);
});
isnt($node->safe_psql('postgres', 'SELECT md5(model_weights) FROM m_fit'), $weights_before,
	'fit warm-starts the 0.1.0 model');
is($node->safe_psql('postgres', 'SELECT madlib_version FROM m_fit_summary'), 'madlib_dl 0.2.0',
	'its summary now names 0.2.0');
is($node->safe_psql('postgres', 'SELECT count(*) FROM m_multi'), '2', 'fit_multiple warm-starts the 0.1.0 models');

# --- the catalog: upgraded = fresh ---------------------------------------
my $catalog_sql = <<'SQL';
WITH m AS (
  SELECT d.classid, d.objid FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
   WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e' AND e.extname = 'madlib_dl')
SELECT line FROM (
 SELECT 'function ' || p.oid::regprocedure::text || ' kind=' || p.prokind::text || ' returns ' ||
        pg_get_function_result(p.oid) || ' args ' || pg_get_function_arguments(p.oid) ||
        ' lang=' || l.lanname || ' vol=' || p.provolatile::text || ' strict=' || p.proisstrict ||
        ' par=' || p.proparallel::text || ' secdef=' || p.prosecdef || ' leakproof=' || p.proleakproof ||
        ' cost=' || p.procost || ' rows=' || p.prorows ||
        ' config=' || coalesce(p.proconfig::text, '-') || ' acl=' || coalesce(p.proacl, acldefault('f', p.proowner))::text ||
        ' owner=' || pg_get_userbyid(p.proowner) ||
        ' src=' || md5(coalesce(p.prosrc, '')) || ' bin=' || coalesce(p.probin, '-') ||
        coalesce(' agg=' || (SELECT concat_ws(',', a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn,
                  a.aggdeserialfn, a.aggtranstype::regtype, a.agginitval, a.aggfinalextra, a.aggfinalmodify::text)
              FROM pg_aggregate a WHERE a.aggfnoid = p.oid), '') ||
        ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-') AS line
   FROM m JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
   JOIN pg_language l ON l.oid = p.prolang
 UNION ALL
 SELECT 'type ' || format_type(t.oid, NULL) || ' ' || t.typtype::text || ' acl=' || coalesce(t.typacl, acldefault('T', t.typowner))::text ||
        ' (' || coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', '
                                            ORDER BY a.attnum)
           FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' ||
        ' comment=' || coalesce(obj_description(t.oid, 'pg_type'), '-')
   FROM m JOIN pg_type t ON m.classid = 'pg_type'::regclass AND t.oid = m.objid
 UNION ALL
 SELECT 'relation ' || c.oid::regclass::text || ' ' || c.relkind::text || ' acl=' || coalesce(c.relacl, acldefault('r', c.relowner))::text ||
        ' rls=' || c.relrowsecurity || ' (' ||
        coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' notnull=' ||
                                    a.attnotnull || coalesce(' default ' || pg_get_expr(ad.adbin, ad.adrelid), ''),
                                    ', ' ORDER BY a.attnum)
           FROM pg_attribute a LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
          WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') || ')' ||
        coalesce(' view=' || regexp_replace(pg_get_viewdef(c.oid), '\s+', ' ', 'g'), '') ||
        coalesce(' constraints=' || (SELECT string_agg(k.conname || ':' || pg_get_constraintdef(k.oid), '; '
                                                       ORDER BY k.conname)
           FROM pg_constraint k WHERE k.conrelid = c.oid), '') ||
        coalesce(' indexes=' || (SELECT string_agg(pg_get_indexdef(i.indexrelid), '; ' ORDER BY 1)
           FROM pg_index i WHERE i.indrelid = c.oid), '') ||
        coalesce(' policies=' || (SELECT string_agg(po.polname || ':' || po.polcmd::text || ':' || po.polpermissive ||
                  ':' || coalesce(pg_get_expr(po.polqual, po.polrelid), '-') || ':' ||
                  coalesce(pg_get_expr(po.polwithcheck, po.polrelid), '-') || ':' || po.polroles::text, '; '
                  ORDER BY po.polname)
           FROM pg_policy po WHERE po.polrelid = c.oid), '') ||
        ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '-')
   FROM m JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
 UNION ALL
 SELECT 'event trigger ' || e.evtname || ' on ' || e.evtevent || ' ' || e.evtfoid::regprocedure::text ||
        ' tags=' || coalesce(e.evttags::text, '-') || ' enabled=' || e.evtenabled::text
   FROM m JOIN pg_event_trigger e ON m.classid = 'pg_event_trigger'::regclass AND e.oid = m.objid
 UNION ALL
 SELECT 'member of another kind: ' || m.classid::regclass::text || ' ' || m.objid FROM m
  WHERE m.classid NOT IN ('pg_proc'::regclass, 'pg_type'::regclass, 'pg_class'::regclass,
                          'pg_event_trigger'::regclass)
 UNION ALL
 SELECT 'schema ' || n.nspname || ' acl=' || coalesce(n.nspacl, acldefault('n', n.nspowner))::text || ' owner=' || pg_get_userbyid(n.nspowner)
   FROM pg_namespace n WHERE n.nspname = 'madlib_dl'
 UNION ALL
 SELECT 'extension ' || extversion || ' relocatable=' || extrelocatable || ' config=' ||
        coalesce(extconfig::regclass[]::text, '-') || ' owner=' || pg_get_userbyid(extowner)
   FROM pg_extension WHERE extname = 'madlib_dl'
) q ORDER BY line
SQL
# The hostile role's grant is the test's, not the extension's.
$node->safe_psql('postgres', 'REVOKE USAGE ON SCHEMA madlib_dl FROM hostile');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION madlib_dl');
$node->safe_psql('postgres', 'CREATE DATABASE updated_empty');
$node->safe_psql('updated_empty',
	"CREATE EXTENSION madlib_dl VERSION '$OLD_VERSION'; ALTER EXTENSION madlib_dl UPDATE");
my $fresh = $node->safe_psql('fresh', $catalog_sql);
my $n_members = () = $fresh =~ /\n/g;
ok($n_members > 200, "a fresh 0.2.0 install has $n_members catalog lines to compare");
for my $db ('postgres', 'updated_empty')
{
	my $updated = $node->safe_psql($db, $catalog_sql);
	my @f = split /\n/, $fresh;
	my @u = split /\n/, $updated;
	my %in_f = map { $_ => 1 } @f;
	my %in_u = map { $_ => 1 } @u;
	my @only_u = grep { !$in_f{$_} } @u;
	my @only_f = grep { !$in_u{$_} } @f;
	ok(!@only_u && !@only_f, "the catalog of $OLD_VERSION updated ($db) equals a fresh install")
	  or diag "only after the update:\n  " . join("\n  ", @only_u)
	  . "\nonly in the fresh install:\n  " . join("\n  ", @only_f);
}

$log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC/, 'no backend crashed');
note sprintf('050_upgrade took %.0f s', time - $t0);
$node->stop;
done_testing();
