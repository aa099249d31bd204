#-------------------------------------------------------------------------
#
# 040_automl_cancel.pl
#	  Cancel madlib_keras_automl in the middle of a rung: Hyperband after
#	  its first rung ended and while the survivor trains on (fit_progress
#	  shows the run there: its rung and the configurations alive); TPE in
#	  its second batch (a second session of parallel workers);
#	  ASHA on statement_timeout; and while the output tables are written
#	  (held there by a lock).  Each time: the session gets the cancel
#	  error, no output table is left, no parallel worker survives, no
#	  progress row is left, and the server and the session go on serving.
#	  Also: the NOTICEs of automl and of fit_multiple name their metric,
#	  and fit_multiple's names the best point of the whole run.
#
# IDENTIFICATION
#	  test/t/040_automl_cancel.pl
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
use Time::HiRes qw(usleep);

my $node = new_node('automl_cancel', "shared_preload_libraries = 'madlib_dl'\n");
$node->restart;
load_iris($node);
my $arch = iris_arch();
# 12,000 rows on 2 segments: a visit of 100 epochs takes about a second
$node->safe_psql('postgres', qq{
	CREATE TABLE iris_big AS
	SELECT row_number() OVER () AS id, attributes, class_text
	  FROM iris_data, generate_series(1, 80);
	SELECT madlib_dl.training_preprocessor_dl('iris_big', 'big_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.load_keras_model('arch', '$arch');
});
my $cgrid = q|$${'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'], |
  . q|'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.01, 'log']}]}$$|;
my $fgrid = q|$${'batch_size': [16], 'epochs': [100]}$$|;
sub automl_sql
{
	my ($out, $method, $params) = @_;
	return "SELECT madlib_dl.madlib_keras_automl('big_packed', '$out', 'arch', '${out}_mst', "
	  . "ARRAY[1], $cgrid, $fgrid, '$method', '$params', 1);";
}

my $s = bg_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# After a cancel: the error, no output, no workers, no progress row, both
# sessions serve.
sub check_after_cancel
{
	my ($label, $prefix, $err, $expect) = @_;
	like($err // '', $expect // qr/canceling statement due to user request/,
		"$label: the session got the cancel error");
	is(tables_like($node, 'postgres', "$prefix%"), '', "$label: no output table left");
	ok(wait_no_workers($node, 10), "$label: no parallel worker survives (within 10 s)");
	is($node->safe_psql('postgres', "SELECT count(*) FROM madlib_dl.fit_progress WHERE pid = $pid"),
		'0', "$label: no progress row left");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server serves");
	my ($out) = $s->query('SELECT 42');
	is($out, '42', "$label: the cancelled session serves");
	return;
}

# 1. Hyperband R=3, eta=3: bracket 1 trains 3 configurations for 1
#    iteration, bracket 0 two for 3.  After the first rung ended
#    (iteration 1), the best of bracket 1 goes on to 3 iterations: cancel
#    then, in the middle of that rung.
bg_send($s, automl_sql('c_hb', 'hyperband', 'R=3, eta=3'));
ok(bg_wait_stderr($s, qr/hyperband: iteration 1: 3 configurations ended a rung, 1 promoted/, 120),
	'hyperband: the first rung ended, one configuration promoted');
like($s->{stderr}, qr/best so far mst_key \d+ after 1 iterations: training loss [0-9.]+, accuracy [0-9.]+/,
	'hyperband: the NOTICE names the best configuration and its metric');
is( $node->safe_psql('postgres',
		"SELECT function || ' ' || iteration || ' ' || rung || ' ' || models_alive || ' ' || num_models "
		  . "FROM madlib_dl.fit_progress WHERE pid = $pid"),
	'madlib_keras_automl 1 1 3 5',
	'hyperband: fit_progress shows iteration 1, rung 1, 3 configurations alive of 5');
ok(worker_count($node, $pid) > 0, 'hyperband: the workers are running');
# the next rung trains 3 configurations for 2 iterations: longer than the
# first (5 for 1); cancel a quarter of the first rung's time into it
my ($t1) = $s->{stderr} =~ /iteration 1: .*; ([0-9.]+) s/;
note "the first rung took $t1 s";
usleep(int(($t1 // 1) / 4 * 1e6));
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
my ($out, $err) = bg_finish($s, 60);
unlike($err, qr/iteration 3:/, 'hyperband: cancelled before the rung ended');
check_after_cancel('hyperband', 'c_hb', $err);

# 2. TPE: batches of 2 (the segments); the second batch runs in a second
#    session of workers.  Cancel during it.
bg_send($s, automl_sql('c_tpe', 'hyperopt', 'num_configs=4, num_iterations=1'));
ok(bg_wait_stderr($s, qr/hyperopt: iteration 1: 2 configurations ended a rung, 0 promoted, 2 new/, 120),
	'tpe: the second batch started');
ok( defined poll_until($node, 'postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE leader_pid = $pid "
		  . "AND backend_type = 'parallel worker'", 30),
	'tpe: the second batch has workers');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 60);
unlike($err, qr/iteration 2:/, 'tpe: cancelled before the second batch ended');
check_after_cancel('tpe', 'c_tpe', $err);

# 3. ASHA on statement_timeout, in the middle of its first rung: visits
#    of 2,000 epochs (about 20 s each, 20 times the runs above), so the
#    timeout falls in the first one whatever the machine's speed or load.
{
	my $slow = automl_sql('c_asha', 'asha', 'R=9, eta=3, num_configs=6');
	$slow =~ s/'epochs': \[100\]/'epochs': [2000]/ or die 'no epochs in the grid';
	bg_send($s, "SET statement_timeout = '2500ms';\n" . $slow . "\nRESET statement_timeout;");
}
($out, $err) = bg_finish($s, 60);
unlike($err, qr/asha: iteration 1:/, 'statement_timeout: cancelled in the first rung');
check_after_cancel('statement_timeout', 'c_asha', $err,
	qr/canceling statement due to statement timeout/);

# 4. While the output is written: another session holds the name of the
#    summary table in an open transaction, so the run, after training,
#    waits in CREATE TABLE.  Cancel there.
my $blocker = bg_session($node);
$blocker->query_safe('BEGIN; CREATE TABLE c_out_summary (x integer);');
my $small = "SELECT madlib_dl.madlib_keras_automl('iris_packed', 'c_out', 'arch', 'c_out_mst', "
  . "ARRAY[1], $cgrid, \$\${'batch_size': [16], 'epochs': [1]}\$\$, 'hyperopt', "
  . "'num_configs=2, num_iterations=1', 1);";
bg_send($s, $small);
ok( defined poll_until($node, 'postgres',
		"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid", 60),
	'output: the run waits on the lock while writing its output');
ok(bg_wait_stderr($s, qr/iteration 1: 2 configurations ended a rung/, 5), 'output: training had ended');
is(worker_count($node, $pid), '0', 'output: no workers while writing');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 30);
$blocker->query_safe('ROLLBACK');
check_after_cancel('output', 'c_out', $err);

# 5. After all that, the same run completes and writes all five tables.
bg_send($s, $small);
($out, $err) = bg_finish($s, 60);
is(tables_like($node, 'postgres', 'c\_out%'), 'c_out,c_out_info,c_out_mst,c_out_mst_summary,c_out_summary',
	'a run after the cancels writes its tables');

# 6. fit_multiple's NOTICE names its metric too.
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1], ARRAY[\$\$$COMPILE\$\$],
		ARRAY['batch_size=16']);
});
bg_send($s, "SELECT madlib_dl.fit_multiple('iris_packed', 'fm', 'mst', 1);");
($out, $err) = bg_finish($s, 60);
like($err, qr/iteration 1 of 1: best so far mst_key 1 \(iteration 1\): training accuracy [0-9.]+, loss/,
	'fit_multiple: the NOTICE names the metric');

