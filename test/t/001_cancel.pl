#-------------------------------------------------------------------------
#
# 001_cancel.pl
#	  Cancel fit (and fit_multiple) at several points: while the workers
#	  start and read their partitions, while they train, while they
#	  compute metrics, on statement_timeout, and while the output tables
#	  are written (the fit is held there by a lock).  Each time: the
#	  session gets 57014, no output table is left, no parallel worker
#	  survives, and the server (and the session) go on serving.
#
# IDENTIFICATION
#	  test/t/001_cancel.pl
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
use Time::HiRes qw(time usleep);

my $node = new_node('cancel');
load_iris($node);
my $arch = iris_arch();
my $wide = wide_arch();
$wide =~ s/"units": 256/"units": 1024/g;
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	CREATE TABLE iris_tiny AS SELECT * FROM iris_data WHERE id IN (1, 2, 51, 52, 101, 102);
	SELECT madlib_dl.training_preprocessor_dl('iris_tiny', 'tiny_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	CREATE TABLE iris_big AS
	SELECT row_number() OVER () AS id, attributes, class_text
	  FROM iris_data, generate_series(1, 1200);
	SELECT madlib_dl.validation_preprocessor_dl('iris_big', 'big_packed', 'class_text', 'attributes',
		'tiny_packed');
	SELECT madlib_dl.load_keras_model('arch', '$arch');
	SELECT madlib_dl.load_keras_model('arch', '$wide');
});

my $cancels = 0;
my $s = bg_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');
my $long_fit = "SELECT madlib_dl.fit('iris_packed', '%s', 'arch', 1, \$\$$COMPILE\$\$, "
  . "'batch_size=16, epochs=2000', 200);";

# After a cancel: the error, no output, no workers, both sessions serve.
sub check_after_cancel
{
	my ($label, $prefix, $err, $expect) = @_;
	like($err // '', $expect // qr/canceling statement due to user request/,
		"$label: the session got the cancel error");
	is(tables_like($node, 'postgres', "$prefix%"), '', "$label: no output table left");
	ok(wait_no_workers($node, 10), "$label: no parallel worker survives (within 10 s)");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server serves");
	my ($out) = $s->query('SELECT 42');
	is($out, '42', "$label: the cancelled session serves");
	$cancels++;
	return;
}

# Wait until session pid runs with at least one parallel worker.
sub wait_workers_up
{
	my ($secs) = @_;
	return defined poll_until($node, 'postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE leader_pid = $pid "
		  . "AND backend_type = 'parallel worker'", $secs);
}

# 1. While the workers start and read their partitions: as soon as they
#    exist, long before the first iteration (200,000 epochs) ends.
my $very_long_fit = $long_fit;
$very_long_fit =~ s/epochs=2000/epochs=200000/;
bg_send($s, sprintf($very_long_fit, 'c_start'));
ok(wait_workers_up(30), 'start: workers are up');
ok(!bg_wait_stderr($s, qr/iteration 1 of/, 0), 'start: no iteration finished yet');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
my ($out, $err) = bg_finish($s, 30);
check_after_cancel('start', 'c_start', $err);

# 2. While training on the segments: after iteration 1 (of 200) ended.
bg_send($s, sprintf($long_fit, 'c_train'));
ok(bg_wait_stderr($s, qr/iteration 1 of 200/, 60), 'training: iteration 1 ended');
ok(worker_count($node, $pid) > 0, 'training: the workers are running');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 30);
unlike($err, qr/iteration 200 of 200/, 'training: cancelled before the end');
check_after_cancel('training', 'c_train', $err);

# 3. statement_timeout, in the middle of training.
bg_send($s, "SET statement_timeout = '2500ms';\n" . sprintf($long_fit, 'c_timeout')
	  . "\nRESET statement_timeout;");
($out, $err) = bg_finish($s, 60);
check_after_cancel('statement_timeout', 'c_timeout', $err,
	qr/canceling statement due to statement timeout/);

