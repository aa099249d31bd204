#-------------------------------------------------------------------------
#
# 002_killed_worker.pl
#	  pg_terminate_backend on one parallel worker of a running fit (and
#	  fit_multiple) gives the calling session a clean ERROR within
#	  seconds, not a hang; no output table and no worker is left, the
#	  server and the session go on serving, and a fit after it works.
#
# IDENTIFICATION
#	  test/t/002_killed_worker.pl
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
use Time::HiRes qw(time);

my $node = new_node('killed');
load_iris($node);
my $arch = iris_arch();
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.load_keras_model('arch', '$arch');
});

my $s = bg_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# Start $sql in the session, wait for iteration 1 of $n, terminate one of
# its workers and check the outcome.
sub kill_one_worker
{
	my ($label, $sql, $n, $prefix) = @_;
	bg_send($s, $sql);
	ok(bg_wait_stderr($s, qr/iteration 1 of $n/, 60), "$label: iteration 1 ended");
	my $worker = $node->safe_psql('postgres',
		"SELECT min(pid) FROM pg_stat_activity WHERE leader_pid = $pid "
		  . "AND backend_type = 'parallel worker'");
	isnt($worker, '', "$label: a parallel worker runs");
	my $t0 = time();
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($worker)");
	my ($out, $err) = bg_finish($s, 30);
	my $secs = time() - $t0;
	ok(defined $out, "$label: the session got an answer, no hang");
	cmp_ok($secs, '<', 15, "$label: within 15 s (took " . sprintf('%.2f', $secs) . ' s)');
	like($err, qr/ERROR:/, "$label: the session got an ERROR");
	unlike($err, qr/server closed the connection|FATAL|PANIC/,
		"$label: only that statement failed");
	note "$label: the error was: $err";
	ok(!bg_wait_stderr($s, qr/iteration $n of $n/, 0), "$label: training stopped");
	is(tables_like($node, 'postgres', "$prefix%"), '', "$label: no output table left");
	ok(wait_no_workers($node, 10), "$label: no parallel worker survives (within 10 s)");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server serves");
	my ($r) = $s->query('SELECT 42');
	is($r, '42', "$label: the session serves");
	return;
}

kill_one_worker('fit',
	"SELECT madlib_dl.fit('iris_packed', 'k_fit', 'arch', 1, \$\$$COMPILE\$\$, "
	  . "'batch_size=16, epochs=2000', 200);",
	200, 'k_fit');

# The next fit in the same session works and launches workers again.
$s->query_safe("SET client_min_messages = warning");
$s->query_safe("SELECT madlib_dl.fit('iris_packed', 'k_after', 'arch', 1, \$\$$COMPILE\$\$, "
	  . "'batch_size=16', 2)");
is($node->safe_psql('postgres', 'SELECT count(*) FROM k_after'), '1',
	'a fit after the killed one completes');
$s->query_safe("RESET client_min_messages");

my $has_fm = $node->safe_psql('postgres',
	"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'madlib_keras_fit_multiple_model' "
	  . "AND pronamespace = 'madlib_dl'::regnamespace");
SKIP:
{
	skip 'fit_multiple is not installed', 11 if $has_fm ne 't';
	$node->safe_psql('postgres', qq{
		SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
			ARRAY[\$\$$COMPILE\$\$, \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']\$\$],
			ARRAY['batch_size=16, epochs=2000']);
	});
	kill_one_worker('fit_multiple',
		"SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'k_fm', 'mst', 200);",
		200, 'k_fm');
}

$s->quit;
$node->stop;
done_testing();
