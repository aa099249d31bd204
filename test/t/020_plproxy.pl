#-------------------------------------------------------------------------
#
# 020_plproxy.pl
#	  fit_multiple across three PostgreSQL servers with PL/Proxy: a
#	  coordinator and two data nodes on localhost.  The iris table is
#	  preprocessed on the coordinator with 4 and with 2 segments,
#	  distributed to the nodes (segment k on node k % 2), and trained over
#	  the cluster with K = 3 models (K < N = 4 and K > N = 2).  The weights
#	  must be byte-identical to the single-server fit_multiple on the same
#	  packed table.  Then a data node is stopped in the middle of a run:
#	  the coordinator gets an error naming the node and writes nothing.
#	  Skipped when PL/Proxy is not installed.
#
# IDENTIFICATION
#	  test/t/020_plproxy.pl
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

my $coord = new_node('px_coord');
if ($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_available_extensions WHERE name = 'plproxy'") eq '0')
{
	$coord->stop;
	plan skip_all => 'PL/Proxy is not installed (Debian package postgresql-15-plproxy)';
}
my @nodes = (new_node('px_node1'), new_node('px_node2'));

# Without plproxy the proxy functions are absent; plproxy_setup makes them.
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc WHERE proname = '_px_train'"), '0',
	'no proxy functions before plproxy is installed');
$coord->safe_psql('postgres', 'CREATE EXTENSION plproxy; SELECT madlib_dl.plproxy_setup();');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e' "
		  . "WHERE p.proname IN ('_px_prepare', '_px_insert', '_px_train', '_px_eval')"), '4',
	'plproxy_setup makes the 4 proxy functions, members of the extension');

my $conns = join(', ',
	map { "\$\$host=" . $_->host . ' port=' . $_->port . " dbname=postgres\$\$" } @nodes);
$coord->safe_psql('postgres', qq{
	SELECT madlib_dl.plproxy_create_cluster('c4', ARRAY[$conns], 4);
	SELECT madlib_dl.plproxy_create_cluster('c2', ARRAY[$conns], 2);
});

load_iris($coord);
my $arch = iris_arch();
$coord->safe_psql('postgres', qq{
	SELECT madlib_dl.load_keras_model('arch', '$arch');
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'p4', 'class_text', 'attributes',
		NULL, 1.0, NULL, '4');
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'p2', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'v', 'class_text', 'attributes', 'p4');
});

my ($rc, $out, $err);

# --- distribution -----------------------------------------------------
for my $t ('p4', 'p2')
{
	my $c = $t eq 'p4' ? 'c4' : 'c2';
	my $nbuf = $coord->safe_psql('postgres', "SELECT count(*) FROM $t");
	# batches of 3 buffers: several insert calls per node
	is($coord->safe_psql('postgres', "SELECT madlib_dl.plproxy_distribute('$t', '$c', 3)"),
		$nbuf, "$t: plproxy_distribute sends every buffer");
	# again: replaces the rows, no duplicates
	$coord->safe_psql('postgres', "SELECT madlib_dl.plproxy_distribute('$t', '$c', 3)");
	my $rows_sql = "SELECT __dist_key__ || ':' || md5(string_agg(t::text, '|' ORDER BY buffer_id)) "
	  . "FROM $t t GROUP BY __dist_key__ ORDER BY __dist_key__";
	my %want = map { (split /:/)[0] => $_ }
	  split /\n/, $coord->safe_psql('postgres', $rows_sql);
	for my $i (0, 1)
	{
		my @got = split /\n/, $nodes[$i]->safe_psql('postgres', $rows_sql);
		my @segs = map { (split /:/)[0] } @got;
		my @expect_segs = grep { $_ % 2 == $i } sort { $a <=> $b } keys %want;
		is("@segs", "@expect_segs", "$t: node " . ($i + 1) . " holds segments @expect_segs");
		is(join(',', @got), join(',', map { $want{$_} } @expect_segs),
			"$t: node " . ($i + 1) . " rows equal the coordinator's");
	}
}
($rc, $out, $err) = $coord->psql('postgres', "SELECT madlib_dl.plproxy_distribute('p2', 'c4')");
like($err, qr/packed_table "(public\.)?p2" was preprocessed for 2 segments, cluster "c4" has 4 partitions/,
	'a table preprocessed for another segment count is refused');
is($coord->safe_psql('postgres',
		"SELECT string_agg(table_name || ':' || cluster || ':' || num_segments, ',' ORDER BY table_name) "
		  . "FROM madlib_dl.plproxy_tables"), 'p2:c2:2,p4:c4:4',
	'plproxy_tables records the distributed tables');

# --- fit_multiple over the cluster vs one server -----------------------
$coord->safe_psql('postgres', qq{
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
		ARRAY[\$\$$COMPILE\$\$, \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']\$\$],
		ARRAY['batch_size=16, epochs=2', 'batch_size=8, epochs=1']);
});
is($coord->safe_psql('postgres', 'SELECT count(*) FROM mst'), '4', '4 model configurations');

