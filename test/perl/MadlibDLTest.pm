#-------------------------------------------------------------------------
#
# MadlibDLTest.pm
#	  Shared helpers of the TAP tests in test/t: a node with the extension
#	  and the iris data, background psql sessions that can wait for a
#	  NOTICE, and polls with time limits (never fixed sleeps).
#
# Used by test/t/*.pl with
#	  use FindBin;
#	  use lib "$FindBin::RealBin/../perl";
#	  use MadlibDLTest;
#
# IDENTIFICATION
#	  test/perl/MadlibDLTest.pm
#
#-------------------------------------------------------------------------
package MadlibDLTest;

use strict;
use warnings;

use Exporter 'import';
use FindBin;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(
  new_node load_iris iris_arch wide_arch bg_session bg_send bg_wait_stderr
  bg_finish poll_until worker_count wait_no_workers tables_like
  $COMPILE);

# The compile parameters every test uses.
our $COMPILE =
  q{loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']};

# The iris MLP 4-10-3, and a wide 4-256-256-3 one whose inference on many
# rows takes seconds (for a metrics phase long enough to cancel in).
sub iris_arch
{
	return '{"class_name": "Sequential", "config": {"name": "s", "layers": ['
	  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, '
	  . '{"class_name": "Dense", "config": {"name": "d1", "units": 10, "activation": "relu"}}, '
	  . '{"class_name": "Dense", "config": {"name": "d2", "units": 3, "activation": "softmax"}}]}, '
	  . '"keras_version": "2.11.0", "backend": "tensorflow"}';
}

sub wide_arch
{
	return '{"class_name": "Sequential", "config": {"name": "w", "layers": ['
	  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, '
	  . '{"class_name": "Dense", "config": {"name": "d1", "units": 256, "activation": "relu"}}, '
	  . '{"class_name": "Dense", "config": {"name": "d2", "units": 256, "activation": "relu"}}, '
	  . '{"class_name": "Dense", "config": {"name": "d3", "units": 3, "activation": "softmax"}}]}, '
	  . '"keras_version": "2.11.0", "backend": "tensorflow"}';
}

# A started node with madlib_dl created in database postgres.  Extra
# postgresql.conf lines in $conf.
sub new_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		"max_worker_processes = 16\nmax_parallel_workers = 8\n"
		  . "log_min_messages = warning\n"
		  . ($conf // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION madlib_dl');
	return $node;
}

# Load test/data/iris.sql (table iris_data) into $db, as $role if given.
sub load_iris
{
	my ($node, $db, $role) = @_;
	my $file = "$FindBin::RealBin/../data/iris.sql";
	my $sql = slurp_file($file);
	$sql = "SET ROLE $role;\n$sql" if defined $role;
	$node->safe_psql($db // 'postgres', $sql);
	return;
}

# A background psql session that goes on after errors, with a generous
# overall timer.
sub bg_session
{
	my ($node, $db) = @_;
	return $node->background_psql($db // 'postgres',
		on_error_stop => 0,
		timeout => $PostgreSQL::Test::Utils::timeout_default);
}

# Send $sql to the session without waiting for it; stdout and stderr are
# cleared first.
sub bg_send
{
	my ($s, $sql) = @_;
	$s->{stdout} = '';
	$s->{stderr} = '';
	$s->{stdin} .= "$sql\n";
	$s->{run}->pump_nb();
	return;
}

# Wait until the session's stderr matches $re (a NOTICE, an ERROR), at
# most $secs seconds.  Returns true if it matched.
sub bg_wait_stderr
{
	my ($s, $re, $secs) = @_;
	my $deadline = time() + $secs;
	while (1)
	{
		$s->{run}->pump_nb();
		return 1 if $s->{stderr} =~ $re;
		return 0 if time() > $deadline;
		usleep(20_000);
	}
}

# Wait for the statement sent with bg_send to end (a marker query runs
# after it); returns (stdout, stderr) of the statement, at most $secs s.
sub bg_finish
{
	my ($s, $secs) = @_;
	my $marker = 'bg_finish_' . int(rand(1_000_000_000));
	$s->{stdin} .= "\\echo $marker\n";
	my $deadline = time() + $secs;
	while ($s->{stdout} !~ /$marker/)
	{
		return (undef, $s->{stderr}) if time() > $deadline;
		$s->{run}->pump_nb();
		usleep(20_000);
	}
	my $out = $s->{stdout};
	$out =~ s/\n?$marker\n//;
	my $err = $s->{stderr};
	$s->{stdout} = '';
	$s->{stderr} = '';
	return ($out, $err);
}

# Poll $sql in $db until it returns 't', at most $secs seconds.  Returns
# the seconds it took, or undef on timeout.
sub poll_until
{
	my ($node, $db, $sql, $secs) = @_;
	my $t0 = time();
	while (1)
	{
		my $r = $node->safe_psql($db, $sql);
		return time() - $t0 if $r eq 't';
		return undef if time() - $t0 > $secs;
		usleep(50_000);
	}
}

# The number of parallel workers on the node (of leader $pid if given).
sub worker_count
{
	my ($node, $pid) = @_;
	my $where = defined $pid ? " AND leader_pid = $pid" : '';
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'parallel worker'$where");
}

# true when no parallel worker is left within $secs seconds.
sub wait_no_workers
{
	my ($node, $secs) = @_;
	return defined poll_until($node, 'postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'",
		$secs);
}

# The names of the tables of $db whose name matches the LIKE pattern, as
# one comma-separated string ('' when none).
sub tables_like
{
	my ($node, $db, $pattern) = @_;
	return $node->safe_psql($db,
		"SELECT coalesce(string_agg(relname, ',' ORDER BY relname), '') FROM pg_class "
		  . "WHERE relname LIKE '$pattern' AND relkind IN ('r', 'p')");
}

1;
