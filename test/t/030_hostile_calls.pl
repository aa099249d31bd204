#-------------------------------------------------------------------------
#
# 030_hostile_calls.pl
#	  Every function of schema madlib_dl, as the catalog lists it, called
#	  by non-superusers with hostile arguments of each parameter's type:
#	  NULL, empty and huge values; names of tables with the expected
#	  columns but the wrong types, empty, NULL or corrupted contents,
#	  broken companion tables; views, temporary and missing tables;
#	  -1, 0 and 2^31-1; malformed JSON, parameter strings and bytea (see
#	  test/perl/MadlibDLHostile.pm).  Each call runs in its own
#	  transaction under statement_timeout = 2s; an error is fine.  The
#	  test fails if any call crashed a backend (the server log says so),
#	  lost the connection, or ran on long after its statement_timeout.
#
#	  Two passes: the role that owns the fixtures, granted only USAGE on
#	  schema madlib_dl (what docs/errors.md says to grant); then a second
#	  role granted EXECUTE on every function of the schema explicitly (so
#	  that each one is reached even where EXECUTE is revoked from PUBLIC)
#	  and SELECT on the other role's tables.
#
#	  Environment (all optional):
#	    MADLIB_DL_HOSTILE_CALLS   calls of pass 1 (default 12000)
#	    MADLIB_DL_HOSTILE_CALLS2  calls of pass 2 (default 2000)
#	    MADLIB_DL_HOSTILE_SEED    seed of the choice of calls (default 20261201)
#	    MADLIB_DL_HOSTILE_SKIP    regex: functions (regprocedure text) left out
#	    MADLIB_DL_HOSTILE_REPORT  file to write the crashes to (markdown)
#
# IDENTIFICATION
#	  test/t/030_hostile_calls.pl
#
#-------------------------------------------------------------------------
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use MadlibDLHostile;
use MadlibDLTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use POSIX ();
use Time::HiRes qw(usleep);

my $budget1 = $ENV{MADLIB_DL_HOSTILE_CALLS} // 12000;
my $budget2 = $ENV{MADLIB_DL_HOSTILE_CALLS2} // 2000;
my $seed = $ENV{MADLIB_DL_HOSTILE_SEED} // 20261201;
my $skip = $ENV{MADLIB_DL_HOSTILE_SKIP};
my $timeout = '2s';
my $logoff = 0;

# The server restarts itself after a crash, so that one run lists every
# crash; ERRORs (expected by the thousand) stay out of the log.
my $node = new_node('hostile',
	"restart_after_crash = on\nlog_min_messages = log\nlog_min_error_statement = panic\nlog_statement = none\n");
my $fx = hostile_fixtures($node);
note "fixtures: $fx->{nrel} relations";

$node->safe_psql('postgres', qq{
	ALTER ROLE hostile SET statement_timeout = '$timeout';
	ALTER ROLE hostile SET search_path = hostile, public;
	CREATE ROLE hostile2 LOGIN;
	CREATE SCHEMA hostile2 AUTHORIZATION hostile2;
	GRANT USAGE ON SCHEMA madlib_dl TO hostile2;
	GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA madlib_dl TO hostile2;
	GRANT USAGE ON SCHEMA hostile TO hostile2;
	GRANT SELECT ON ALL TABLES IN SCHEMA hostile TO hostile2;
	ALTER ROLE hostile2 SET statement_timeout = '$timeout';
	ALTER ROLE hostile2 SET search_path = hostile2, hostile, public;
});
is( $node->safe_psql('postgres',
		"SELECT rolsuper OR rolcreaterole OR rolbypassrls FROM pg_roles WHERE rolname = 'hostile'"),
	'f', 'pass 1 runs as an ordinary role');
my $exec1 = $node->safe_psql('postgres',
	"SELECT count(*) FILTER (WHERE has_function_privilege('hostile', oid, 'EXECUTE')) || '/' || count(*) "
	  . "FROM pg_proc WHERE pronamespace = 'madlib_dl'::regnamespace");
note "functions the USAGE-only role may execute: $exec1";
is( $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc WHERE pronamespace = 'madlib_dl'::regnamespace "
		  . "AND NOT has_function_privilege('hostile2', oid, 'EXECUTE')"),
	'0', 'pass 2 role may execute every function');

# The runner itself can fail: a backend killed by SIGSEGV during a call
# (as a crash would), a call that ignores its statement_timeout and a
# session that loses its connection are each found and named, and the
# calls after them are made.
{
	my @calls = (
		{ fn => 'ok', label => '', sql => 'SELECT 1' },
		{ fn => 'segv', label => '', sql => 'SELECT pg_sleep(20)' },
		{ fn => 'hang', label => '', sql => 'SET LOCAL statement_timeout = 0; SELECT pg_sleep(60)' },
		{ fn => 'lost', label => '', sql => 'SELECT pg_terminate_backend(pg_backend_pid())' },
		{ fn => 'error', label => '', sql => 'SELECT 1 / 0' },);
	my $child = fork();
	if ($child == 0)
	{
		# Kill the backend while it runs the 'segv' call.
		for (1 .. 200)
		{
			my $pid = $node->safe_psql('postgres',
				"SELECT pid FROM pg_stat_activity WHERE usename = 'hostile' AND query LIKE '%pg_sleep(20)%'");
			if ($pid)
			{
				kill 'SEGV', $pid;
				last;
			}
			usleep(100_000);
		}
		POSIX::_exit(0);
	}
	my $r = hostile_run($node, 'hostile', \@calls, timeout => '30s', hang_s => 5);
	waitpid($child, 0);
	is( join(',', map { $_->{fn} } @{ $r->{crashes} }) . ' / '
		  . join(',', map { $_->{fn} } @{ $r->{hangs} }) . ' / '
		  . join(',', map { $_->{fn} } @{ $r->{lost} }) . " / $r->{calls}",
		'segv / hang / lost / 5', 'self-check: the runner names a crash, a hang and a lost connection, and goes on');
	# The self-check's crash is in the log: look only after it.
	$logoff = -s $node->logfile;
}