# The arguments of _fit_multiple_run / _px_fit_multiple_run for $tbl.
sub run_call
{
	my ($fn, $tbl, $nseg, $iters, $val, $maxkey) = @_;
	$maxkey //= 3;
	my $v = $val ? "'v', 'attributes', 'class_text'" : 'NULL, NULL, NULL';
	return "SELECT r.* FROM (SELECT array_agg(m.mst_key ORDER BY m.mst_key) AS k,"
	  . " array_agg(a.model_arch::text ORDER BY m.mst_key) AS ar,"
	  . " array_agg(a.model_weights ORDER BY m.mst_key) AS w,"
	  . " array_agg(m.compile_params::text ORDER BY m.mst_key) AS c,"
	  . " array_agg(m.fit_params::text ORDER BY m.mst_key) AS f"
	  . " FROM mst m JOIN arch a ON a.model_id = m.model_id WHERE m.mst_key <= $maxkey) x,"
	  . " madlib_dl.$fn('$tbl', 'attributes', 'class_text', $v, x.k, x.ar, x.w, x.c, x.f,"
	  . " $iters, 1, $nseg, 1) r";
}

for my $case (['p4', 4, 'K < N'], ['p2', 2, 'K > N'])
{
	my ($t, $n, $what) = @$case;
	my $cols = 'mst_key, md5(model_weights), status, schedule, metrics_iters';
	my $one = $coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT $cols FROM ("
		  . run_call('_fit_multiple_run', $t, $n, 2, 1) . ") s ORDER BY 1");
	my $px = $coord->safe_psql('postgres',
		"SET client_min_messages = warning; CREATE TABLE px_$t AS "
		  . run_call('_px_fit_multiple_run', $t, $n, 2, 1)
		  . "; SELECT $cols FROM px_$t ORDER BY 1");
	is(scalar(split /\n/, $px), 3, "$t ($what): 3 models trained over the cluster");
	is($px, $one, "$t ($what): weights byte-identical to one server (3 models, $n segments)");
	# the metrics: same values (sums over segments, to rounding)
	is($coord->safe_psql('postgres', qq{
		SET client_min_messages = warning;
		SELECT bool_and(abs(a.training_loss[2] - b.training_loss[2]) < 1e-6
		            AND abs(a.training_metrics[2] - b.training_metrics[2]) < 1e-6
		            AND abs(a.validation_loss[2] - b.validation_loss[2]) < 1e-6
		            AND a.training_loss[2] > 0)
		  FROM px_$t a JOIN (} . run_call('_fit_multiple_run', $t, $n, 2, 1) . qq{) b USING (mst_key)}),
		't', "$t ($what): training and validation loss/metric as on one server");
	# every visit ran on its node: each node's segments served the hops
}

# --- fit (model averaging) over the cluster vs one server --------------
for my $case (['p4', 4], ['p2', 2])
{
	my ($t, $n) = @$case;
	my $args = "'$t', 'attributes', 'class_text', 'v', 'attributes', 'class_text', "
	  . "(SELECT model_arch FROM arch WHERE model_id = 1), NULL, \$\$$COMPILE\$\$, "
	  . "'batch_size=16, epochs=2', 3, 1";
	my $cols = 'md5(r.model_weights), r.metrics_iters';
	my $one = $coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT $cols FROM madlib_dl._fit_run($args, $n) r");
	my $px = $coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT $cols FROM madlib_dl._px_fit_run($args) r");
	like($px, qr/^[0-9a-f]{32}\|\{1,2,3\}$/, "$t: fit over the cluster returns weights");
	is($px, $one, "$t: fit over the cluster is byte-identical to one server ($n segments)");
	is($coord->safe_psql('postgres', qq{
		SET client_min_messages = warning;
		SELECT abs(a.training_loss[3] - b.training_loss[3]) < 1e-6
		   AND abs(a.validation_metrics[3] - b.validation_metrics[3]) < 1e-6
		  FROM madlib_dl._px_fit_run($args) a, madlib_dl._fit_run($args, $n) b}),
		't', "$t: fit's losses and metrics as on one server");
}

# --- the public API, when fit / fit_multiple dispatch to this path -----
my $dispatch = $coord->safe_psql('postgres',
	"SELECT count(*) FROM pg_proc WHERE proname = '_fit_multiple' "
	  . "AND prosrc LIKE '%_px_fit_multiple_run%'");
SKIP:
{
	skip 'fit_multiple does not dispatch to the PL/Proxy path yet', 2 if $dispatch eq '0';
	$coord->safe_psql('postgres', "SET client_min_messages = warning; "
		  . "SELECT madlib_dl.fit_multiple('p4', 'api_out', 'mst', 2, FALSE, 'v', 1)");
	is($coord->safe_psql('postgres', 'SELECT count(*) FROM api_out'), '4',
		'fit_multiple on a distributed table writes one row per model');
	is($coord->safe_psql('postgres',
			"SELECT string_agg(md5(model_weights), ',' ORDER BY mst_key) FROM api_out"),
		$coord->safe_psql('postgres',
			"SET client_min_messages = warning; SELECT string_agg(md5(model_weights), ',' ORDER BY mst_key) FROM ("
			  . run_call('_fit_multiple_run', 'p4', 4, 2, 1, 4) . ") r"),
		'fit_multiple on a distributed table: byte-identical to one server');
}
my $fit_dispatch = $coord->safe_psql('postgres',
	"SELECT count(*) FROM pg_proc WHERE proname = '_fit' AND prosrc LIKE '%_px_fit_run%'");
