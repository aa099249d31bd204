#-------------------------------------------------------------------------
#
# 003_concurrent.pl
#	  4 sessions run fit (and, when installed, fit_multiple) at the same
#	  time, each on its own table.  Every run completes with the same
#	  md5(model_weights) as the same run alone.  max_parallel_workers is
#	  3, less than the 8 workers the 4 fits ask for, so some run with fewer
#	  workers (or none) than alone: the results must not change.
#
# IDENTIFICATION
#	  test/t/003_concurrent.pl
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

my $node = new_node('concurrent', "max_parallel_workers = 3\n");
load_iris($node);
my $arch = iris_arch();
$node->safe_psql('postgres', "SELECT madlib_dl.load_keras_model('arch', '$arch')");
$node->safe_psql('postgres', 'CREATE TABLE gate (x integer)');
my $n = 4;
for my $k (1 .. $n)
{
	$node->safe_psql('postgres', qq{
		CREATE TABLE src_$k AS SELECT * FROM iris_data WHERE id % $n <> $k - 1;
		SELECT madlib_dl.training_preprocessor_dl('src_$k', 'packed_$k', 'class_text', 'attributes',
			NULL, 1.0, NULL, '2');
	});
}
my $has_fm = $node->safe_psql('postgres',
	"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'madlib_keras_fit_multiple_model' "
	  . "AND pronamespace = 'madlib_dl'::regnamespace");
if ($has_fm eq 't')
{
	$node->safe_psql('postgres', qq{
		SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
			ARRAY[\$\$$COMPILE\$\$, \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']\$\$],
			ARRAY['batch_size=16, epochs=400']);
	});
}

# The statement of run $k into table $out: fit for every k in round 1;
# in round 2 sessions 1 and 3 run fit_multiple.
sub run_sql
{
	my ($k, $out, $multi) = @_;
	return "SET client_min_messages = warning; "
	  . ($multi
		? "SELECT madlib_dl.madlib_keras_fit_multiple_model('packed_$k', '$out', 'mst', 4, FALSE, NULL, 2);"
		: "SELECT madlib_dl.fit('packed_$k', '$out', 'arch', 1, \$\$$COMPILE\$\$, "
		  . "'batch_size=16, epochs=200', 10, FALSE, NULL, 5);");
}

# md5 of the weights of an output table (one row per model).
sub weights_md5
{
	my ($out, $multi) = @_;
	return $node->safe_psql('postgres',
		$multi
		? "SELECT string_agg(mst_key || ':' || md5(model_weights), ',' ORDER BY mst_key) FROM $out"
		: "SELECT md5(model_weights) FROM $out");
}

for my $round (1 .. ($has_fm eq 't' ? 2 : 1))
{
	my @multi = map { $round == 2 && $_ % 2 == 1 ? 1 : 0 } (1 .. $n);
	my (%alone, %together);

	# alone, one after the other
	for my $k (1 .. $n)
	{
		$node->safe_psql('postgres', run_sql($k, "alone_${round}_$k", $multi[ $k - 1 ]));
		$alone{$k} = weights_md5("alone_${round}_$k", $multi[ $k - 1 ]);
	}

	# together: every session first waits on a lock another session holds
	# on table gate; releasing it starts all of them at once.  Then watch
	# how many run at the same time.
	my $gate = bg_session($node);
	$gate->query_safe('BEGIN; LOCK TABLE gate IN ACCESS EXCLUSIVE MODE;');
	my @sessions = map { bg_session($node) } (1 .. $n);
	for my $k (1 .. $n)
	{
		bg_send($sessions[ $k - 1 ],
			"SELECT count(*) FROM gate;\n"
			  . "SELECT 'start=' || extract(epoch FROM clock_timestamp());\n"
			  . run_sql($k, "together_${round}_$k", $multi[ $k - 1 ])
			  . "\nSELECT 'end=' || extract(epoch FROM clock_timestamp());");
	}
	ok( defined poll_until($node, 'postgres',
			"SELECT count(*) = $n FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
			  . "AND query ~ 'FROM gate'", 30),
		"round $round: all $n sessions wait at the gate");
	$gate->query_safe('COMMIT');
	$gate->quit;
	my $t0 = time();
	my $max_active = 0;
	my $max_workers = 0;
	while (time() - $t0 < 120)
	{
		my ($active, $workers) = split /\|/, $node->safe_psql('postgres',
			"SELECT count(*) FILTER (WHERE backend_type = 'client backend' AND state = 'active' "
			  . "AND query ~ 'madlib_dl\\.(fit|madlib_keras_fit_multiple_model)\\('), "
			  . "count(*) FILTER (WHERE backend_type = 'parallel worker') FROM pg_stat_activity");
		$max_active = $active if $active > $max_active;
		$max_workers = $workers if $workers > $max_workers;
		last if $active == 0 && time() - $t0 > 1;
		usleep(20_000);
	}
	my @errors;
	my ($last_start, $first_end) = (0, 9e99);
	for my $k (1 .. $n)
	{
		my ($out, $err) = bg_finish($sessions[ $k - 1 ], 120);
		ok(defined $out, "round $round: session $k finished");
		push @errors, $err if $err =~ /ERROR/;
		my ($start) = ($out // '') =~ /start=([0-9.]+)/;
		my ($end) = ($out // '') =~ /end=([0-9.]+)/;
		$last_start = $start if defined $start && $start > $last_start;
		$first_end = $end if defined $end && $end < $first_end;
		$sessions[ $k - 1 ]->quit;
	}
	is(scalar(@errors), 0, "round $round: no session failed") or diag(join("\n", @errors));
	# Every run started before any ended: all ran at the same time.
	cmp_ok($last_start, '<', $first_end,
		"round $round: all $n runs overlapped (the last started "
		  . sprintf('%.2f', $first_end - $last_start) . ' s before the first ended)');
	note "round $round: at most $max_active runs and $max_workers parallel workers at once";
	for my $k (1 .. $n)
	{
		my $what = $multi[ $k - 1 ] ? 'fit_multiple' : 'fit';
		is(weights_md5("together_${round}_$k", $multi[ $k - 1 ]), $alone{$k},
			"round $round: $what on packed_$k gives the same weights as alone");
	}
	ok(wait_no_workers($node, 10), "round $round: no parallel worker left");
}

$node->stop;
done_testing();