# 7. fit_multiple's "best so far" is the best metrics point of the whole
# run, not the best of the models' latest points: with a high learning
# rate the validation accuracy rises and then falls, so the two differ.
$node->safe_psql('postgres', q{
	CREATE TABLE iris_v AS SELECT * FROM iris_data WHERE id % 5 = 0;
	SELECT madlib_dl.validation_preprocessor_dl('iris_v', 'iris_v_packed', 'class_text', 'attributes',
		'iris_packed');
	SELECT madlib_dl.load_model_selection_table('arch', 'mst_hi', ARRAY[1],
		ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.5, momentum=0.9)', metrics=['accuracy']$$,
		      $$loss='categorical_crossentropy', optimizer='Adam(lr=0.2)', metrics=['accuracy']$$],
		ARRAY['batch_size=4, epochs=1, seed=3']);
});
bg_send($s, "SELECT madlib_dl.fit_multiple('iris_packed', 'fm_hi', 'mst_hi', 8, FALSE, 'iris_v_packed', 1);");
($out, $err) = bg_finish($s, 120);
# every metrics point: mst_key|iteration|accuracy, best first (ties: the
# lower mst_key, then the earlier iteration)
my @points = split /\n/, $node->safe_psql('postgres', q{
	SELECT mst_key || '|' || it || '|' || round(m::numeric, 4)
	  FROM fm_hi_info, unnest(metrics_iters, validation_metrics) AS p(it, m)
	 ORDER BY m DESC, mst_key, it});
my $best_latest = $node->safe_psql('postgres', q{
	SELECT round(max(validation_metrics[cardinality(validation_metrics)])::numeric, 4) FROM fm_hi_info});
my ($bk, $bi, $bm) = split /\|/, $points[0];
ok($bm > $best_latest,
	"the run's best accuracy ($bm) is above the best of the latest points ($best_latest): the case is exercised");
my ($last) = $err =~ /(iteration 8 of 8: best so far [^\n]*)/;
like($last // $err, qr/best so far mst_key $bk \(iteration $bi\): validation accuracy $bm, loss/,
	"fit_multiple: the last NOTICE names the best point of the run (mst_key $bk, iteration $bi, $bm)");

$s->quit;
$blocker->quit;
$node->stop;
done_testing();
