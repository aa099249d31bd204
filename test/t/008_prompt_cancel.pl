#-------------------------------------------------------------------------
#
# 008_prompt_cancel.pl
#	  A cancel stops a long forward pass promptly: the engine asks the
#	  glue's cancel check (dl_pg_cancel_requested) between the layers of
#	  every forward and backward pass and between inference sub-batches
#	  (dl_model_cancel_rows), outside oneDNN's signal window.
#
#	  A predict_byom of 1,024 rows of 32x32x16 through 60 Conv2D(16, 9x9)
#	  layers in batches of 1,024 would take tens of seconds (measured
#	  here on 64 rows and scaled); with statement_timeout = 2s it returns
#	  with 57014 in a few seconds (bound 10 s), and the same for
#	  pg_cancel_backend and for row mode (no batch_size).  A fit
#	  of that model on parallel workers: statement_timeout stops it, and
#	  its workers, whose one training step takes seconds, are gone within
#	  a few seconds.  The latencies are printed (note lines).
#
# IDENTIFICATION
#	  test/t/008_prompt_cancel.pl
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

my $node = new_node('prompt_cancel');

# L Conv2D(16, 9x9, same) layers on 32x32x16, then a 2-class head.
my $L = 60;
my @layers = ('{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 32, 32, 16], "name": "in"}}');
push @layers,
  qq({"class_name": "Conv2D", "config": {"name": "c$_", "filters": 16, "kernel_size": [9, 9], )
  . '"padding": "same", "activation": "relu"}}'
  for 1 .. $L;
push @layers, '{"class_name": "GlobalAveragePooling2D", "config": {"name": "g"}}';
push @layers, '{"class_name": "Dense", "config": {"name": "d", "units": 2, "activation": "softmax"}}';
my $arch = '{"class_name": "Sequential", "config": {"name": "s", "layers": [' . join(', ', @layers) . ']}}';
my $P = $L * (81 * 16 * 16 + 16) + 16 * 2 + 2;

$node->safe_psql('postgres', qq{
	SELECT madlib_dl.load_keras_model('carch', '$arch',
		madlib_dl.weights_from_array(array_fill(0.001::real, ARRAY[$P])));
	CREATE TABLE ctest AS
	SELECT i AS id, array_fill(0.5::real, ARRAY[32, 32, 16]) AS x, (i % 2)::text AS y
	  FROM generate_series(1, 1024) i;
	CREATE TABLE ctest64 AS SELECT * FROM ctest WHERE id <= 64;
	CREATE TABLE ctrain AS SELECT * FROM ctest WHERE id <= 128;
	SELECT madlib_dl.training_preprocessor_dl('ctrain', 'ctrain_packed', 'y', 'x', 32, 1.0, NULL, '2');
});

# The uncancelled run, scaled: 64 rows, times 16.
my $t0 = time();
$node->safe_psql('postgres',
	"SELECT madlib_dl.predict_byom('carch', 1, 'ctest64', 'id', 'x', 'out64', batch_size => 1024)");
my $full = (time() - $t0) * 16;
note(sprintf('predict_byom of 1024 rows would take about %.1f s (64 rows: %.2f s)', $full, $full / 16));
cmp_ok($full, '>', 10, 'the uncancelled predict_byom takes long (more than 10 s, scaled from 64 rows)');

my $s = bg_session($node);
my $pid = $s->query_safe('SELECT pg_backend_pid()');

# statement_timeout = 2s on predict_byom of the 1,024 rows in batches
# of 1,024 (each dl_model_predict call would run for the whole table).
$t0 = time();
bg_send($s, "SET statement_timeout = '2s';\n"
	  . "SELECT madlib_dl.predict_byom('carch', 1, 'ctest', 'id', 'x', 'out_timeout', batch_size => 1024);\n"
	  . "RESET statement_timeout;");
my ($out, $err) = bg_finish($s, 120);
my $secs = time() - $t0;
note(sprintf('predict_byom with statement_timeout = 2s returned after %.2f s', $secs));
like($err // '', qr/canceling statement due to statement timeout/, 'predict_byom: statement timeout error');
cmp_ok($secs, '<', 10, 'predict_byom: statement_timeout = 2s stops it within 10 s');
is(tables_like($node, 'postgres', 'out_timeout%'), '', 'predict_byom: no output table left');

# pg_cancel_backend 1 s into the same predict.
bg_send($s, "SELECT madlib_dl.predict_byom('carch', 1, 'ctest', 'id', 'x', 'out_cancel', batch_size => 1024);");
usleep(1_000_000);
$t0 = time();
$node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)");
($out, $err) = bg_finish($s, 120);
$secs = time() - $t0;
note(sprintf('predict_byom returned %.2f s after pg_cancel_backend', $secs));
like($err // '', qr/canceling statement due to user request/, 'predict_byom: cancel error');
cmp_ok($secs, '<', 8, 'predict_byom: pg_cancel_backend stops it within 8 s');

# Row mode (no batch_size): one row per forward pass, in parallel workers.
$t0 = time();
bg_send($s, "SET statement_timeout = '2s';\n"
	  . "SELECT madlib_dl.predict_byom('carch', 1, 'ctest', 'id', 'x', 'out_rows');\n"
	  . "RESET statement_timeout;");
($out, $err) = bg_finish($s, 120);
$secs = time() - $t0;
note(sprintf('predict_byom in row mode with statement_timeout = 2s returned after %.2f s', $secs));
like($err // '', qr/canceling statement due to statement timeout/, 'row mode: statement timeout error');
cmp_ok($secs, '<', 10, 'row mode: statement_timeout = 2s stops it within 10 s');
ok(wait_no_workers($node, 10), 'row mode: no parallel worker survives');

# fit on parallel workers: one step of 32 rows through 60 layers (forward
# and backward) takes seconds; statement_timeout stops the fit and the
# workers go.
bg_send($s, "SET statement_timeout = '3s';\n"
	  . "SELECT madlib_dl.fit('ctrain_packed', 'cfit', 'carch', 1, \$\$$COMPILE\$\$, "
	  . "'batch_size=32, epochs=50', 10);\nRESET statement_timeout;");
ok(defined poll_until($node, 'postgres',
		"SELECT count(*) > 0 FROM pg_stat_activity WHERE leader_pid = $pid "
		  . "AND backend_type = 'parallel worker'", 30),
	'fit: workers are up');
($out, $err) = bg_finish($s, 120);
$t0 = time();
like($err // '', qr/canceling statement due to statement timeout/, 'fit: statement timeout error');
my $gone = poll_until($node, 'postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'parallel worker'", 60);
ok(defined $gone && $gone < 10, 'fit: no parallel worker is left 10 s after the error');
note(sprintf('fit: the workers were gone %.2f s after the statement ended', $gone // -1));
is(tables_like($node, 'postgres', 'cfit%'), '', 'fit: no output table left');

my ($one) = $s->query('SELECT 1');
is($one, '1', 'the cancelled session serves');
$s->quit;
$node->stop;
done_testing();