# 4. While computing metrics: a tiny training set, a 180,000-row
#    validation set and a 2M-parameter model, metrics only at iteration 3
#    of 3.  An iteration without metrics takes d seconds (NOTICE 1 to
#    NOTICE 2); the metrics take several seconds (with oneDNN's sgemm a
#    60,000-row set took about a second, short enough that the workers had
#    sometimes finished when the test looked), so 2d + 0.2 s after NOTICE 2
#    is within them.
bg_send($s, "SELECT madlib_dl.fit('tiny_packed', 'c_metrics', 'arch', 2, \$\$$COMPILE\$\$, "
	  . "'batch_size=16', 3, FALSE, 'big_packed', 3);");
ok(bg_wait_stderr($s, qr/iteration 1 of 3/, 60), 'metrics: iteration 1 ended');
my $t1 = time();
ok(bg_wait_stderr($s, qr/iteration 2 of 3/, 60), 'metrics: iteration 2 ended');
my $d = time() - $t1;
usleep(int((2 * $d + 0.2) * 1e6));
ok(!bg_wait_stderr($s, qr/iteration 3 of 3/, 0), 'metrics: still computing metrics at the cancel');
ok(worker_count($node, $pid) > 0, 'metrics: the workers are running');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 30);
check_after_cancel('metrics', 'c_metrics', $err);

# 5. While the output is written: another session has created the summary
#    table's name in an open transaction, so fit, after training and after
#    creating the model table, waits on it in CREATE TABLE.  Cancel there.
my $blocker = bg_session($node);
$blocker->query_safe('BEGIN; CREATE TABLE c_output_summary (x integer);');
bg_send($s, "SELECT madlib_dl.fit('iris_packed', 'c_output', 'arch', 1, \$\$$COMPILE\$\$, "
	  . "'batch_size=16', 3);");
ok( defined poll_until($node, 'postgres',
		"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid", 60),
	'output: fit waits on the lock while writing its output');
ok(bg_wait_stderr($s, qr/iteration 3 of 3/, 5), 'output: training had ended');
is(worker_count($node, $pid), '0', 'output: no workers while writing');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 30);
$blocker->query_safe('ROLLBACK');
check_after_cancel('output', 'c_output', $err);

# 6. While a warm start replaces its model table: another session reads
#    the model table in an open transaction, so DROP TABLE waits.  After
#    the cancel the old model is intact.
$node->safe_psql('postgres',
	"SET client_min_messages = warning; SELECT madlib_dl.fit('iris_packed', 'c_warm', 'arch', 1, "
	  . "\$\$$COMPILE\$\$, 'batch_size=16', 2);");
my $md5_before = $node->safe_psql('postgres',
	'SELECT md5(model_weights) FROM c_warm');
my $summary_before = $node->safe_psql('postgres',
	'SELECT md5(s::text) FROM c_warm_summary s');
$blocker->query_safe('BEGIN; SELECT count(*) FROM c_warm;');
bg_send($s, "SELECT madlib_dl.fit('iris_packed', 'c_warm', 'arch', 1, \$\$$COMPILE\$\$, "
	  . "'batch_size=16', 3, FALSE, NULL, NULL, TRUE);");
ok( defined poll_until($node, 'postgres',
		"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid", 60),
	'warm start: fit waits to replace the model table');
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 30);
$blocker->query_safe('ROLLBACK');
like($err, qr/canceling statement due to user request/, 'warm start: the session got the cancel error');
is($node->safe_psql('postgres', 'SELECT md5(model_weights) FROM c_warm'),
	$md5_before, 'warm start: the old model is intact');
is($node->safe_psql('postgres', 'SELECT md5(s::text) FROM c_warm_summary s'),
	$summary_before, 'warm start: the old summary is intact');
ok(wait_no_workers($node, 10), 'warm start: no parallel worker survives');
$cancels++;

