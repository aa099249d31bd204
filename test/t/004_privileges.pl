#-------------------------------------------------------------------------
#
# 004_privileges.pl
#	  A non-superuser role, granted USAGE on schema madlib_dl, can use
#	  every function on tables it owns.  Through our functions it can
#	  neither read a table of another role it has no SELECT right on
#	  (42501, permission denied, nothing of the data in the message) nor
#	  write into that role's schema or tables.  Every function is SECURITY
#	  INVOKER, and every PL/pgSQL one has a pinned search_path.
#
# IDENTIFICATION
#	  test/t/004_privileges.pl
#
#-------------------------------------------------------------------------
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use MadlibDLTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = new_node('privileges');
my $arch = iris_arch();

# Two ordinary roles, each with its own schema; alice may look into bob's
# schema (USAGE) but has no right on any of his tables.
$node->safe_psql('postgres', q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	CREATE SCHEMA alice AUTHORIZATION alice;
	CREATE SCHEMA bob AUTHORIZATION bob;
	GRANT USAGE ON SCHEMA bob TO alice;
	GRANT USAGE ON SCHEMA madlib_dl TO alice, bob;
});

# Run $sql as $user; returns (exit code, stdout, stderr).  Errors show
# their SQLSTATE (VERBOSITY verbose).
sub as_user
{
	my ($user, $sql) = @_;
	my ($stdout, $stderr);
	my $ret = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSET search_path = $user;\nSET client_min_messages = warning;\n$sql",
		stdout => \$stdout, stderr => \$stderr,
		extra_params => [ '-U', $user ]);
	return ($ret, $stdout, $stderr);
}

my $cgrid = q{{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.01]}], 'metrics': ['accuracy']}};
my $fgrid = q{{'batch_size': [16], 'epochs': [1]}};
my $has_fm = $node->safe_psql('postgres',
	"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'madlib_keras_fit_multiple_model' "
	  . "AND pronamespace = 'madlib_dl'::regnamespace");

# The whole flow, as $user, on the user's own tables.
sub own_flow
{
	my ($user) = @_;
	load_iris($node, 'postgres', $user);    # iris_data in schema $user
	my %steps = (
		'load_keras_model' => "SELECT madlib_dl.load_keras_model('arch', '$arch')",
		'training_preprocessor_dl' =>
		  "CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
		   CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
		   SELECT madlib_dl.training_preprocessor_dl('iris_train', 'packed', 'class_text', 'attributes', NULL, 1.0, NULL, '2')",
		'validation_preprocessor_dl' =>
		  "SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'test_packed', 'class_text', 'attributes', 'packed')",
		'fit' =>
		  "SELECT madlib_dl.fit('packed', 'model', 'arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 3, FALSE, 'test_packed')",
		'fit (warm start)' =>
		  "SELECT madlib_dl.fit('packed', 'model', 'arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 2, FALSE, NULL, NULL, TRUE)",
		'evaluate' => "SELECT madlib_dl.evaluate('model', 'test_packed', 'eval')",
		'predict' => "SELECT madlib_dl.predict('model', 'iris_test', 'id', 'attributes', 'pred')",
		'predict_byom' =>
		  "SELECT madlib_dl.load_keras_model('arch', '$arch', (SELECT model_weights FROM model));
		   SELECT madlib_dl.predict_byom('arch', 2, 'iris_test', 'id', 'attributes', 'pred_byom')",
		'load_model_selection_table' =>
		  "SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1], ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=16', 'batch_size=8'])",
		'generate_model_configs' =>
		  "SELECT madlib_dl.generate_model_configs('arch', 'mst_grid', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$)",
		'fit_multiple' =>
		  "SELECT madlib_dl.madlib_keras_fit_multiple_model('packed', 'fm_model', 'mst', 2, FALSE, 'test_packed')",
		'madlib_keras_automl' =>
		  "SELECT madlib_dl.madlib_keras_automl('packed', 'am_model', 'arch', 'am_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$, 'hyperopt', 'num_configs=2, num_iterations=1', 1, NULL, FALSE, 'test_packed')",
		'hyperband_schedule' => "SELECT madlib_dl.hyperband_schedule('hb_sched', 9)",
		'delete_keras_model' => "SELECT madlib_dl.delete_keras_model('arch', 2)",
		'keras_model_summary' => "SELECT count(*) FROM madlib_dl.keras_model_summary((SELECT model_arch FROM arch WHERE model_id = 1))",
	);
	my @order = (
		'load_keras_model', 'training_preprocessor_dl', 'validation_preprocessor_dl', 'fit',
		'fit (warm start)', 'evaluate', 'predict', 'predict_byom', 'load_model_selection_table',
		'generate_model_configs', 'fit_multiple', 'madlib_keras_automl', 'hyperband_schedule',
		'delete_keras_model', 'keras_model_summary');
	for my $step (@order)
	{
		SKIP:
		{
			skip 'fit_multiple is not installed', 1
			  if $step eq 'fit_multiple' && $has_fm ne 't';
			my ($ret, $out, $err) = as_user($user, $steps{$step});
			is($ret, 0, "$user: $step on own tables") or diag($err);
		}
	}
	return;
}

