# 010_progress.pl: madlib_dl.fit_progress seen live from another session.
#
# A server with shared_preload_libraries = 'madlib_dl' runs a long fit on
# iris in a background session; a second session polls the view until the
# run shows an iteration > 0, checks the row, cancels the fit and checks
# that the cancelled run leaves no row behind.  Then a short fit that
# completes must leave the view empty too.  A run on the greenplum
# transport (Greenplum's path, run here) is shown as well.  Other roles
# see another role's run as pg_stat_activity shows another role's query,
# and a role cannot label its run with a table of another role.
#
# IDENTIFICATION
#	  test/t/010_progress.pl

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $srcdir = $ENV{TESTDIR} // '.';

my $node = PostgreSQL::Test::Cluster->new('progress');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'madlib_dl'
max_worker_processes = 16
max_parallel_workers = 8
});
$node->start;

$node->safe_psql('postgres', 'CREATE EXTENSION madlib_dl');
is($node->safe_psql('postgres', 'SELECT madlib_dl._progress_enabled()'),
	't', 'preloaded: progress slots are in shared memory');
is($node->safe_psql('postgres', 'SELECT count(*) FROM madlib_dl.fit_progress'),
	'0', 'idle server: the view is empty');

my $iris = slurp_file("$srcdir/test/data/iris.sql");
$node->safe_psql('postgres', $iris);
$node->safe_psql(
	'postgres', q{
SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes');
SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'iris_val', 'class_text', 'attributes', 'iris_packed');
SELECT madlib_dl.load_keras_model('model_arch_library',
  '{"class_name": "Sequential", "config": {"name": "iris", "layers": [
     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}},
     {"class_name": "Dense", "config": {"name": "hidden", "units": 10, "activation": "relu"}},
     {"class_name": "Dense", "config": {"name": "out", "units": 3, "activation": "softmax"}}]}}',
  NULL, 'iris mlp');
});

# fit with $iters iterations into $out (iris: about 0.5 ms an iteration).
sub fit_sql
{
	my ($out, $iters, $freq) = @_;
	return qq{SELECT madlib_dl.fit('iris_packed', '$out', 'model_arch_library', 1,
    \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']\$\$,
    \$\$batch_size=16, epochs=1\$\$, $iters, validation_table => 'iris_val',
    metrics_compute_frequency => $freq);};
}

# 1. A long fit in the background (minutes if nothing cancels it).
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_safe('SET client_min_messages = warning');
my $bg_pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\n" . fit_sql('iris_long', 400000, 50) . "\n");

ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM madlib_dl.fit_progress WHERE pid = $bg_pid AND iteration > 0"),
	'another session sees the running fit at an iteration > 0');

my $row = $node->safe_psql(
	'postgres', qq{
SELECT function, source_table, coalesce(output_table, '-'), num_iterations,
       num_models, iteration BETWEEN 1 AND 400000, models_done BETWEEN 0 AND 1,
       elapsed_seconds >= 0, seconds_left >= 0, run_id > 0,
       database, username = current_user, updated_at >= started_at
FROM madlib_dl.fit_progress WHERE pid = $bg_pid});
my @f = split /\|/, $row;
is($f[0], 'fit', 'function is fit');
is($f[1], 'public.iris_packed', 'source_table is the packed table');
ok($f[2] eq '-' || $f[2] eq 'public.iris_long', "output_table is the model table or unknown ($f[2])");
is($f[3], '400000', 'num_iterations');
is($f[4], '1', 'num_models is 1 for fit');
is(join(',', @f[5 .. 9]), 't,t,t,t,t',
	'iteration, models_done, elapsed and estimated seconds are in range');
is($f[10], 'postgres', 'database');
is(join(',', @f[11 .. 12]), 't,t', 'username and timestamps');

# The view moves: a later read shows a later iteration.
my $it1 = $node->safe_psql('postgres',
	"SELECT iteration FROM madlib_dl.fit_progress WHERE pid = $bg_pid");
ok( $node->poll_query_until(
		'postgres',
		"SELECT iteration > $it1 FROM madlib_dl.fit_progress WHERE pid = $bg_pid"),
	'the iteration advances while the fit runs (live, not at commit)');
ok( $node->poll_query_until(
		'postgres',
		"SELECT best_metric BETWEEN 0 AND 1 FROM madlib_dl.fit_progress WHERE pid = $bg_pid"),
	'best_metric (accuracy) appears after the first metrics point');

# 2. Cancel it: the aborted run must leave no row.
is($node->safe_psql('postgres', "SELECT pg_cancel_backend($bg_pid)"),
	't', 'cancel the fit');
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) = 0 FROM madlib_dl.fit_progress'),
	'a cancelled fit leaves no row in the view');
my $gone = $bg->query('SELECT 1');
is($gone, '1', 'the cancelled session is usable again');
$bg->quit;

# 3. A fit that completes leaves no row either, and it trained.
$node->safe_psql('postgres',
	"SET client_min_messages = warning;\n" . fit_sql('iris_short', 20, 10));
