#-------------------------------------------------------------------------
#
# 060_serving.pl
#	  predict_row inside queries (docs/serving.md): in a view, in a BEFORE
#	  INSERT trigger, in a parallel plan (EXPLAIN shows a Gather, workers
#	  launched) and on a hot-standby server (a streaming replica), each
#	  giving predict's classes; and the per-backend model cache is never
#	  stale: a session that has the model cached predicts with the new
#	  weights once another session updated them, on the primary and on
#	  the standby after replay.
#
# IDENTIFICATION
#	  test/t/060_serving.pl
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

my $primary = PostgreSQL::Test::Cluster->new('serving_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf',
	"max_worker_processes = 16\nmax_parallel_workers = 8\nlog_min_messages = warning\n");
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION madlib_dl');
load_iris($primary);
my $arch = iris_arch();
$primary->safe_psql('postgres', qq{
	SET client_min_messages = warning;
	SELECT madlib_dl.load_keras_model('arch', '$arch');
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'iris_packed', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.fit('iris_packed', 'm1', 'arch', 1, \$\$$COMPILE\$\$, 'batch_size=16, epochs=1, seed=1', 2);
	SELECT madlib_dl.fit('iris_packed', 'm2', 'arch', 1, \$\$$COMPILE\$\$, 'batch_size=16, epochs=5, seed=2', 6);
	SELECT madlib_dl.predict('m1', 'iris_data', 'id', 'attributes', 'pred1', 'response');
	SELECT madlib_dl.predict('m2', 'iris_data', 'id', 'attributes', 'pred2', 'response');
	SELECT madlib_dl.predict('m2', 'iris_data', 'id', 'attributes', 'prob2', 'prob');
	ALTER TABLE iris_data SET (parallel_workers = 2);
	CREATE VIEW scored AS SELECT id, madlib_dl.predict_row('m1', attributes) AS c FROM iris_data;
	CREATE TABLE incoming (id integer, attributes float8[], c text);
	CREATE FUNCTION score() RETURNS trigger LANGUAGE plpgsql AS \$\$
	BEGIN NEW.c := madlib_dl.predict_row('public.m1', NEW.attributes); RETURN NEW; END \$\$;
	CREATE TRIGGER score BEFORE INSERT ON incoming FOR EACH ROW EXECUTE FUNCTION score();
});
# the two models differ, so a stale model shows
my $differ_prob = $primary->safe_psql('postgres',
	"SELECT count(*) FROM iris_data WHERE madlib_dl.predict_row_prob('m1', attributes)"
	  . " <> madlib_dl.predict_row_prob('m2', attributes)");
cmp_ok($differ_prob, '>', 0, 'the two models give other probabilities');

my $parallel = "SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; "
  . "SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;";
