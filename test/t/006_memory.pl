#-------------------------------------------------------------------------
#
# 006_memory.pl
#	  madlib_dl.max_model_memory: a job too large for the limit fails at
#	  once with 54000 and a hint naming the GUC, before it allocates
#	  anything proportional to the model, and never through the OOM
#	  killer; under the limit nothing changes.
#
#	  The estimate (madlib_dl._check_model_memory) comes from the
#	  architecture alone: a Dense(units=2147483647) model, a 100-million
#	  parameter one, a 64x64 kernel on a [256, 256, 16] input, a metric
#	  history of 100 million points are refused without the backend's
#	  peak memory (VmHWM) growing.  fit, fit_multiple, evaluate, predict
#	  and predict_byom all check.  load_keras_model refuses an
#	  architecture whose weights cannot fit in one model_weights value.
#	  The limits are superuser settings (42501 for other roles), and
#	  madlib_dl.blas_threads is at most the number of online CPU cores.
#
# IDENTIFICATION
#	  test/t/006_memory.pl
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

my $node = new_node('memory');
load_iris($node);
my $arch = iris_arch();
my $huge = wide_arch();
$huge =~ s/"units": 256/"units": 4096/g;    # 17M parameters

# Dense(units => $units) on the 4 iris inputs.
sub dense_arch
{
	my ($units) = @_;
	return '{"class_name": "Sequential", "config": {"name": "s", "layers": ['
	  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, '
	  . qq({"class_name": "Dense", "config": {"name": "d", "units": $units, "activation": "softmax"}}]}});
}

# A 64x64 kernel on a [256, 256, 16] input, padding same: 262k parameters,
# but an im2col buffer of 17 GB for one sample.
my $conv = '{"class_name": "Sequential", "config": {"name": "c", "layers": ['
  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 256, 256, 16], "name": "in"}}, '
  . '{"class_name": "Conv2D", "config": {"name": "c", "filters": 4, "kernel_size": [64, 64], "padding": "same"}}, '
  . '{"class_name": "Flatten", "config": {"name": "f"}}, '
  . '{"class_name": "Dense", "config": {"name": "d", "units": 3, "activation": "softmax"}}]}}';

$node->safe_psql('postgres', qq{
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.load_keras_model('arch', '$arch');                     -- 1
	SELECT madlib_dl.load_keras_model('arch', '$huge');                     -- 2
	SELECT madlib_dl.load_keras_model('arch', '@{[dense_arch(20000000)]}'); -- 3: 100M parameters
	SELECT madlib_dl.load_keras_model('arch', '$conv');                     -- 4
	-- 5: written directly, as load_keras_model refuses it (below)
	INSERT INTO arch (model_arch, name) VALUES ('@{[dense_arch(2147483647)]}', 'dense 2147483647');
	SELECT madlib_dl.load_keras_model('arch', '@{[wide_arch()]}');         -- 6: 67k parameters
	CREATE ROLE alice LOGIN;
	GRANT USAGE ON SCHEMA madlib_dl TO alice;
});

# Run $sql in one session; returns (exit code, stdout, stderr) with
# SQLSTATEs in the errors.
sub run_sql
{
	my ($sql, @opts) = @_;
	my ($out, $err);
	my $ret = $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		stdout => \$out, stderr => \$err, @opts);
	return ($ret, $out, $err);
}

# The backend's peak resident memory in kB (VmHWM), as a SQL expression.
my $hwm = q{substring(pg_read_file('/proc/self/status') from 'VmHWM:\s+(\d+)')::bigint};

# Run $sql (expected to fail) between two readings of the backend's peak
# memory; returns (stderr, seconds, growth of the peak in MB).
sub fails_without_growing
{
	my ($sql) = @_;
	my $t0 = time();
	my ($ret, $out, $err) = run_sql("LOAD 'madlib_dl';\nSELECT $hwm;\n$sql;\nSELECT $hwm;",
		on_error_stop => 0);
	my $secs = time() - $t0;
	my @hwm = grep { /^\s*\d+\s*$/ } split /\n/, $out;
	my $growth = @hwm == 2 ? ($hwm[1] - $hwm[0]) / 1024 : -1;
	return ($err, $secs, $growth);
}