is($node->safe_psql('postgres', 'SELECT count(*) FROM madlib_dl.fit_progress'),
	'0', 'a completed fit leaves no row');
is($node->safe_psql('postgres', 'SELECT count(*) FROM iris_short'),
	'1', 'the completed fit wrote its model');

# 4. An ERROR inside a subtransaction (a cancelled fit caught by a
# PL/pgSQL EXCEPTION block) frees the slot although the session goes on.
my $bg2 = $node->background_psql('postgres', on_error_stop => 0);
my $bg2_pid = $bg2->query_safe('SELECT pg_backend_pid()');
$bg2->query_safe('SET client_min_messages = warning');
$bg2->query_until(
	qr/started/, "\\echo started\n" . qq{BEGIN;
DO \$do\$ BEGIN
  PERFORM madlib_dl.fit('iris_packed', 'iris_sub', 'model_arch_library', 1,
    \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'\$\$,
    \$\$batch_size=16, epochs=1\$\$, 400000);
EXCEPTION WHEN query_canceled THEN RAISE WARNING 'caught';
END \$do\$;
});
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM madlib_dl.fit_progress WHERE pid = $bg2_pid AND iteration > 0"),
	'the fit in a subtransaction is shown');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($bg2_pid)");
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) = 0 FROM madlib_dl.fit_progress'),
	'an error caught in a subtransaction frees the slot while the transaction goes on');
is($bg2->query('SELECT 2'), '2', 'the session goes on');
$bg2->quit;

# 5. fit_multiple: two configurations, seen live with num_models 2.
$node->safe_psql(
	'postgres', q{
SELECT madlib_dl.load_model_selection_table('model_arch_library', 'iris_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, epochs=1']);
});
my $bg3 = $node->background_psql('postgres', on_error_stop => 0);
my $bg3_pid = $bg3->query_safe('SELECT pg_backend_pid()');
$bg3->query_safe('SET client_min_messages = warning');
$bg3->query_until(qr/started/, "\\echo started\n"
	  . "SELECT madlib_dl.fit_multiple('iris_packed', 'iris_multi', 'iris_mst', 200000,"
	  . " validation_table => 'iris_val', metrics_compute_frequency => 50);\n");
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM madlib_dl.fit_progress WHERE pid = $bg3_pid AND iteration > 1"),
	'another session sees the running fit_multiple');
is( $node->safe_psql(
		'postgres',
		"SELECT function, source_table, num_models, num_iterations, models_done BETWEEN 0 AND 2
		 FROM madlib_dl.fit_progress WHERE pid = $bg3_pid"),
	'fit_multiple|public.iris_packed|2|200000|t',
	'fit_multiple row: function, source, models and iterations');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($bg3_pid)");
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) = 0 FROM madlib_dl.fit_progress'),
	'a cancelled fit_multiple leaves no row');
$bg3->quit;

# 5b. The greenplum transport (what fit and fit_multiple use on Greenplum,
# run here on PostgreSQL) updates the view through the same drivers.
my $bg4 = $node->background_psql('postgres', on_error_stop => 0);
my $bg4_pid = $bg4->query_safe('SELECT pg_backend_pid()');
$bg4->query_safe('SET client_min_messages = warning');
$bg4->query_until(qr/started/, "\\echo started\n" . q{SELECT madlib_dl._fit_multiple_run(
    madlib_dl._make_train_job('iris_packed', 'attributes', 'class_text',
        ARRAY[(SELECT model_arch::text FROM model_arch_library WHERE model_id = 1)],
        ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
        200000, fit_params => ARRAY['batch_size=16, epochs=1'], metrics_compute_frequency => 50,
        num_segments => cardinality(madlib_dl._gp_table_keys('iris_packed')),
        transport => 'greenplum'));
});
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) > 0 FROM madlib_dl.fit_progress WHERE pid = $bg4_pid AND iteration > 1"),
	'another session sees a run on the greenplum transport');
is( $node->safe_psql(
		'postgres',
		"SELECT function, source_table, num_models, num_iterations
		 FROM madlib_dl.fit_progress WHERE pid = $bg4_pid"),
	'fit_multiple|public.iris_packed|1|200000',
	'greenplum transport row: function, source, models and iterations');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($bg4_pid)");
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) = 0 FROM madlib_dl.fit_progress'),
	'a cancelled run on the greenplum transport leaves no row');
$bg4->quit;

