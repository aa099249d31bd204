#-------------------------------------------------------------------------
#
# 006_memory.pl
#	  madlib_dl.max_model_memory: a model or batch too large for the limit
#	  fails early with 54000 and a hint naming the GUC, not through the
#	  OOM killer; under the limit nothing changes.
#
#	  fit and fit_multiple call madlib_dl._check_model_memory before any
#	  work.  (MADLIB_DL_TODO_MEMORY=1 skips those parts, for old builds.)
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
$huge =~ s/"units": 256/"units": 4096/g;    # 17M parameters, ~0.5 GB estimated
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.load_keras_model('arch', '$arch');
	SELECT madlib_dl.load_keras_model('arch', '$huge');
});

is($node->safe_psql('postgres', "LOAD 'madlib_dl'; SHOW madlib_dl.max_model_memory"), '1GB', 'the default limit is 1GB');
is( $node->safe_psql('postgres',
		"LOAD 'madlib_dl'; SELECT unit, context, vartype FROM pg_settings WHERE name = 'madlib_dl.max_model_memory'"),
	'kB|user|integer', 'the GUC is in kB, settable per session');

# The estimate grows with the parameters and with the batch.
my ($small, $small_big_batch, $big) = split /\|/, $node->safe_psql('postgres', q{
	SELECT madlib_dl._model_memory_estimate(a.model_arch, 32),
	       madlib_dl._model_memory_estimate(a.model_arch, 100000),
	       madlib_dl._model_memory_estimate(b.model_arch, 32)
	  FROM arch a, arch b WHERE a.model_id = 1 AND b.model_id = 2});
cmp_ok($small, '>=', 28 * 83, 'the estimate counts 28 bytes per parameter at least');
cmp_ok($small_big_batch, '>', 100 * $small, 'the estimate grows with the batch');
cmp_ok($big, '>', 400e6, 'the 17M-parameter model needs over 400 MB');

# Direct checks: under the limit passes, over it fails with 54000.
my ($ret, $out, $err) = $node->psql('postgres',
	"SELECT madlib_dl._check_model_memory(model_arch, 32, 'model_id 2') > 0 FROM arch WHERE model_id = 2");
is($out, 't', 'the big model passes the default limit');
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSET madlib_dl.max_model_memory = '100MB';\n"
	  . "SELECT madlib_dl._check_model_memory(model_arch, 32, 'model_id 2') FROM arch WHERE model_id = 2");
like($err, qr/ERROR:\s+54000: model_id 2 needs about \d+ MB of memory per segment, more than madlib_dl.max_model_memory \(100 MB\)/,
	'over the limit: 54000 naming the model, its size and the limit');
like($err, qr/HINT:.*SET madlib_dl.max_model_memory = '\d+GB'/, 'the hint names the GUC');
($ret, $out, $err) = $node->psql('postgres',
	"SET madlib_dl.max_model_memory = '1MB';\n"
	  . "SELECT madlib_dl._check_model_memory(model_arch, 100000, 'model_id 1') FROM arch WHERE model_id = 1");
like($err, qr/ERROR:.*model_id 1 needs about/, 'a small model with a huge batch is refused too');

TODO:
{
	# Until the drivers check, these would train a 17M-parameter model for
	# a minute: todo_skip them (MADLIB_DL_TODO_MEMORY=0 runs them).
	todo_skip('fit and fit_multiple do not call madlib_dl._check_model_memory yet', 5)
	  if ($ENV{MADLIB_DL_TODO_MEMORY} // '0') ne '0';

	# fit: fails at once, before starting workers or allocating the model.
	my $t0 = time();
	($ret, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSET madlib_dl.max_model_memory = '100MB';\n"
		  . "SELECT madlib_dl.fit('iris_packed', 'm_huge', 'arch', 2, \$\$$COMPILE\$\$, 'batch_size=16', 1)");
	my $secs = time() - $t0;
	like($err, qr/ERROR:\s+54000: .*max_model_memory/, 'fit: a model over the limit fails with 54000');
	cmp_ok($secs, '<', 2, 'fit: it fails early (' . sprintf('%.2f', $secs) . ' s)');
	is(tables_like($node, 'postgres', 'm\_huge%'), '', 'fit: no output table');

	my $has_fm = $node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'madlib_keras_fit_multiple_model' "
		  . "AND pronamespace = 'madlib_dl'::regnamespace");
	SKIP:
	{
		skip 'fit_multiple is not installed', 2 if $has_fm ne 't';
		$node->safe_psql('postgres', qq{
			SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1, 2],
				ARRAY[\$\$$COMPILE\$\$], ARRAY['batch_size=16']);
		});
		($ret, $out, $err) = $node->psql('postgres',
			"\\set VERBOSITY verbose\nSET madlib_dl.max_model_memory = '100MB';\n"
			  . "SELECT madlib_dl.fit_multiple('iris_packed', 'fm_huge', 'mst', 1)");
		like($err, qr/ERROR:\s+54000: mst_key \d+ .*max_model_memory/,
			'fit_multiple: a configuration over the limit fails with 54000 naming its mst_key');
		is(tables_like($node, 'postgres', 'fm\_huge%'), '', 'fit_multiple: no output table');
	}
}

# Under the limit, fit works as before.
($ret, $out, $err) = $node->psql('postgres',
	"SET madlib_dl.max_model_memory = '100MB'; SET client_min_messages = warning;\n"
	  . "SELECT madlib_dl.fit('iris_packed', 'm_small', 'arch', 1, \$\$$COMPILE\$\$, 'batch_size=16', 1)");
is($ret, 0, 'a model under the limit trains') or diag($err);

$node->stop;
done_testing();
