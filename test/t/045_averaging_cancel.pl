#-------------------------------------------------------------------------
#
# 045_averaging_cancel.pl
#	  Cancel fit in the middle of an averaging round (averaging_period:
#	  src/pg/api/fit.c), after several rounds of the first iteration: on
#	  parallel workers, in the leader alone (no worker launched: it trains
#	  every segment and averages), and on the greenplum transport (a round
#	  per query, its round table a temporary one).  Each time: the session
#	  gets 57014, no output table, no temporary table and no parallel
#	  worker is left, and the cancelled session then trains the same bytes
#	  as a new session: nothing of the cancelled run stayed behind.
#
# IDENTIFICATION
#	  test/t/045_averaging_cancel.pl
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

my $node = new_node('averaging_cancel');
load_iris($node);
my $wide = wide_arch();
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_p3', 'class_text', 'attributes',
		20, 1.0, NULL, '3');
	SELECT madlib_dl.load_keras_model('arch', '$wide');
});

my $s = bg_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# A job of the wide MLP on 3 segments of iris, averaged every mini-batch.
sub job
{
	my ($fp, $iters, $transport) = @_;
	return "madlib_dl._make_train_job('iris_p3', 'attributes', 'class_text', "
	  . "ARRAY[(SELECT model_arch::text FROM arch)], ARRAY[\$\$$COMPILE\$\$], $iters, "
	  . "fit_params => ARRAY['$fp'], num_segments => 3, transport => '$transport', "
	  . "averaging_period => 1, lr_scaling => 'sqrt')";
}

my $cancels = 0;
for my $case (['workers', 'workers', 8], ['leader alone', 'workers', 0],
	['greenplum transport', 'greenplum', 8])
{
	my ($label, $transport, $workers) = @$case;

	# rounds of one mini-batch of 4 rows: the first iteration has 26,000
	bg_send($s, "SET max_parallel_workers = $workers; SET client_min_messages = debug1;\n"
		  . "CREATE TABLE c_avg AS SELECT * FROM madlib_dl._fit_run("
		  . job('batch_size=4, epochs=2000', 3, $transport) . ");");
	ok(bg_wait_stderr($s, qr/averaging round 5 of iteration 1 done/, 60),
		"$label: averaging rounds are running");
	ok(!bg_wait_stderr($s, qr/iteration 1 of 3/, 0), "$label: iteration 1 has not ended");
	if ($workers > 0 && $transport eq 'workers')
	{
		ok(worker_count($node, $pid) > 0, "$label: the workers are running");
	}
	else
	{
		is(worker_count($node, $pid), '0', "$label: no parallel worker: the leader runs the rounds");
	}
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my ($out, $err) = bg_finish($s, 30);
	like($err // '', qr/canceling statement due to user request/,
		"$label: the session got the cancel error");
	unlike($err // '', qr/averaging round 1 of iteration 2/, "$label: cancelled within iteration 1");
	is(tables_like($node, 'postgres', 'c_avg%'), '', "$label: no output table left");
	is($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_class WHERE relpersistence = 't'"),
		'0', "$label: no temporary table left");
	ok(wait_no_workers($node, 10), "$label: no parallel worker survives (within 10 s)");

	# the cancelled session trains as a new one does
	my $short = "SELECT md5(model_weights) FROM madlib_dl._fit_run("
	  . job('batch_size=4, epochs=2', 2, $transport) . ")";
	bg_send($s, 'SET client_min_messages = warning;');
	bg_finish($s, 30);
	my $again = $s->query_safe($short);
	is($again, $node->safe_psql('postgres', "SET client_min_messages = warning; $short"),
		"$label: the cancelled session trains the same bytes as a new session");
	$s->query_safe('RESET max_parallel_workers; RESET client_min_messages');
	$cancels++;
}

note "cancels survived: $cancels";
$s->quit;
$node->stop;
done_testing();
