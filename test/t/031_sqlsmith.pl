#-------------------------------------------------------------------------
#
# 031_sqlsmith.pl
#	  sqlsmith (Debian package sqlsmith) sends random queries, a fixed
#	  number from a fixed seed, as a non-superuser with statement_timeout,
#	  to a database holding the extension and the fixtures of the
#	  hostile-call test (packed tables, an architecture table, models, a
#	  model selection table, and their wrong-typed and damaged decoys; see
#	  test/perl/MadlibDLHostile.pm).  The server must not crash: the log
#	  shows no backend terminated by a signal, and the server serves at
#	  the end.  A crash's query (from the log) is printed, to become a
#	  regression test.
#
#	  sqlsmith draws the functions it calls from pg_proc, queried
#	  unqualified.  The role's search_path puts a view named pg_proc
#	  first, listing the functions of madlib_dl and a few value makers of
#	  pg_catalog, so that the queries exercise this extension rather than
#	  PostgreSQL's three thousand built-in functions.  (Operators still
#	  come from pg_catalog.pg_operator.)  The fixtures belong to another
#	  role: sqlsmith may read them, and its INSERTs, UPDATEs and DELETEs
#	  on them fail.
#
#	  Environment (optional):
#	    MADLIB_DL_SQLSMITH_QUERIES  number of queries (default 10000)
#	    MADLIB_DL_SQLSMITH_SEED     sqlsmith's seed (default 20261201)
#	  docs/fuzzing.md has a longer run.  Skipped when sqlsmith is not
#	  installed.
#
# IDENTIFICATION
#	  test/t/031_sqlsmith.pl
#
#-------------------------------------------------------------------------
use strict;
use warnings;

use FindBin;
use lib "$FindBin::RealBin/../perl";
use IPC::Run;
use MadlibDLHostile;
use MadlibDLTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

my $queries = $ENV{MADLIB_DL_SQLSMITH_QUERIES} // 10000;
my $seed = $ENV{MADLIB_DL_SQLSMITH_SEED} // 20261201;

if (system('sqlsmith --version >/dev/null 2>&1') != 0)
{
	plan skip_all => 'sqlsmith is not installed (Debian package sqlsmith; scripts/install-deps.sh)';
}

my $node = new_node('sqlsmith',
	"restart_after_crash = on\nlog_min_messages = log\nlog_min_error_statement = panic\nlog_statement = none\n");
my $fx = hostile_fixtures($node);
$node->safe_psql('postgres', q{
	CREATE ROLE smith LOGIN;
	CREATE SCHEMA smith AUTHORIZATION smith;
	GRANT USAGE ON SCHEMA madlib_dl TO smith;
	GRANT USAGE ON SCHEMA hostile TO smith;
	GRANT SELECT ON ALL TABLES IN SCHEMA hostile TO smith;
	-- What sqlsmith sees as pg_proc.
	CREATE SCHEMA smithcat;
	CREATE VIEW smithcat.pg_proc AS
	SELECT * FROM pg_catalog.pg_proc
	 WHERE pronamespace = 'madlib_dl'::regnamespace
	    OR (pronamespace = 'pg_catalog'::regnamespace
	        AND proname IN ('to_regclass', 'decode', 'repeat', 'textcat', 'substr', 'int4', 'float8',
	                        'md5', 'array_fill', 'to_json', 'json_build_array', 'array_append', 'overlay'));
	GRANT USAGE ON SCHEMA smithcat TO smith;
	GRANT SELECT ON smithcat.pg_proc TO smith;
	ALTER ROLE smith SET search_path = smithcat, pg_catalog, smith, hostile, public;
	ALTER ROLE smith SET statement_timeout = '2s';
});
is( $node->safe_psql('postgres',
		"SELECT rolsuper OR rolcreaterole OR rolbypassrls FROM pg_roles WHERE rolname = 'smith'"),
	'f', 'sqlsmith runs as an ordinary role');
my $nfunc = $node->safe_psql('postgres',
	"SET search_path = smithcat, pg_catalog; SELECT count(*) FROM pg_proc WHERE pronamespace = 'madlib_dl'::regnamespace");
cmp_ok($nfunc, '>', 100, "sqlsmith sees the functions of madlib_dl ($nfunc)");

my $logoff = -s $node->logfile;
my $target = $node->connstr('postgres') . ' user=smith';
my ($out, $err);
my $t0 = time();
my $ok = IPC::Run::run(
	[ 'sqlsmith', "--target=$target", "--seed=$seed", "--max-queries=$queries", '--exclude-catalog', '--verbose' ],
	'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(1800));
my $secs = time() - $t0;
# The last report: query count, error rate, the errors by message.
my ($report) = $err =~ /.*(queries: \d+.*?)\z/s;
$report //= substr($err, -3000);
my ($rate) = $report =~ /error rate: ([\d.]+)/;
my @top = grep { /^\d+\t/ } split /\n/, $report;
note sprintf('sqlsmith: %d queries, seed %d, %.0f s, error rate %s', $queries, $seed, $secs, $rate // '?');
note "  $_" for @top[ 0 .. ($#top < 30 ? $#top : 30) ];
ok($ok, 'sqlsmith ran to its query count') or diag(substr($err, -2000));
my ($done) = $err =~ /.*queries: (\d+)/s;
is($done, $queries, 'sqlsmith made every query');

my $log = substr(slurp_file($node->logfile), $logoff);
my @crash = MadlibDLHostile::hostile_log_crashes($log);
my @failed = $log =~ /DETAIL:\s+Failed process was running: (.*)/g;
is(scalar @crash, 0, 'no backend crashed')
  or diag(join("\n", @crash) . "\nqueries:\n" . join("\n\n", @failed));
is($node->safe_psql('postgres', 'SELECT 1'), '1', 'the server serves after sqlsmith');
diag "sqlsmith queries: $queries";
$node->stop;
done_testing();
