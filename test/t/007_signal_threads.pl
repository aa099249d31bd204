#-------------------------------------------------------------------------
#
# 007_signal_threads.pl
#	  The helper threads OpenBLAS and oneDNN start inside the server's
#	  processes block every signal, so that PostgreSQL's handlers only
#	  ever run on the process's own thread (src/engine/backend.c).
#
#	  A CNN trains with madlib_dl.blas_threads = 2 (oneDNN's convolutions
#	  and sgemm on two OpenMP threads, OpenBLAS's pool); while it trains,
#	  every thread but the main one of the leader and of each worker must
#	  block every blockable signal (SigBlk in /proc/PID/task/TID/status).
#	  Twice: with the library loaded by each process (OpenBLAS starts
#	  its pool when loaded, with the loader's signal mask), and preloaded
#	  by the postmaster (the pool does not survive the fork and is started
#	  again in the worker).  Then the fit is cancelled.  Linux only.
#
# IDENTIFICATION
#	  test/t/007_signal_threads.pl
#
#-------------------------------------------------------------------------
use strict;
use warnings;
no warnings 'portable';    # 64-bit hexadecimal signal masks

use FindBin;
use lib "$FindBin::RealBin/../perl";
use MadlibDLTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

plan skip_all => 'needs /proc/PID/task (Linux)' unless -d "/proc/$$/task";

# Every signal but SIGKILL (9), SIGSTOP (19) and glibc's own 32 and 33.
my $blockable = 0;
for my $sig (1 .. 64)
{
	next if $sig == 9 || $sig == 19 || $sig == 32 || $sig == 33;
	$blockable |= 1 << ($sig - 1);
}

# The helper threads of process $pid: (count, list of "tid:SigBlk" that
# leave a blockable signal unblocked).
sub helper_masks
{
	my ($pid) = @_;
	my ($n, @bad) = (0);
	opendir(my $d, "/proc/$pid/task") or return (0);
	for my $tid (grep { /^\d+$/ } readdir($d))
	{
		next if $tid == $pid;
		open(my $f, '<', "/proc/$pid/task/$tid/status") or next;
		my ($blk) = map { /^SigBlk:\s*([0-9a-f]+)/ ? ($1) : () } <$f>;
		close($f);
		next unless defined $blk;
		$n++;
		push @bad, "$tid:$blk" if (hex($blk) & $blockable) != $blockable;
	}
	closedir($d);
	return ($n, @bad);
}

my $node = new_node('signal_threads');
$node->safe_psql('postgres', q{
	CREATE TABLE images AS
	SELECT i AS id, (i % 3) AS label,
	       ARRAY(SELECT ARRAY(SELECT ARRAY[((r * 7 + c * 3 + i) % 5) / 5.0
	                                        + CASE WHEN r = i % 8 THEN 1 ELSE 0 END]::real[]
	                          FROM generate_series(0, 15) c)
	             FROM generate_series(0, 15) r) AS x
	  FROM generate_series(1, 512) i;
	SELECT madlib_dl.training_preprocessor_dl('images', 'images_packed', 'label', 'x',
		NULL, 1.0, NULL, '2');
});
my $cnn = '{"class_name": "Sequential", "config": {"name": "c", "layers": ['
  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 16, 16, 1]}}, '
  . '{"class_name": "Conv2D", "config": {"name": "c1", "filters": 32, "kernel_size": [3, 3], "activation": "relu"}}, '
  . '{"class_name": "Conv2D", "config": {"name": "c2", "filters": 64, "kernel_size": [3, 3], "activation": "relu"}}, '
  . '{"class_name": "Flatten", "config": {"name": "f"}}, '
  . '{"class_name": "Dense", "config": {"name": "d1", "units": 256, "activation": "relu"}}, '
  . '{"class_name": "Dense", "config": {"name": "d2", "units": 3, "activation": "softmax"}}]}}';
$node->safe_psql('postgres', "SELECT madlib_dl.load_keras_model('cnn_arch', '$cnn')");

for my $preload (0, 1)
{
	my $label = $preload ? 'preloaded' : 'loaded per process';
	if ($preload)
	{
		$node->append_conf('postgresql.conf', "shared_preload_libraries = 'madlib_dl'");
		$node->restart;
	}
	my $s = bg_session($node);
	my $pid = $s->query_safe('SELECT pg_backend_pid()');
	$s->query_safe('SET madlib_dl.blas_threads = 2');
	bg_send($s, "SELECT madlib_dl.fit('images_packed', 'sig_cnn', 'cnn_arch', 1, \$\$$COMPILE\$\$, "
		  . "'batch_size=64, epochs=2', 1000);");

	# After an iteration every thread has started; look at them all.
	ok(bg_wait_stderr($s, qr/iteration 1 of 1000/, 60), "$label: iteration 1 ended");
	my @workers = split /\n/, $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE leader_pid = $pid "
		  . "AND backend_type = 'parallel worker'");
	ok(scalar(@workers) > 0, "$label: the workers train");
	my ($seen, @bad) = (0);
	for my $p ($pid, @workers)
	{
		my ($n, @b) = helper_masks($p);
		$seen += $n;
		push @bad, map { "pid $p thread $_" } @b;
	}
	cmp_ok($seen, '>=', scalar(@workers), "$label: helper threads exist ($seen)");
	is(join(', ', @bad), '', "$label: every helper thread blocks every signal");

	$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
	my ($out, $err) = bg_finish($s, 30);
	like($err // '', qr/canceling statement due to user request/, "$label: the fit was cancelled");
	ok(wait_no_workers($node, 10), "$label: no parallel worker survives");
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server serves");
	$s->quit;
}

$node->stop;
done_testing();