my @passes = (
	[ 'hostile', $budget1, $seed ],
	[ 'hostile2', $budget2, $seed + 1 ],);
my (@crashes, @hangs, @lost, %internal, %reached);
my $total = 0;
for my $pass (@passes)
{
	my ($role, $budget, $pseed) = @$pass;
	my ($calls, $st) = hostile_calls($node, budget => $budget, seed => $pseed, skip => $skip, fx => $fx);
	note sprintf('%s: %d functions in madlib_dl, %d callable from SQL, %d take internal (reached through their aggregates), '
		  . '%d generated calls cut to %d', $role, $st->{functions}, $st->{callable},
		scalar @{ $st->{internal} // [] }, $st->{universe}, scalar @$calls);
	note "$role: skipped by MADLIB_DL_HOSTILE_SKIP: $_" for @{ $st->{skipped} // [] };
	my $r = hostile_run($node, $role, $calls, timeout => $timeout, prologue => $fx->{temp_sql});
	note sprintf('%s: %d calls in %.0f s, %d psql sessions; outcomes: %s', $role, $r->{calls}, $r->{seconds},
		$r->{segments}, join(', ', map { "$_ $r->{sqlstates}{$_}" } sort keys %{ $r->{sqlstates} }));
	my $fs = $r->{fn_seconds};
	note sprintf('%s: slowest functions: %s', $role,
		join(', ', map { sprintf('%s %.0f s', $_ =~ s/\(.*//r, $fs->{$_}) }
			  (sort { $fs->{$b} <=> $fs->{$a} } keys %$fs)[ 0 .. 7 ]));
	is($r->{calls}, scalar @$calls, "$role: every planned call was made");
	$total += $r->{calls};
	push @crashes, map { { %$_, role => $role } } @{ $r->{crashes} };
	push @hangs, map { { %$_, role => $role } } @{ $r->{hangs} };
	push @lost, map { { %$_, role => $role } } @{ $r->{lost} };
	%internal = (%internal, %{ $r->{internal} });
	# Functions whose all-good call failed: the other calls of such a
	# function stop early, so the list shows where the fixtures fall short.
	for my $k (0 .. $#$calls)
	{
		next unless $calls->[$k]{label} eq 'all good';
		$reached{ $calls->[$k]{fn} } = 1;
		my $o = $r->{outcome}{$k} // 'no outcome';
		note "$role: all-good call failed: $calls->[$k]{fn}: $o" if $o ne 'ok' && $role eq 'hostile';
	}
}
note "internal errors (XX000; not crashes, but errors without a SQLSTATE of their own):";
note "  $_" for sort keys %internal;

# Each crash again, alone in a fresh session: does it need the calls
# before it?
for my $c (@crashes[ 0 .. ($#crashes < 49 ? $#crashes : 49) ])
{
	my $r = hostile_run($node, $c->{role}, [$c], timeout => $timeout, prologue => $fx->{temp_sql});
	$c->{alone} = @{ $r->{crashes} } ? 'yes' : 'no';
}

is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server serves after the calls');
my @log = hostile_log_crashes(substr(slurp_file($node->logfile), $logoff));
my $list = sub {
	my ($what, @l) = @_;
	return join '', map {
		"$what in pass $_->{role}, call $_->{call}: $_->{fn}: $_->{label}"
		  . (defined $_->{alone} ? " (alone in a new session: $_->{alone})" : '')
		  . "\n    $_->{sql}\n"
		  . ($_->{log} ? "    log: " . ($_->{log} =~ s/\n/\n    log: /gr) . "\n" : '')
	} @l;
};
is(scalar @crashes, 0, 'no call crashed a backend') or diag($list->('crash', @crashes));
is(scalar @lost, 0, 'no call lost the connection') or diag($list->('connection lost', @lost));
is(scalar @hangs, 0, "no call ran on long after statement_timeout") or diag($list->('hang', @hangs));
is(scalar @log, 0, 'the server log shows no crash') or diag(join("\n", @log));
cmp_ok(scalar keys %reached, '>=', 100, 'the functions were reached (' . scalar(keys %reached) . ')');

if ($ENV{MADLIB_DL_HOSTILE_REPORT})
{
	open my $fh, '>', $ENV{MADLIB_DL_HOSTILE_REPORT} or die "$ENV{MADLIB_DL_HOSTILE_REPORT}: $!";
	print $fh "# Crashes found by test/t/030_hostile_calls.pl\n\n"
	  . "seed $seed, $total calls; " . scalar(@crashes) . " crashes, " . scalar(@hangs) . " hangs, "
	  . scalar(@lost) . " connections lost without a crash in the log.\n\n";
	for my $c (@crashes, @hangs, @lost)
	{
		print $fh "## $c->{fn}: $c->{label}\n\nrole $c->{role}, call $c->{call}"
		  . (defined $c->{alone} ? ", crashes again alone in a new session: $c->{alone}" : '')
		  . "\n\n```sql\n$c->{sql};\n```\n\n"
		  . ($c->{log} ? "```\n$c->{log}\n```\n\n" : '');
	}
	close $fh;
}

diag "hostile calls: $total";
$node->stop;
done_testing();