# 6. Other roles.  alice trains; carol (no privilege over alice) sees the
# run as pg_stat_activity shows another role's query: who and where only;
# mon (pg_read_all_stats) and alice herself see everything.  And alice
# cannot show a run of hers under a table of bob's: the output label must
# be a table she may create or replace, checked before training starts.
$node->safe_psql(
	'postgres', q{
CREATE ROLE alice LOGIN;
CREATE ROLE bob LOGIN;
CREATE ROLE carol LOGIN;
CREATE ROLE mon LOGIN IN ROLE pg_read_all_stats;
CREATE SCHEMA alice AUTHORIZATION alice;
CREATE SCHEMA bob AUTHORIZATION bob;
GRANT USAGE ON SCHEMA madlib_dl TO alice, bob, carol, mon;
GRANT USAGE ON SCHEMA bob TO alice;
GRANT SELECT ON iris_packed, iris_packed_summary, iris_val, iris_val_summary, model_arch_library
  TO alice, bob;
});
# bob's model, which alice may read but not replace
$node->safe_psql('postgres',
	"SET client_min_messages = warning;\n"
	  . fit_sql('bob.secret_model', 2, 1)
	  . "\nGRANT SELECT ON bob.secret_model, bob.secret_model_summary TO alice;",
	extra_params => [ '-U', 'bob' ]);

# Start $sql as alice in the background; wait until it fails, or until
# the view shows its run at an iteration > 0.  Returns (session, pid,
# the run's output_table as the superuser sees it or '' if never shown).
sub alice_run
{
	my ($sql) = @_;
	my $s = $node->background_psql('postgres',
		on_error_stop => 0,
		extra_params => [ '-U', 'alice' ]);
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe('SET client_min_messages = warning');
	$s->{stderr} = '';
	$s->{stdin} .= "\\set VERBOSITY verbose\n$sql\n";
	my $shown = '';
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		$s->{run}->pump_nb();
		last if $s->{stderr} =~ /ERROR/;
		$shown = $node->safe_psql('postgres',
			"SELECT coalesce(output_table, '-') FROM madlib_dl.fit_progress "
			  . "WHERE pid = $pid AND iteration > 0");
		last if $shown ne '';
		select(undef, undef, undef, 0.05);
	}
	return ($s, $pid, $shown);
}

for my $case (
	[ 'a new table in bob\'s schema', fit_sql('bob.alices_model', 400000, 50),
		qr/ERROR:  42501: permission denied to create output table "bob\.alices_model"/ ],
	[ 'bob\'s model table (warm start)',
		fit_sql('bob.secret_model', 400000, 50) =~ s/\);$/, warm_start => true);/r,
		qr/ERROR:  42501: must be owner of table "bob\.secret_model"/ ])
{
	my ($what, $sql, $want) = @$case;
	my ($s, $pid, $shown) = alice_run($sql);
	is($shown, '', "alice's run into $what is never shown (it does not start)");
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)") if $shown ne '';
	$s->quit;
	like($s->{stderr}, $want, "alice's run into $what fails at once with 42501");
}

my ($alice, $alice_pid, $shown) = alice_run(fit_sql('alice.model', 400000, 50));
is($shown, 'alice.model', "alice's own run shows her output table");
ok( $node->poll_query_until(
		'postgres',
		"SELECT best_metric IS NOT NULL FROM madlib_dl.fit_progress WHERE pid = $alice_pid"),
	"alice's run has a metric");
my $cols = "function, source_table, output_table, iteration > 0, num_iterations, models_done, "
  . "num_models, best_metric IS NOT NULL, elapsed_seconds IS NOT NULL, seconds_left IS NOT NULL, "
  . "started_at IS NOT NULL, updated_at IS NOT NULL, username, database, run_id > 0";
my $view_as = sub {
	my ($role) = @_;
	return $node->safe_psql('postgres',
		"SELECT $cols FROM madlib_dl.fit_progress WHERE pid = $alice_pid",
		extra_params => [ '-U', $role ]);
};
is( $view_as->('carol'),
	join('|', '<insufficient privilege>', ('') x 6, ('f') x 5, 'alice', 'postgres', 't'),
	'another role sees who runs where, not what: no tables, progress, metric or times');
like(
	$view_as->('mon'),
	qr/^fit\|public\.iris_packed\|alice\.model\|t\|400000\|[01]\|1\|t\|t\|t\|t\|t\|alice\|postgres\|t$/,
	'pg_read_all_stats sees every column of the run');
like(
	$view_as->('alice'),
	qr/^fit\|public\.iris_packed\|alice\.model\|t\|400000\|[01]\|1\|t\|t\|t\|t\|t\|alice\|postgres\|t$/,
	'the run\'s own role sees every column from another session');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($alice_pid)");
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) = 0 FROM madlib_dl.fit_progress'),
	"alice's cancelled run leaves no row");
$alice->quit;

# 7. Without shared_preload_libraries the view is empty and fit still works.
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->restart;
is($node->safe_psql('postgres', 'SELECT madlib_dl._progress_enabled()'),
	'f', 'not preloaded: no progress slots');
$node->safe_psql('postgres',
	"SET client_min_messages = warning;\n" . fit_sql('iris_nopreload', 5, 5));
is($node->safe_psql('postgres', 'SELECT count(*) FROM madlib_dl.fit_progress'),
	'0', 'not preloaded: the view is empty and fit works');

$node->stop;
done_testing();
