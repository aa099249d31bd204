#-------------------------------------------------------------------------
#
# 040_streaming_memory.pl
#	  A packed table larger than madlib_dl.partition_memory trains with
#	  each worker's memory bounded: its partition is streamed (read from
#	  the table a window at a time), and the peak private memory of every
#	  parallel worker, read from /proc/PID/status (RssAnon, sampled every
#	  10 ms), stays within the budget above that of a run on a tiny table.
#	  The same table cached (use_caching => true under a larger budget)
#	  shows the partition in the workers' memory: the measurement sees it.
#	  A table twice as large peaks the same.  Streamed and cached give
#	  byte-identical weights.  The preprocessor, which builds its buffers
#	  a budget at a time, peaks the same with twice the data.  Sized for CI: 24 and 48 MB of packed data,
#	  a budget of 8 MB.
#
# IDENTIFICATION
#	  test/t/040_streaming_memory.pl
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

if (!-r "/proc/self/status")
{
	plan skip_all => 'no /proc to read the workers\' memory from';
}

my $node = new_node('streaming');
my $budget_mb = 8;

# 6000 rows of 1024 features on 2 segments (12 MB each), and 64 rows
$node->safe_psql('postgres', q{
	SELECT setseed(0.5);
	CREATE TABLE base AS
	SELECT g AS id, ARRAY(SELECT (random() * 2 - 1)::real FROM generate_series(1, 1024) WHERE g > 0) AS x
	  FROM generate_series(1, 500) g;
	CREATE TABLE big AS
	SELECT b.id + 500 * k AS id, b.x, (b.id + k) % 3 AS y FROM base b, generate_series(0, 11) k;
	CREATE TABLE big2 AS
	SELECT b.id + 500 * k AS id, b.x, (b.id + k) % 3 AS y FROM base b, generate_series(0, 23) k;
	CREATE TABLE tiny AS SELECT id, x, id % 3 AS y FROM base WHERE id <= 64;
	SELECT madlib_dl.training_preprocessor_dl('big', 'big_p', 'y', 'x', 1000, 1.0, NULL, '2');
	SELECT madlib_dl.training_preprocessor_dl('big2', 'big2_p', 'y', 'x', 1000, 1.0, NULL, '2');
	SELECT madlib_dl.training_preprocessor_dl('tiny', 'tiny_p', 'y', 'x', NULL, 1.0, NULL, '2');
	SELECT madlib_dl.load_keras_model('arch',
	  '{"class_name": "Sequential", "config": {"layers": [
	     {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1024]}},
	     {"class_name": "Dense", "config": {"units": 16, "activation": "relu"}},
	     {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
	  ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
	  ARRAY[$$batch_size=64, epochs=2, seed=1$$]);
});

# The packed partition of each segment is larger than the budget.
my $part_mb = $node->safe_psql('postgres',
	"SELECT max(cache_bytes) / 1048576.0 FROM madlib_dl.partition_plan('big_p')");
cmp_ok($part_mb, '>', $budget_mb, "a segment's partition ($part_mb MB) exceeds the budget ($budget_mb MB)");

# RssAnon (kB) of process $pid, or undef when it is gone.
sub rss_anon
{
	my ($pid) = @_;
	open(my $fh, '<', "/proc/$pid/status") or return undef;
	while (<$fh>)
	{
		return $1 if /^RssAnon:\s+(\d+)\s+kB/;
	}
	return undef;
}

# The pids of the parallel workers of leader $leader (their process titles).
sub workers_of
{
	my ($leader) = @_;
	my @pids;
	opendir(my $d, '/proc') or return ();
	for my $p (grep { /^\d+$/ } readdir($d))
	{
		open(my $fh, '<', "/proc/$p/cmdline") or next;
		my $cmd = <$fh> // '';
		push @pids, $p if $cmd =~ /parallel worker for PID $leader\b/;
	}
	closedir($d);
	return @pids;
}

# Run $sql in a background session with madlib_dl.partition_memory $mem;
# sample the workers' RssAnon every 10 ms, and the session's own backend.
# Returns (largest RssAnon of a worker in MB, workers seen, stderr,
# largest RssAnon of the backend in MB).
sub peak_run
{
	my ($sql, $mem, $set) = @_;
	my $s = bg_session($node);
	my $leader = $s->query_safe('SELECT pg_backend_pid()');
	$leader =~ s/\s+//g;
	$s->query_safe("SET madlib_dl.partition_memory = '$mem'");
	$s->query_safe("SET client_min_messages = warning");
	$s->query_safe($set) if defined $set;
	my $marker = 'done_' . int(rand(1_000_000_000));
	bg_send($s, "$sql;\n\\echo $marker");
	my %seen;
	my $peak = 0;
	my $own = 0;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while ($s->{stdout} !~ /$marker/ && time() < $deadline)
	{
		for my $p (workers_of($leader))
		{
			my $kb = rss_anon($p);
			next unless defined $kb;
			$seen{$p} = 1;
			$peak = $kb if $kb > $peak;
		}
		my $kb = rss_anon($leader);
		$own = $kb if defined $kb && $kb > $own;
		usleep(10_000);
		$s->{run}->pump_nb();
	}
	my $err = $s->{stderr};
	$s->quit;
	return ($peak / 1024.0, scalar(keys %seen), $err, $own / 1024.0);
}