# ---------------------------------------------------------------------
# The settings
# ---------------------------------------------------------------------
is($node->safe_psql('postgres', "LOAD 'madlib_dl'; SHOW madlib_dl.max_model_memory"), '1GB', 'the default limit is 1GB');
is( $node->safe_psql('postgres',
		"LOAD 'madlib_dl'; SELECT string_agg(name || ':' || context, ',' ORDER BY name) FROM pg_settings "
		  . "WHERE name IN ('madlib_dl.max_model_memory', 'madlib_dl.blas_threads')"),
	'madlib_dl.blas_threads:superuser,madlib_dl.max_model_memory:superuser',
	'both limits are superuser settings');
for my $guc ('max_model_memory', 'blas_threads')
{
	# (a C function of madlib_dl loads the library: LOAD is for superusers)
	my ($ret, $out, $err) = run_sql("SELECT madlib_dl._default_num_segments() > 0;\nSET madlib_dl.$guc = 1;",
		extra_params => [ '-U', 'alice' ]);
	like($err, qr/ERROR:\s+42501: permission denied to set parameter "madlib_dl.$guc"/,
		"a non-superuser cannot set madlib_dl.$guc (42501)");
	# set before the library is loaded: a placeholder, dropped when it loads
	($ret, $out, $err) = run_sql(
		"SET madlib_dl.$guc = 64;\nSELECT madlib_dl._default_num_segments() > 0;\nSHOW madlib_dl.$guc;",
		extra_params => [ '-U', 'alice' ]);
	is($out, "t\n" . ($guc eq 'blas_threads' ? '1' : '1GB'),
		"a non-superuser's madlib_dl.$guc set before loading is not applied") or diag($err);
}

my $ncpu = `getconf _NPROCESSORS_ONLN`;
chomp $ncpu;
my ($ret, $out, $err) = run_sql("LOAD 'madlib_dl';\nSET madlib_dl.blas_threads = " . ($ncpu + 1) . ";");
like($err, qr/ERROR:\s+22023: madlib_dl.blas_threads ${\($ncpu + 1)} is more than the $ncpu online CPU cores/,
	'blas_threads above the core count is refused, naming both');
($ret, $out, $err) = run_sql("SET madlib_dl.blas_threads = $ncpu; SHOW madlib_dl.blas_threads;");
is($ret, 0, 'blas_threads up to the core count is accepted') or diag($err);

SKIP:
{
	skip 'a machine with 64 cores or more: the GUC maximum refuses first', 2 if $ncpu >= 64;
	$node->append_conf('postgresql.conf', "madlib_dl.blas_threads = " . ($ncpu + 1) . "\n");
	$node->reload;
	($ret, $out, $err) = run_sql("LOAD 'madlib_dl'; SHOW madlib_dl.blas_threads;");
	is($out, '1', 'a postgresql.conf value above the cores is not applied: 1 thread');
	like($err, qr/more than the $ncpu online CPU cores/, 'and it is reported when the library loads');
	$node->adjust_conf('postgresql.conf', 'madlib_dl.blas_threads', undef);
	$node->reload;
}