own_flow('bob');
own_flow('alice');

# The tables made, owned by alice.
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relnamespace = 'alice'::regnamespace "
		  . "AND relkind = 'r' AND relowner <> 'alice'::regrole"),
	'0', 'alice owns every table she made');

# alice on bob's tables: 42501 each time, and nothing of bob's data (no
# class value, no number of his) in the message.
my @denied = (
	[ 'training_preprocessor_dl reads bob.iris_train',
		"SELECT madlib_dl.training_preprocessor_dl('bob.iris_train', 'x_packed', 'class_text', 'attributes')" ],
	[ 'validation_preprocessor_dl reads bob.iris_test',
		"SELECT madlib_dl.validation_preprocessor_dl('bob.iris_test', 'x_vpacked', 'class_text', 'attributes', 'packed')" ],
	[ 'validation_preprocessor_dl reads bob.packed (training table)',
		"SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'x_vpacked', 'class_text', 'attributes', 'bob.packed')" ],
	[ 'fit reads bob.packed',
		"SELECT madlib_dl.fit('bob.packed', 'x_model', 'arch', 1, \$\$$COMPILE\$\$, NULL, 1)" ],
	[ 'fit reads bob.arch',
		"SELECT madlib_dl.fit('packed', 'x_model', 'bob.arch', 1, \$\$$COMPILE\$\$, NULL, 1)" ],
	[ 'fit reads bob.test_packed (validation)',
		"SELECT madlib_dl.fit('packed', 'x_model', 'arch', 1, \$\$$COMPILE\$\$, NULL, 1, FALSE, 'bob.test_packed')" ],
	[ 'fit warm-starts from bob.model',
		"SELECT madlib_dl.fit('packed', 'bob.model', 'arch', 1, \$\$$COMPILE\$\$, NULL, 1, FALSE, NULL, NULL, TRUE)" ],
	[ 'evaluate reads bob.model',
		"SELECT madlib_dl.evaluate('bob.model', 'test_packed', 'x_eval')" ],
	[ 'evaluate reads bob.test_packed',
		"SELECT madlib_dl.evaluate('model', 'bob.test_packed', 'x_eval')" ],
	[ 'predict reads bob.model',
		"SELECT madlib_dl.predict('bob.model', 'iris_test', 'id', 'attributes', 'x_pred')" ],
	[ 'predict reads bob.iris_test',
		"SELECT madlib_dl.predict('model', 'bob.iris_test', 'id', 'attributes', 'x_pred')" ],
	[ 'predict_byom reads bob.arch',
		"SELECT madlib_dl.predict_byom('bob.arch', 1, 'iris_test', 'id', 'attributes', 'x_pred')" ],
	[ 'load_model_selection_table reads bob.arch',
		"SELECT madlib_dl.load_model_selection_table('bob.arch', 'x_mst', ARRAY[1], ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=8'])" ],
	[ 'generate_model_configs reads bob.arch',
		"SELECT madlib_dl.generate_model_configs('bob.arch', 'x_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$)" ],
	[ 'load_keras_model writes into bob.arch',
		"SELECT madlib_dl.load_keras_model('bob.arch', '$arch')" ],
	[ 'delete_keras_model deletes from bob.arch',
		"SELECT madlib_dl.delete_keras_model('bob.arch', 1)" ],
	[ 'training_preprocessor_dl creates a table in schema bob',
		"SELECT madlib_dl.training_preprocessor_dl('iris_train', 'bob.x_packed', 'class_text', 'attributes')" ],
	[ 'fit creates a table in schema bob',
		"SELECT madlib_dl.fit('packed', 'bob.x_model', 'arch', 1, \$\$$COMPILE\$\$, NULL, 1)" ],
	[ 'predict creates a table in schema bob',
		"SELECT madlib_dl.predict('model', 'iris_test', 'id', 'attributes', 'bob.x_pred')" ],
	[ 'load_model_selection_table appends to bob.mst',
		"SELECT madlib_dl.load_model_selection_table('bob.arch', 'bob.mst', ARRAY[1], ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=4'])" ],
	[ 'fit_multiple reads bob.mst',
		"SELECT madlib_dl.madlib_keras_fit_multiple_model('packed', 'x_fm', 'bob.mst', 1)" ],
	[ 'fit_multiple reads bob.packed',
		"SELECT madlib_dl.madlib_keras_fit_multiple_model('bob.packed', 'x_fm', 'mst', 1)" ],
	[ 'madlib_keras_automl reads bob.packed',
		"SELECT madlib_dl.madlib_keras_automl('bob.packed', 'x_am', 'arch', 'x_am_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$)" ],
	[ 'madlib_keras_automl reads bob.arch',
		"SELECT madlib_dl.madlib_keras_automl('packed', 'x_am', 'bob.arch', 'x_am_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$)" ],
	[ 'madlib_keras_automl reads bob.test_packed (validation)',
		"SELECT madlib_dl.madlib_keras_automl('packed', 'x_am', 'arch', 'x_am_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$, 'hyperband', NULL, NULL, NULL, FALSE, 'bob.test_packed')" ],
	[ 'madlib_keras_automl creates a table in schema bob',
		"SELECT madlib_dl.madlib_keras_automl('packed', 'bob.x_am', 'arch', 'x_am_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$)" ],
	[ 'madlib_keras_automl creates its model selection table in schema bob',
		"SELECT madlib_dl.madlib_keras_automl('packed', 'x_am', 'arch', 'bob.x_am_mst', ARRAY[1], \$\$$cgrid\$\$, \$\$$fgrid\$\$)" ],
	[ 'hyperband_schedule creates a table in schema bob',
		"SELECT madlib_dl.hyperband_schedule('bob.x_sched', 9)" ],
);
my $bob_before = $node->safe_psql('postgres',
	"SELECT string_agg(c.relname || ':' || c.reltuples, ',' ORDER BY c.relname) FROM pg_class c "
	  . "WHERE c.relnamespace = 'bob'::regnamespace");
