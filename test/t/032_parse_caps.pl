#-------------------------------------------------------------------------
#
# 032_parse_caps.pl
#	  Bounded parsing: every text madlib_dl parses has a size cap checked
#	  before parsing (include/madlib_dl/dl_caps.h, docs/security.md "Size
#	  caps"), and json-c's memory is bounded by a pre-scan.  Measured as
#	  the backend's peak resident memory (VmHWM of /proc/self/status):
#	  9 MB of [{},{},...] as an architecture is refused cheaply (it took
#	  2.3 GB before), an architecture just under the json-c budget parses
#	  under 300 MB, a 9 MB architecture of one long string parses under
#	  300 MB, and 100 MB is refused on its length before it is parsed.
#	  Parameter strings and grids past their caps are refused with 54000.
#	  The figures are printed (note lines).
#
# IDENTIFICATION
#	  test/t/032_parse_caps.pl
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

my $node = new_node('parse_caps');

# The backend's peak resident memory in kB.
my $hwm = q{substring(pg_read_file('/proc/self/status') from 'VmHWM:\s+(\d+)')::bigint};

# An architecture of $n empty objects as its layers, built in the server.
sub objs
{
	my ($n) = @_;
	return qq{('{"class_name": "Sequential", "config": {"name": "s", "layers": [' || repeat('{},', $n) || '{}]}}')::json};
}

# A valid architecture whose name is a string of $n bytes.
sub long_name
{
	my ($n) = @_;
	my $head = '{"class_name": "Sequential", "config": {"name": "';
	my $tail = '", "layers": ['
	  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, '
	  . '{"class_name": "Dense", "config": {"name": "d", "units": 3}}]}}';
	return "('$head' || repeat('x', $n) || '$tail')::json";
}

# Run $sql in a fresh session; returns (stderr, peak kB before, peak kB after).
sub peak
{
	my ($sql) = @_;
	my ($out, $err);
	$node->psql('postgres',
		"\\set VERBOSITY verbose\nLOAD 'madlib_dl';\nSELECT $hwm;\n$sql;\nSELECT $hwm;",
		stdout => \$out, stderr => \$err, on_error_stop => 0);
	my @hwm = grep { /^\s*\d+\s*$/ } split /\n/, $out;
	return ($err, $hwm[0] // -1, $hwm[-1] // -1);
}

my $MB = 1024 * 1024;
my ($err, $h0, $h1);

# 9 MB of empty objects: 2.3 GB in json-c before; refused by the pre-scan.
($err, $h0, $h1) = peak('SELECT madlib_dl.keras_model_summary(' . objs(int(9 * $MB / 3)) . ')');
like($err, qr/54000: model architecture of \d+ bytes needs more than 160 MiB to parse/,
	'9 MB of {}: refused before parsing (54000)');
like($err, qr/HINT:.*160 MiB/, '9 MB of {}: the hint names the cap');
note(sprintf('9 MB of {}: peak %.0f MB (%.0f MB before)', $h1 / 1024, $h0 / 1024));
cmp_ok($h1, '<', 300 * 1024, '9 MB of {}: peak under 300 MB');

# 3 MB of empty objects (888 MB before)
($err, $h0, $h1) = peak('SELECT madlib_dl.keras_model_summary(' . objs(int(3 * $MB / 3)) . ')');
like($err, qr/needs more than 160 MiB to parse/, '3 MB of {}: refused before parsing');
note(sprintf('3 MB of {}: peak %.0f MB', $h1 / 1024));
cmp_ok($h1, '<', 300 * 1024, '3 MB of {}: peak under 300 MB');

# Just under the json-c budget: parsed (then refused for its layers).
($err, $h0, $h1) = peak('SELECT madlib_dl.keras_model_summary(' . objs(185000) . ')');
like($err, qr/more than the limit of 1024/, '0.55 MB of {}: parsed, then too many layers');
note(sprintf('0.55 MB of {} (parsed by json-c): peak %.0f MB', $h1 / 1024));
cmp_ok($h1, '<', 300 * 1024, '0.55 MB of {}: peak under 300 MB');

# 9 MB of one string: a valid architecture, parsed.
($err, $h0, $h1) = peak('SELECT madlib_dl.keras_model_summary(' . long_name(9 * $MB) . ') IS NOT NULL');
unlike($err, qr/ERROR/, '9 MB name string: parsed');
note(sprintf('9 MB of one string (parsed): peak %.0f MB', $h1 / 1024));
cmp_ok($h1, '<', 300 * 1024, '9 MB of one string: peak under 300 MB');

# Over 16 MiB: refused on its length, before json-c sees it.
($err, $h0, $h1) = peak('SELECT madlib_dl.keras_model_summary(' . long_name(17 * $MB) . ')');
like($err, qr/54000: model architecture of \d+ bytes is longer than the limit of 16777216 bytes/,
	'17 MB: refused on its length');
($err, $h0, $h1) = peak('SELECT madlib_dl.keras_model_summary(' . objs(int(100 * $MB / 3)) . ')');
like($err, qr/longer than the limit of 16777216 bytes/, '100 MB: refused on its length');
like($err, qr/HINT:.*16777216/, '100 MB: the hint names the cap');
note(sprintf('100 MB of {}: peak %.0f MB (PostgreSQL\'s copies of the statement and the json value)',
		$h1 / 1024));
($err) = peak(q{SELECT madlib_dl.load_keras_model('a', } . long_name(17 * $MB) . ')');
like($err, qr/54000: model architecture of \d+ bytes is longer than the limit/,
	'load_keras_model: refused on its length');

# Parameter strings: 64 KiB.
($err) = peak(q{SELECT madlib_dl._check_params('loss=''mse'', optimizer=''sgd''' || repeat(' ', 70000), NULL)});
like($err, qr/54000: compile_params of 70027 bytes is longer than the limit of 65536 bytes/,
	'compile_params over 64 KiB: refused');
($err) = peak(q{SELECT madlib_dl._check_params('loss=''mse'', optimizer=''sgd''', 'batch_size=4' || repeat(' ', 70000))});
like($err, qr/54000: fit_params of 70012 bytes is longer than the limit of 65536 bytes/,
	'fit_params over 64 KiB: refused');
($err) = peak(q{SELECT madlib_dl._check_params('loss=''mse'', optimizer=''sgd''' || repeat(' ', 60000), NULL)});
unlike($err, qr/ERROR/, 'compile_params under 64 KiB: accepted');

$node->stop;
done_testing();