my ($base, $nb, $err0) = peak_run(
	"SELECT madlib_dl.fit_multiple('tiny_p', 'm_tiny', 'mst', 3, use_caching => false)", '1GB');
is($err0, '', 'the tiny table trains');
cmp_ok($nb, '>=', 1, "the tiny run's workers were seen ($nb)");

my ($streamed, $ns, $err1) = peak_run(
	"SELECT madlib_dl.fit_multiple('big_p', 'm_s', 'mst', 3)", "${budget_mb}MB");
is($err1, '', 'the large table trains under the budget');
cmp_ok($ns, '>=', 1, "the streamed run's workers were seen ($ns)");
cmp_ok($streamed, '<=', $base + $budget_mb,
	sprintf('streamed: peak private memory of a worker %.1f MB <= %.1f MB (tiny table) + the budget',
		$streamed, $base));

# twice the rows: the same peak (the window, not the partition)
my ($streamed2, $ns2, $err3) = peak_run(
	"SELECT madlib_dl.fit_multiple('big2_p', 'm_s2', 'mst', 3)", "${budget_mb}MB");
is($err3, '', 'a table twice as large trains under the same budget');
cmp_ok(abs($streamed2 - $streamed), '<=', 2,
	sprintf('streamed: the peak stays flat with twice the rows (%.1f MB against %.1f MB)',
		$streamed2, $streamed));

my ($cached, $nc, $err2) = peak_run(
	"SELECT madlib_dl.fit_multiple('big_p', 'm_c', 'mst', 3, use_caching => true)", '64MB');
is($err2, '', 'the large table trains cached');
cmp_ok($cached, '>=', $streamed + $part_mb * 0.6,
	sprintf('cached: the partition shows in the workers\' memory (%.1f MB against %.1f MB streamed)',
		$cached, $streamed));

is($node->safe_psql('postgres',
	'SELECT bool_and(s.model_weights = c.model_weights) FROM m_s s JOIN m_c c USING (mst_key)'),
	't', 'streamed and cached weights are byte-identical');

# A cancel stops a streamed run promptly and leaves nothing behind.
{
	my $s = bg_session($node);
	my $t0 = time();
	bg_send($s, "SET madlib_dl.partition_memory = '${budget_mb}MB';\nSET statement_timeout = '400ms';\n"
		  . "SELECT madlib_dl.fit_multiple('big2_p', 'm_cancel', 'mst', 50);");
	my (undef, $err) = bg_finish($s, 60);
	my $took = time() - $t0;
	like($err, qr/canceling statement due to statement timeout/, 'a streamed run is cancelled')
	  or diag($err);
	cmp_ok($took, '<', 10, sprintf('within %.1f s', $took));
	ok(wait_no_workers($node, 10), 'its workers are gone');
	is(tables_like($node, 'postgres', 'm_cancel%'), '', 'and it wrote no table');
	$s->quit;
}

# The preprocessor builds the buffers a budget at a time (4 MB buffers,
# one a pass under the 8 MB budget): its backend peaks the same with 24
# and 48 MB of buffers, and lower than with a budget that holds them all.
my (undef, undef, $err4, $pp24) = peak_run(
	"SELECT madlib_dl.training_preprocessor_dl('big', 'big_p8', 'y', 'x', 1000, 1.0, NULL, '2')",
	"${budget_mb}MB");
is($err4, '', 'the preprocessor packs 24 MB under the budget');
my (undef, undef, $err5, $pp48) = peak_run(
	"SELECT madlib_dl.training_preprocessor_dl('big2', 'big2_p8', 'y', 'x', 1000, 1.0, NULL, '2')",
	"${budget_mb}MB");
is($err5, '', 'and 48 MB');
cmp_ok(abs($pp48 - $pp24), '<=', $budget_mb,
	sprintf('the preprocessor\'s backend peaks at %.1f MB (24 MB of buffers) and %.1f MB (48 MB): within the budget',
		$pp24, $pp48));
# (work_mem large enough that the hash aggregate itself spills no group)
my (undef, undef, $err6, $pp48_1g) = peak_run(
	"SELECT madlib_dl.training_preprocessor_dl('big2', 'big2_p1g', 'y', 'x', 1000, 1.0, NULL, '2')",
	'1GB', "SET work_mem = '256MB'");
is($err6, '', 'and 48 MB under a budget that holds every buffer');
cmp_ok($pp48 + 15, '<=', $pp48_1g,
	sprintf('which peaks higher: %.1f MB', $pp48_1g));
is($node->safe_psql('postgres',
	"SELECT (SELECT string_agg(md5(x) || md5(y), ',' ORDER BY buffer_id) FROM big2_p8)"
	  . " = (SELECT string_agg(md5(x) || md5(y), ',' ORDER BY buffer_id) FROM big2_p1g)"),
	't', 'with the same buffers');

$node->stop;
done_testing();