my $bob_md5 = sub {
	$node->safe_psql('postgres',
		"SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM "
		  . "(SELECT a::text AS t FROM bob.arch a UNION ALL SELECT m::text FROM bob.model m "
		  . "UNION ALL SELECT s::text FROM bob.mst s) x");
};
my $bob_data = $bob_md5->();
my $n_denied = 0;
for my $case (@denied)
{
	my ($what, $sql) = @$case;
	SKIP:
	{
		skip 'fit_multiple is not installed', 2 if $what =~ /fit_multiple/ && $has_fm ne 't';
		my ($ret, $out, $err) = as_user('alice', $sql);
		like($err, qr/ERROR:\s+42501: permission denied/, "alice: $what: 42501 permission denied")
		  or diag($err);
		unlike($err, qr/Iris-|setosa|versicolor|virginica|\d\.\d{3}/,
			"alice: $what: no data of bob's in the message");
		$n_denied++;
	}
}
note "permission denials checked: $n_denied";
is(tables_like($node, 'postgres', 'x\_%'), '', 'no table of a denied call exists');
is($node->safe_psql('postgres',
		"SELECT string_agg(c.relname || ':' || c.reltuples, ',' ORDER BY c.relname) FROM pg_class c "
		  . "WHERE c.relnamespace = 'bob'::regnamespace"),
	$bob_before, "bob's schema is unchanged");
