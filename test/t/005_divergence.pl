#-------------------------------------------------------------------------
#
# 005_divergence.pl
#	  Training that turns infinite or NaN stops that model with a clear
#	  message and keeps its metric history; in fit_multiple the other
#	  models go on.  A linear model with mse and SGD(lr=0.5) on the raw
#	  iris features overflows to infinity within a few iterations.
#
#	  fit stops with a WARNING, keeps the last finite weights and the
#	  metric history.  (MADLIB_DL_TODO_DIVERGENCE=1 marks the fit part as
#	  TODO again, for bisecting old builds.)
#
# IDENTIFICATION
#	  test/t/005_divergence.pl
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

my $node = new_node('divergence');
load_iris($node);
my $linear = '{"class_name": "Sequential", "config": {"name": "lin", "layers": ['
  . '{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "name": "in"}}, '
  . '{"class_name": "Dense", "config": {"name": "d1", "units": 3, "activation": "linear"}}]}, '
  . '"keras_version": "2.11.0", "backend": "tensorflow"}';
$node->safe_psql('postgres', qq{
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.load_keras_model('arch', '$linear');
});
my $diverging = q{loss='mse', optimizer='SGD(lr=0.5)', metrics=['accuracy']};
my $sane = q{loss='mse', optimizer='SGD(lr=0.01)', metrics=['accuracy']};
my $n_iter = 8;

# Are all weights of the model row(s) selected by $where finite?
sub weights_finite
{
	my ($table, $where) = @_;
	return $node->safe_psql('postgres',
		"SELECT bool_and(w <> 'NaN'::real AND w NOT IN ('Infinity'::real, '-Infinity'::real)) "
		  . "FROM $table, unnest(madlib_dl.weights_to_array(model_weights)) w WHERE $where");
}

# fit_multiple: the diverging configuration stops, the sane one goes on.
SKIP:
{
	my $has_fm = $node->safe_psql('postgres',
		"SELECT count(*) > 0 FROM pg_proc WHERE proname = 'madlib_keras_fit_multiple_model' "
		  . "AND pronamespace = 'madlib_dl'::regnamespace");
	skip 'fit_multiple is not installed', 9 if $has_fm ne 't';
	$node->safe_psql('postgres', qq{
		SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
			ARRAY[\$\$$diverging\$\$, \$\$$sane\$\$], ARRAY['batch_size=16']);
	});
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT madlib_dl.madlib_keras_fit_multiple_model('iris_packed', 'fm', 'mst', $n_iter, FALSE, NULL, 1)");
	is($ret, 0, 'fit_multiple: completes although one model diverges') or diag($err);
	like($err, qr/NOTICE:\s+model mst_key 1 diverged in iteration \d+/,
		'fit_multiple: a message names the model and the iteration');
	my ($status1, $n1, $finite1) = split /\|/, $node->safe_psql('postgres',
		"SELECT status, cardinality(metrics_iters), "
		  . "bool_and(l <> 'NaN'::float8 AND l NOT IN ('Infinity'::float8, '-Infinity'::float8)) "
		  . "FROM fm_info, unnest(training_loss) l WHERE mst_key = 1 GROUP BY 1, 2");
	is($status1, 'diverged', 'fit_multiple: the diverged model has status diverged');
	cmp_ok($n1, '>=', 1, 'fit_multiple: its metric history is kept');
	cmp_ok($n1, '<', $n_iter, 'fit_multiple: ... up to the divergence');
	is($finite1, 't', 'fit_multiple: its kept losses are finite');
	is(weights_finite('fm', 'mst_key = 1'), 't', 'fit_multiple: its weights are the last finite ones');
	my ($status2, $n2) = split /\|/, $node->safe_psql('postgres',
		"SELECT status, cardinality(metrics_iters) FROM fm_info WHERE mst_key = 2");
	is($status2, 'completed', 'fit_multiple: the other model completed');
	is($n2, $n_iter, 'fit_multiple: ... with all its metrics');
}

# fit: the same, for its single model.
TODO:
{
	local $TODO = 'fit raises an ERROR on divergence and loses the metric history (issue 7)'
	  if ($ENV{MADLIB_DL_TODO_DIVERGENCE} // '0') ne '0';
	my ($ret, $out, $err) = $node->psql('postgres',
		"SELECT madlib_dl.fit('iris_packed', 'm', 'arch', 1, \$\$$diverging\$\$, 'batch_size=16', "
		  . "$n_iter, FALSE, NULL, 1)");
	is($ret, 0, 'fit: completes (no ERROR) when the model diverges') or diag($err);
	like($err, qr/(WARNING|NOTICE):\s+.*diverged/, 'fit: a message says the training diverged');
	unlike($err, qr/ERROR/, 'fit: no ERROR');
	my $exists = $node->safe_psql('postgres',
		"SELECT to_regclass('m') IS NOT NULL AND to_regclass('m_summary') IS NOT NULL");
	is($exists, 't', 'fit: the model and summary tables are written');
	if ($exists eq 't')
	{
		is(weights_finite('m', 'true'), 't', 'fit: the weights are the last finite ones');
		my ($n, $nloss, $finite) = split /\|/, $node->safe_psql('postgres',
			"SELECT cardinality(metrics_iters), cardinality(training_loss), "
			  . "(SELECT bool_and(l <> 'NaN'::float8 AND l NOT IN ('Infinity'::float8, '-Infinity'::float8)) "
			  . " FROM unnest(training_loss) l) FROM m_summary");
		cmp_ok($n, '>=', 1, 'fit: the metric history is kept');
		cmp_ok($n, '<', $n_iter, 'fit: ... up to the divergence');
		is($nloss, $n, 'fit: one loss per metrics point');
		is($finite, 't', 'fit: the kept losses are finite');
	}
}

$node->stop;
done_testing();