# 7. fit_multiple, when installed: cancel while training and while writing.
my $has_fm = $node->safe_psql('postgres',
	"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'madlib_keras_fit_multiple_model' "
	  . "AND pronamespace = 'madlib_dl'::regnamespace");
SKIP:
{
	skip 'fit_multiple is not installed', 14 if $has_fm ne 't';
	$node->safe_psql('postgres', qq{
		SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
			ARRAY[\$\$$COMPILE\$\$, \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']\$\$],
			ARRAY['batch_size=16, epochs=2000', 'batch_size=8, epochs=2000']);
	});
	bg_send($s, "SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'c_fm', 'mst', 200);");
	ok(bg_wait_stderr($s, qr/iteration 1 of 200/, 60), 'fit_multiple training: iteration 1 ended');
	ok(worker_count($node, $pid) > 0, 'fit_multiple training: the workers are running');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	($out, $err) = bg_finish($s, 30);
	check_after_cancel('fit_multiple training', 'c_fm', $err);

	$blocker->query_safe('BEGIN; CREATE TABLE c_fm2_info (x integer);');
	bg_send($s, "SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'c_fm2', 'mst', 2);");
	ok( defined poll_until($node, 'postgres',
			"SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $pid", 60),
		'fit_multiple output: waits on the lock while writing its output');
	is(worker_count($node, $pid), '0', 'fit_multiple output: no workers while writing');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	($out, $err) = bg_finish($s, 30);
	$blocker->query_safe('ROLLBACK');
	check_after_cancel('fit_multiple output', 'c_fm2', $err);
}

# 8. A convolutional network (oneDNN's convolutions and sgemm when built
#    with them), cancelled three times in the middle of training: signals
#    arriving inside oneDNN's generated code must not hurt the workers.
$node->safe_psql('postgres', q{
	CREATE TABLE images AS
	SELECT i AS id, (i % 3) AS label,
	       ARRAY(SELECT ARRAY(SELECT ARRAY[((r * 7 + c * 3 + i) % 5) / 5.0
	                                        + CASE WHEN r = i % 8 THEN 1 ELSE 0 END]::real[]
	                          FROM generate_series(0, 11) c)
	             FROM generate_series(0, 11) r) AS x
	  FROM generate_series(1, 256) i;
	SELECT madlib_dl.training_preprocessor_dl('images', 'images_packed', 'label', 'x',
		NULL, 1.0, NULL, '2');
});
my $cnn = '{"class_name": "Sequential", "config": {"name": "c", "layers": ['
  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 12, 12, 1]}}, '
  . '{"class_name": "Conv2D", "config": {"name": "c1", "filters": 16, "kernel_size": [3, 3], "activation": "relu"}}, '
  . '{"class_name": "MaxPooling2D", "config": {"name": "p1", "pool_size": [2, 2]}}, '
  . '{"class_name": "Conv2D", "config": {"name": "c2", "filters": 32, "kernel_size": [3, 3], "activation": "relu"}}, '
  . '{"class_name": "Flatten", "config": {"name": "f"}}, '
  . '{"class_name": "Dense", "config": {"name": "d", "units": 3, "activation": "softmax"}}]}}';
$node->safe_psql('postgres', "SELECT madlib_dl.load_keras_model('cnn_arch', '$cnn')");
for my $round (1 .. 3)
{
	bg_send($s, "SELECT madlib_dl.fit('images_packed', 'c_cnn', 'cnn_arch', 1, \$\$$COMPILE\$\$, "
		  . "'batch_size=8, epochs=200', 100);");
	ok(wait_workers_up(30), "cnn $round: workers are up");
	usleep(300_000 * $round);
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	($out, $err) = bg_finish($s, 30);
	check_after_cancel("cnn $round", 'c_cnn', $err);
}

note "cancels survived: $cancels";
$blocker->quit;
$s->quit;
$node->stop;
done_testing();