# ---------------------------------------------------------------------
# The estimate
# ---------------------------------------------------------------------
sub estimate
{
	my ($id, $fit_params, $extra) = @_;
	return $node->safe_psql('postgres',
		"SET madlib_dl.max_model_memory = '1TB';\n"
		  . "SELECT madlib_dl._check_model_memory('fit', ARRAY[model_arch::text], ARRAY[\$\$$COMPILE\$\$], "
		  . "ARRAY['$fit_params'], ARRAY['model_id $id']" . ($extra // '') . ") FROM arch WHERE model_id = $id");
}
my $small = estimate(1, 'batch_size=32');
my $small_big_batch = estimate(1, 'batch_size=100000');
my $big = estimate(2, 'batch_size=32');
my $big_seg = estimate(2, 'batch_size=32', ', num_segments => 8');
# 83 parameters: weights, gradients, 2 Adam slots (16 bytes), the master's
# copy (16), averaging (24), state slot (12), returned weights (4)
cmp_ok($small, '>=', 72 * 83, 'the estimate counts 72 bytes per parameter at least');
# a batch's inputs (4) and outputs (3) at least, per sample of the larger batch
cmp_ok($small_big_batch - $small, '>', (100000 - 32) * 7 * 4, 'the estimate grows with the batch');
cmp_ok($big, '>', 1e9, 'the 17M-parameter model needs over 1 GB (master, averaging, slots, training model)');
cmp_ok($big_seg - $big, '>=', 6 * 12 * 17.1e6, 'each segment adds its state in shared memory');

# Direct checks: under the limit passes, over it fails with 54000.
($ret, $out, $err) = run_sql(
	"SET madlib_dl.max_model_memory = '4GB';\n"
	  . "SELECT madlib_dl._check_model_memory('fit', ARRAY[model_arch::text], ARRAY[\$\$$COMPILE\$\$], "
	  . "ARRAY['batch_size=32'], ARRAY['model_id 2']) > 0 FROM arch WHERE model_id = 2");
is($out, 't', 'the big model passes a 4GB limit') or diag($err);
($ret, $out, $err) = run_sql(
	"SET madlib_dl.max_model_memory = '100MB';\n"
	  . "SELECT madlib_dl._check_model_memory('fit', ARRAY[model_arch::text], ARRAY[\$\$$COMPILE\$\$], "
	  . "ARRAY['batch_size=32'], ARRAY['model_id 2']) FROM arch WHERE model_id = 2");
like($err, qr/ERROR:\s+54000: model_id 2 needs about \d+ MB of memory per process, more than madlib_dl.max_model_memory \(100 MB\)/,
	'over the limit: 54000 naming the model, its size and the limit');
like($err, qr/DETAIL:\s+One process holds: models \d+ MB \(weights \d+ MB, gradients/, 'the detail lists the parts');
like($err, qr/HINT:.*SET madlib_dl.max_model_memory = '\d+GB'/, 'the hint names the GUC');

# ---------------------------------------------------------------------
# Hostile architectures: refused at once, nothing allocated
# ---------------------------------------------------------------------
my $fit = sub {
	my ($id, $iters, $freq) = @_;
	return "SELECT madlib_dl.fit('iris_packed', 'm_$id', 'arch', $id, \$\$$COMPILE\$\$, 'batch_size=16', "
	  . ($iters // 1) . (defined $freq ? ", metrics_compute_frequency => $freq" : '') . ")";
};

($ret, $out, $err) = run_sql("SELECT madlib_dl.load_keras_model('arch', '@{[dense_arch(2147483647)]}')");
like($err, qr/ERROR:\s+54000: the model architecture has 10737418235 parameters, more than the 268435454 whose weights fit in one model_weights value/,
	'load_keras_model refuses Dense(units=2147483647) (54000)');
($ret, $out, $err) = run_sql("SELECT madlib_dl.load_keras_model('arch', '@{[dense_arch(60000000)]}')");
like($err, qr/ERROR:\s+54000: .* 300000000 parameters, more than the 268435454/,
	'load_keras_model refuses 300 million parameters');
is($node->safe_psql('postgres', 'SELECT count(*) FROM arch'), '6', 'nothing was stored');

my ($secs, $growth);
($err, $secs, $growth) = fails_without_growing($fit->(5));
like($err, qr/ERROR:\s+54000: model_id 5 has 10737418235 parameters/,
	'fit of Dense(units=2147483647): 54000 before any allocation');
cmp_ok($secs, '<', 5, sprintf('  at once (%.2f s)', $secs));
cmp_ok($growth, '>=', 0, '  (the peak memory was read)');
cmp_ok($growth, '<', 50, sprintf('  the peak memory grew by %.1f MB', $growth));

($err, $secs, $growth) = fails_without_growing($fit->(3));
like($err, qr/ERROR:\s+54000: model_id 3 needs about \d+ GB of memory per process/,
	'fit of a 100M-parameter model: refused by the estimate');
cmp_ok($growth, '>=', 0, '  (the peak memory was read)');
cmp_ok($growth, '<', 50, sprintf('  the peak memory grew by %.1f MB (the model takes 400 MB)', $growth));

($err, $secs, $growth) = fails_without_growing($fit->(4));
like($err, qr/ERROR:\s+54000: model_id 4 needs about 1[67] GB of memory per process/,
	'fit of a 64x64 kernel on [256, 256, 16]: refused, about 17 GB');
like($err, qr/im2col buffer 16 GB/, '  the im2col buffer is counted');
cmp_ok($growth, '<', 50, sprintf('  the peak memory grew by %.1f MB', $growth));

($err, $secs, $growth) = fails_without_growing($fit->(1, 100000000, 1));
like($err, qr/ERROR:\s+54000: model_id 1 needs about \d+ GB .*\n.*metric history \d+ GB \(100000000 metric points\)/,
	'fit with num_iterations 100000000 and metrics every iteration: refused, the history counted');
like($err, qr/HINT:\s+Compute metrics less often/, '  the hint says what to change');
cmp_ok($secs, '<', 5, sprintf('  at once (%.2f s)', $secs));
cmp_ok($growth, '<', 50, sprintf('  the peak memory grew by %.1f MB', $growth));

# _check_input_shape no longer builds the model: the shapes come from the spec
($err, $secs, $growth) = fails_without_growing(
	"SELECT madlib_dl._check_input_shape(model_arch, '{1,5}', NULL) FROM arch WHERE model_id = 3");
like($err, qr/ERROR:\s+22000: input shape \{5\} in the data does not match/, 'a shape check of the 100M model');
cmp_ok($growth, '<', 50, sprintf('  builds nothing: the peak memory grew by %.1f MB', $growth));

# ---------------------------------------------------------------------
# Every driver checks
# ---------------------------------------------------------------------
# fit: fails at once, before starting workers or allocating the model.
my $t0 = time();
($ret, $out, $err) = run_sql("SET madlib_dl.max_model_memory = '100MB';\n" . $fit->(2));
$secs = time() - $t0;
like($err, qr/ERROR:\s+54000: model_id 2 needs .*max_model_memory/, 'fit: a model over the limit fails with 54000');
cmp_ok($secs, '<', 2, sprintf('fit: it fails early (%.2f s)', $secs));
is(tables_like($node, 'postgres', 'm\_2%'), '', 'fit: no output table');

$node->safe_psql('postgres', qq{
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1, 2],
		ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=16']);
});
($ret, $out, $err) = run_sql("SET madlib_dl.max_model_memory = '100MB';\n"
	  . "SELECT madlib_dl.fit_multiple('iris_packed', 'fm_huge', 'mst', 1)");
like($err, qr/ERROR:\s+54000: mst_key 2 needs .*max_model_memory/,
	'fit_multiple: a configuration over the limit fails with 54000 naming its mst_key');
is(tables_like($node, 'postgres', 'fm\_huge%'), '', 'fit_multiple: no output table');

# Under the limit, fit works as before; then evaluate and predict check
# too (the 4-256-256-3 model: 2 MB of activations for 1024 rows).
($ret, $out, $err) = run_sql(
	"SET madlib_dl.max_model_memory = '100MB'; SET client_min_messages = warning;\n"
	  . "SELECT madlib_dl.fit('iris_packed', 'm_small', 'arch', 6, \$\$$COMPILE\$\$, 'batch_size=16', 1)");
is($ret, 0, 'a model under the limit trains') or diag($err);

my %ep = (
	evaluate => "SELECT madlib_dl.evaluate('m_small', 'iris_packed', 'ev_out')",
	predict => "SELECT madlib_dl.predict('m_small', 'iris_data', 'id', 'attributes', 'pr_out')",
	predict_byom => "SELECT madlib_dl.predict_byom('arch', 6, 'iris_data', 'id', 'attributes', 'pb_out')",
);
$node->safe_psql('postgres',
	"UPDATE arch SET model_weights = (SELECT model_weights FROM m_small) WHERE model_id = 6");
for my $fn (sort keys %ep)
{
	($ret, $out, $err) = run_sql("SET client_min_messages = warning;\n$ep{$fn}");
	is($ret, 0, "$fn runs under the default limit") or diag($err);
	($ret, $out, $err) = run_sql("SET madlib_dl.max_model_memory = '64kB';\n"
		  . $ep{$fn} =~ s/_out'/_out2'/r);
	like($err, qr/ERROR:\s+54000: the model needs about \d+ kB of memory per process, more than madlib_dl.max_model_memory \(64 kB\)/,
		"$fn checks the memory of its model and batch (54000)");
}

$node->stop;
done_testing();