my $same_as = sub {
	my ($node, $model, $pred, $extra) = @_;
	return $node->safe_psql('postgres', ($extra // '')
		  . " SELECT count(*) FILTER (WHERE madlib_dl.predict_row('$model', d.attributes) = p.class_value)"
		  . " FROM iris_data d JOIN $pred p ON p.id = d.id");
};

# view, trigger, parallel plan on the primary
is($primary->safe_psql('postgres',
	'SELECT count(*) FROM scored s JOIN pred1 p ON p.id = s.id WHERE s.c = p.class_value'),
	'150', 'in a view: predict\'s class for every row');
$primary->safe_psql('postgres',
	'INSERT INTO incoming (id, attributes) SELECT id, attributes FROM iris_data');
is($primary->safe_psql('postgres',
	'SELECT count(*) FROM incoming i JOIN pred1 p ON p.id = i.id WHERE i.c = p.class_value'),
	'150', 'in a BEFORE INSERT trigger: predict\'s class for every row');
like($primary->safe_psql('postgres', "$parallel EXPLAIN (COSTS OFF) "
	  . "SELECT count(madlib_dl.predict_row('m1', attributes)) FROM iris_data"),
	qr/Gather.*Parallel Seq Scan/s, 'a parallel plan (Gather)');
like($primary->safe_psql('postgres', "$parallel EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
	  . "SELECT count(madlib_dl.predict_row('m1', attributes)) FROM iris_data"),
	qr/Workers Launched: [12]/, 'parallel workers launched');
is($same_as->($primary, 'm1', 'pred1', $parallel), '150', 'in a parallel plan: predict\'s class for every row');

# the cache is never stale: a session holds m1 cached, another updates it
my $s = bg_session($primary);
bg_send($s, "SELECT 'c=' || count(*) FILTER (WHERE madlib_dl.predict_row('m1', d.attributes) = p.class_value)"
	  . " FROM iris_data d JOIN pred1 p ON p.id = d.id;");
my ($out, $err) = bg_finish($s, 60);
like($out, qr/c=150/, 'session 1 predicts with m1 (now cached)');
bg_send($s, "SELECT 'n=' || count(*) FROM madlib_dl.model_cache() WHERE model_table = 'm1'::regclass;");
($out, $err) = bg_finish($s, 60);
like($out, qr/n=1/, 'm1 is in session 1\'s cache');
$primary->safe_psql('postgres', 'UPDATE m1 SET model_weights = (SELECT model_weights FROM m2)');
bg_send($s, "SELECT 'c=' || count(*) FILTER (WHERE madlib_dl.predict_row_prob('m1', d.attributes)"
	  . " = madlib_dl.predict_row_prob('m2', d.attributes)) FROM iris_data d;");
($out, $err) = bg_finish($s, 60);
like($out, qr/c=150/, 'after another session updated the weights, session 1 predicts with the new ones');
# the new weights also in a parallel plan of session 1 (its workers load them)
bg_send($s, "$parallel SELECT 'c=' || count(*) FILTER (WHERE madlib_dl.predict_row('m1', d.attributes) = p.class_value)"
	  . " FROM iris_data d JOIN pred2 p ON p.id = d.id;");
($out, $err) = bg_finish($s, 60);
like($out, qr/c=150/, 'and in a parallel plan');
# and back
$primary->safe_psql('postgres', 'UPDATE m1 SET model_weights = (SELECT model_weights FROM m2 WHERE false)');
bg_send($s, "SELECT madlib_dl.predict_row('m1', ARRAY[1, 2, 3, 4]);");
($out, $err) = bg_finish($s, 60);
like($err, qr/no model_arch or no model_weights/, 'weights set to NULL: an error, not the cached model');

# a hot standby
$primary->safe_psql('postgres', 'UPDATE m1 SET model_weights = (SELECT model_weights FROM arch WHERE false)');
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('serving_standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->append_conf('postgresql.conf', "hot_standby = on\nmax_worker_processes = 16\nmax_parallel_workers = 8\n");
$standby->start;
$primary->safe_psql('postgres', 'UPDATE m1 SET model_weights = (SELECT model_weights FROM m2)');
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
is($same_as->($standby, 'm2', 'pred2'), '150', 'on the standby: predict\'s class for every row');
like($standby->safe_psql('postgres', "$parallel EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
	  . "SELECT count(madlib_dl.predict_row('m2', attributes)) FROM iris_data"),
	qr/Gather.*Workers Launched: [12]/s, 'on the standby: a parallel plan, workers launched');
is($same_as->($standby, 'm2', 'pred2', $parallel), '150', 'on the standby in a parallel plan: predict\'s class');
is($standby->safe_psql('postgres',
	"SELECT count(*) FROM iris_data d JOIN prob2 p ON p.id = d.id, m2_summary s"
	  . " WHERE abs(p.prob - (madlib_dl.predict_row_prob('m2', d.attributes))["
	  . "array_position(s.class_text_class_values, p.class_value)]) < 1e-6"),
	'450', 'on the standby: predict\'s probabilities');
# standby cache under replay: a standby session caches m1, the primary updates it
my $ss = bg_session($standby);
bg_send($ss, "SELECT 'c=' || count(*) FILTER (WHERE madlib_dl.predict_row('m1', d.attributes) = p.class_value)"
	  . " FROM iris_data d JOIN pred2 p ON p.id = d.id;");
($out, $err) = bg_finish($ss, 60);
like($out, qr/c=150/, 'standby session: m1 holds m2\'s weights');
$primary->safe_psql('postgres', 'UPDATE m1 SET model_weights = (SELECT model_weights FROM arch WHERE model_id = 1)');
$primary->safe_psql('postgres', "SELECT madlib_dl.load_keras_model('arch', '$arch', (SELECT model_weights FROM m2), 'w')");
$primary->safe_psql('postgres', 'UPDATE m1 SET model_weights = (SELECT model_weights FROM arch WHERE model_id = 2)');
$primary->wait_for_catchup($standby, 'replay');
bg_send($ss, "SELECT 'c=' || count(*) FILTER (WHERE madlib_dl.predict_row_prob('m1', d.attributes)"
	  . " = madlib_dl.predict_row_prob('arch', d.attributes, 2)) FROM iris_data d;");
($out, $err) = bg_finish($ss, 60);
like($out, qr/c=150/, 'standby session after replay of new weights: the new weights');
# nothing written on the standby: registry and deploy refuse there, predict_row does not
$standby->psql('postgres', "SELECT madlib_dl.deploy('public.m1')", stderr => \$err);
like($err, qr/read-only|recovery/, 'deploy on the standby: refused (read-only)');

$s->quit;
$ss->quit;
$standby->stop;
$primary->stop;
done_testing();