is($bob_md5->(), $bob_data, "bob's tables hold the same rows");

# Every function of the extension is SECURITY INVOKER but _px_forget
# (which only removes the plproxy_tables rows of dropped tables, so that
# PUBLIC needs no write privilege there: docs/security.md); every PL/pgSQL
# one pins its search_path.  (The LANGUAGE sql wrappers are deliberately
# unpinned: they resolve table names in the caller's search_path, and
# call only schema-qualified functions.)
is( $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), '') FROM pg_proc p "
		  . "JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e' "
		  . "JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'madlib_dl' WHERE p.prosecdef"),
	'madlib_dl._px_forget(oid[])', 'no SECURITY DEFINER function but _px_forget');
is( $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(p.oid::regprocedure::text, ', '), '') FROM pg_proc p "
		  . "JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'plpgsql' "
		  . "JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e' "
		  . "JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'madlib_dl' "
		  . "WHERE NOT coalesce(p.proconfig::text[] && ARRAY['search_path=pg_catalog, pg_temp'], false)"),
	'', 'every PL/pgSQL function has search_path = pg_catalog, pg_temp');
my $n_funcs = $node->safe_psql('postgres',
	"SELECT count(*) FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid "
	  . "AND e.extname = 'madlib_dl' WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'");
cmp_ok($n_funcs, '>', 50, "the extension's functions were found ($n_funcs)");
# The wrappers that are not pinned call nothing unqualified: every
# function call in their body is madlib_dl.* (a user's look-alike
# function earlier in the search_path is never called).
is( $node->safe_psql('postgres',
		"SELECT coalesce(string_agg(p.proname, ', '), '') FROM pg_proc p "
		  . "JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'sql' "
		  . "JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e' "
		  . "JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'madlib_dl' "
		  . "WHERE p.proconfig IS NULL AND regexp_replace(p.prosrc, "
		  . "'madlib_dl\\.[a-z_]+\\(|\\m(SELECT|FROM|AS|CASE|WHEN|THEN|ELSE|END|IS|NULL|NOT|coalesce)\\M', '', 'gi') "
		  . "~ '[a-z_][a-z_0-9]*\\s*\\('"),
	'', 'unpinned SQL wrappers call only madlib_dl.* functions');

# A look-alike function of alice's does not capture the call.
my ($ret, $out, $err) = as_user('alice', q{
	CREATE FUNCTION alice._resolve_table(name text, param text) RETURNS text[]
	LANGUAGE sql AS $$ SELECT ARRAY['bob', 'arch'] $$;
	SELECT madlib_dl.delete_keras_model('arch', 1);
	SELECT count(*) FROM pg_class WHERE relnamespace = 'alice'::regnamespace AND relname = 'arch';
});
is($ret, 0, "alice's look-alike _resolve_table is not called") or diag($err);
is($bob_md5->(), $bob_data, "bob's tables are still unchanged");

$node->stop;
done_testing();