SKIP:
{
	skip 'fit does not dispatch to the PL/Proxy path yet', 1 if $fit_dispatch eq '0';
	$coord->safe_psql('postgres', "SET client_min_messages = warning; "
		  . "SELECT madlib_dl.fit('p2', 'api_fit', 'arch', 1, \$\$$COMPILE\$\$, "
		  . "'batch_size=16, epochs=2', 3, FALSE, 'v', 1)");
	is($coord->safe_psql('postgres', 'SELECT md5(model_weights) FROM api_fit'),
		$coord->safe_psql('postgres', "SET client_min_messages = warning; "
			  . "SELECT md5(r.model_weights) FROM madlib_dl._fit_run('p2', 'attributes', 'class_text', "
			  . "'v', 'attributes', 'class_text', (SELECT model_arch FROM arch WHERE model_id = 1), NULL, "
			  . "\$\$$COMPILE\$\$, 'batch_size=16, epochs=2', 3, 1, 2) r"),
		'fit on a distributed table: byte-identical to one server');
}

# A table not distributed, and a cluster of the wrong size.
($rc, $out, $err) = $coord->psql('postgres', run_call('_px_fit_multiple_run', 'v', 4, 1, 0));
like($err, qr/is not distributed over a PL\/Proxy cluster/, 'a local table is refused');

# A node that lost its share: the remote error names the node.
$nodes[0]->safe_psql('postgres', 'ALTER TABLE p2 RENAME TO p2_away');
($rc, $out, $err) = $coord->psql('postgres', run_call('_px_fit_multiple_run', 'p2', 2, 1, 0));
like($err, qr/ERROR:  PL\/Proxy cluster "c2": .*REMOTE ERROR: table "public.p2" does not exist on data node px_node1/,
	'a node without the table: error naming the node');
$nodes[0]->safe_psql('postgres', 'ALTER TABLE p2_away RENAME TO p2');

# --- a data node fails in the middle of a run --------------------------
# Through fit_multiple when it dispatches here (no model, _info or
# _summary table may be left), else through the driver in a CTAS.
my $s = bg_session($coord);
bg_send($s, $dispatch eq '0'
	? 'CREATE TABLE px_fail AS ' . run_call('_px_fit_multiple_run', 'p4', 4, 2000, 0) . ';'
	: "SELECT madlib_dl.fit_multiple('p4', 'px_fail', 'mst', 2000, FALSE, NULL, 1);");
ok(bg_wait_stderr($s, qr/iteration 2 of 2000/, 60), 'a long run is under way');
$nodes[1]->stop('immediate');
my ($o, $e) = bg_finish($s, 60);
like($e, qr/ERROR/, 'the run fails');
my $port2 = $nodes[1]->port;
like($e,
	qr/ERROR:  data node of PL\/Proxy cluster "c4" failed: segment 1 on node "host=\S+ port=$port2 dbname=postgres", segment 3 on node "host=\S+ port=$port2 dbname=postgres"/,
	'the error names the failed node and its segments');
unlike($e, qr/ERROR:.*\n(.*\n)*.*ERROR:/, 'one error only');
note("error was: $e");
is(tables_like($coord, 'postgres', 'px_fail%'), '', 'the coordinator wrote no output table');
$s->quit;

# The other node is fine and the run works again once node 2 is back.
$nodes[1]->start;
is($coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT count(*) FROM ("
		  . run_call('_px_fit_multiple_run', 'p4', 4, 1, 0) . ") r"), '3',
	'after the node restarts, training over the cluster works again');

# DROP EXTENSION takes the proxy functions and the catalog with it.
$coord->safe_psql('postgres', 'DROP EXTENSION madlib_dl');
is($coord->safe_psql('postgres',
		"SELECT coalesce(string_agg(oid::regprocedure::text, ','), '') "
		  . "|| coalesce(to_regclass('madlib_dl.plproxy_tables')::text, '') FROM pg_proc "
		  . "WHERE proname LIKE '\\_px\\_%' OR pronamespace::regnamespace::text = 'madlib_dl'"),
	'', 'DROP EXTENSION madlib_dl drops every PL/Proxy object of madlib_dl');

# With plproxy already there, CREATE EXTENSION madlib_dl makes the proxy
# functions itself.
$coord->safe_psql('postgres', 'CREATE EXTENSION madlib_dl');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'plproxy' "
		  . "JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e' WHERE p.proname LIKE '\\_px\\_%'"),
	'5', 'CREATE EXTENSION after plproxy makes the 5 proxy functions');

$_->stop for ($coord, @nodes);
done_testing();
