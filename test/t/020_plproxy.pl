#-------------------------------------------------------------------------
#
# 020_plproxy.pl
#	  fit and fit_multiple across three PostgreSQL servers with PL/Proxy:
#	  a coordinator and two data nodes on localhost.  The iris table is
#	  preprocessed on the coordinator with 4 and with 2 segments,
#	  distributed to the nodes (segment k on node k % 2), and trained over
#	  the cluster (the plproxy transport): fit, and fit_multiple with K = 3
#	  models (K < N = 4 and K > N = 2), also with a segment without rows
#	  and with training that diverges on one segment, and a model of two
#	  inputs and two outputs on a table of four variables (MADlib's
#	  multi-io layout).  Each is compared
#	  with a job that differs only in its transport (workers, on the
#	  coordinator's copy of the table): byte-identical weights and the
#	  same metrics.  Then a data node is stopped in the middle of a run:
#	  the coordinator gets an error naming the node and writes nothing.
#	  Security: a hostile cluster name cannot add conninfo keywords, nodes'
#	  conninfos may not carry credentials, error reports strip quoted
#	  passwords; non-superusers distribute only their own tables, and a
#	  call that must fail (catalog rights, ownership, cluster USAGE, user
#	  mapping, a node refusing the rows) fails before any node's table
#	  changes; plproxy_tables follows the table's OID through renames and
#	  drops, and sweeps stale rows.
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
		"SELECT count(*) FROM pg_proc WHERE proname = '_px_step'"), '0',
	'no proxy functions before plproxy is installed');
$coord->safe_psql('postgres', 'CREATE EXTENSION plproxy; SELECT madlib_dl.plproxy_setup();');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e' "
		  . "WHERE p.proname IN ('_px_prepare', '_px_insert', '_px_publish', '_px_step', '_px_release', "
		  . "'_px_ping')"), '6',
	'plproxy_setup makes the 6 proxy functions, members of the extension');

my $conns = join(', ',
	map { "\$\$host=" . $_->host . ' port=' . $_->port . " dbname=postgres\$\$" } @nodes);
$coord->safe_psql('postgres', qq{
	SELECT madlib_dl.plproxy_create_cluster('c4', ARRAY[$conns], 4);
	SELECT madlib_dl.plproxy_create_cluster('c2', ARRAY[$conns], 2);
	CREATE USER MAPPING FOR CURRENT_USER SERVER c4;
	CREATE USER MAPPING FOR CURRENT_USER SERVER c2;
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
		is($nodes[$i]->safe_psql('postgres',
				"SELECT string_agg(attstorage::text, ',') FROM pg_attribute "
				  . "WHERE attrelid = '$t'::regclass AND atttypid = 'bytea'::regtype"),
			'e,e', "$t: node " . ($i + 1) . " stores the buffers out of line, uncompressed");
	}
}
($rc, $out, $err) = $coord->psql('postgres', "SELECT madlib_dl.plproxy_distribute('p2', 'c4')");
like($err, qr/packed_table "(public\.)?p2" was preprocessed for 2 segments, cluster "c4" has 4 partitions/,
	'a table preprocessed for another segment count is refused');
is($coord->safe_psql('postgres',
		"SELECT string_agg(table_name || ':' || cluster || ':' || num_segments, ',' ORDER BY table_name) "
		  . "FROM madlib_dl.plproxy_tables"), 'p2:c2:2,p4:c4:4',
	'plproxy_tables records the distributed tables');
is($coord->safe_psql('postgres',
		"SELECT string_agg(relid::text, ',' ORDER BY relid::text) FROM madlib_dl.plproxy_tables"),
	'p2,p4', 'plproxy_tables is keyed by the tables (regclass)');

# Rows of $tbl on each node, as "segment:md5" lines ('' when absent).
sub node_rows
{
	my ($i, $tbl) = @_;
	return '' if $nodes[$i]->safe_psql('postgres', "SELECT to_regclass('$tbl') IS NULL") eq 't';
	return $nodes[$i]->safe_psql('postgres',
		"SELECT coalesce(string_agg(s, ','), '') FROM "
		  . "(SELECT __dist_key__ || ':' || md5(string_agg(t::text, '|' ORDER BY buffer_id)) AS s "
		  . "FROM $tbl t GROUP BY __dist_key__ ORDER BY __dist_key__) x");
}

# --- a hostile cluster name cannot add conninfo keywords ---------------
# Pasted unquoted into application_name=..., this name would end the
# value at the blank and add dbname=template1 (which has no madlib_dl)
# and a user (with any "user=" in the conninfo PL/Proxy also stops
# adding the session user).
my $evil = q{o'k dbname=template1 user=x application_name=z};
my $node0 = "host=" . $nodes[0]->host . ' port=' . $nodes[0]->port . " dbname=postgres";
$coord->safe_psql('postgres', qq{
	SELECT madlib_dl.plproxy_create_cluster(\$q\$$evil\$q\$, ARRAY[$conns], 2);
	SELECT format('CREATE USER MAPPING FOR CURRENT_USER SERVER %I', \$q\$$evil\$q\$) \\gexec
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'pq', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
});
is($coord->safe_psql('postgres',
		"SELECT o FROM pg_foreign_server s, unnest(s.srvoptions) o "
		  . "WHERE s.srvname = \$q\$$evil\$q\$ AND o LIKE 'p0=%'"),
	"p0=$node0 application_name='madlib_dl_o_k_dbname_template1_user_x_application_name_z_p0'",
	'the cluster name is reduced to letters, digits and _ and quoted in the partitions\' conninfo');
($rc, $out, $err) = $coord->psql('postgres',
	"SELECT madlib_dl.plproxy_distribute('pq', \$q\$$evil\$q\$)");
is($out, $coord->safe_psql('postgres', 'SELECT count(*) FROM pq'),
	'plproxy_distribute over a cluster with a hostile name works')
  or diag($err);
ok(node_rows(0, 'public.pq') ne '' && node_rows(1, 'public.pq') ne '',
	'the rows went to the nodes\' database postgres, not to the name\'s dbname');

# Credentials in the nodes' conninfos are refused (every role can read
# server options, and PL/Proxy would connect every role as that user).
for my $bad ('user=postgres', "password='x'", 'user = x')
{
	($rc, $out, $err) = $coord->psql('postgres',
		"SELECT madlib_dl.plproxy_create_cluster('cbad', ARRAY[\$q\$$node0 $bad\$q\$], 1)");
	like($err, qr/ERROR:  conninfo 1 of nodes names a user or password/, "a node conninfo with $bad is refused");
}

# The error report strips quoted values (with blanks, \ and ') of
# application_name and password from the conninfo of a node that is down
# (here a server defined by hand, with a password in its options).
my $dead = q{dead\\ 'c' host=/nonexistent};
$coord->safe_psql('postgres', qq{
	SELECT format('CREATE SERVER %I FOREIGN DATA WRAPPER plproxy OPTIONS (p0 %L)', \$q\$$dead\$q\$,
		\$q\$host=/nonexistent port=1 dbname=postgres password='se cr\\'et \\\\ x' application_name='a b\\' c'\$q\$) \\gexec
	SELECT format('CREATE USER MAPPING FOR CURRENT_USER SERVER %I', \$q\$$dead\$q\$) \\gexec
});
($rc, $out, $err) = $coord->psql('postgres',
	"SELECT madlib_dl._px_rethrow(\$q\$$dead\$q\$, 'XX000', 'boom', NULL, NULL)");
like($err, qr/ERROR:  data node of PL\/Proxy cluster "\Q$dead\E" failed: segment 0 on node "host=\/nonexistent port=1 dbname=postgres"\n/,
	'a failed node is named by its conninfo without password or application_name');

# --- non-superusers distributing -----------------------------------------
# alice owns alice.pa; bob owns bob.pb, which alice may read.  Both may
# use cluster c2 (USAGE and their own user mapping); on the nodes they
# own their schemas and alice may also write in bob's.
my $roles = q{
	CREATE ROLE alice LOGIN;
	CREATE ROLE bob LOGIN;
	GRANT USAGE ON SCHEMA madlib_dl TO alice, bob;
	CREATE SCHEMA alice AUTHORIZATION alice;
	CREATE SCHEMA bob AUTHORIZATION bob;
	GRANT USAGE, CREATE ON SCHEMA bob TO alice;
};
$_->safe_psql('postgres', $roles) for ($coord, @nodes);
$coord->safe_psql('postgres', q{
	GRANT SELECT ON iris_data TO alice, bob;
	GRANT USAGE ON FOREIGN SERVER c2 TO alice, bob;
	CREATE USER MAPPING FOR alice SERVER c2;
	CREATE USER MAPPING FOR bob SERVER c2;
});
sub as_role
{
	my ($role, $sql) = @_;
	my ($o, $e);
	my $r = $coord->psql('postgres',
		"\\set VERBOSITY verbose\nSET client_min_messages = warning;\n$sql",
		stdout => \$o, stderr => \$e, extra_params => [ '-U', $role ]);
	return ($r, $o, $e);
}
as_role('bob', q{
	SELECT madlib_dl.training_preprocessor_dl('public.iris_data', 'bob.pb', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
	GRANT SELECT ON bob.pb, bob.pb_summary TO alice;});
as_role('alice', q{
	SELECT madlib_dl.training_preprocessor_dl('public.iris_data', 'alice.pa', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');});
my $nothing_on_nodes = sub {
	my ($tbl) = @_;
	return join(',', map { $_->safe_psql('postgres', "SELECT to_regclass('$tbl') IS NULL") } @nodes);
};

# 1. No right to record the table in the catalog: refused before any row
# is sent (it used to load the nodes and fail at the end).
($rc, $out, $err) = as_role('alice', "SELECT madlib_dl.plproxy_distribute('alice.pa', 'c2')");
like($err, qr/ERROR:  42501: permission denied to record table "alice\.pa" in madlib_dl\.plproxy_tables/,
	'alice without rights on plproxy_tables: 42501 before any work');
is($nothing_on_nodes->('alice.pa'), 't,t', '... and the nodes got nothing, not even the table');

# 2. With INSERT, UPDATE on the catalog she distributes her own table.
$coord->safe_psql('postgres', 'GRANT INSERT, UPDATE ON madlib_dl.plproxy_tables TO alice');
($rc, $out, $err) = as_role('alice', "SELECT madlib_dl.plproxy_distribute('alice.pa', 'c2')");
is($out, $coord->safe_psql('postgres', 'SELECT count(*) FROM alice.pa'),
	'alice distributes her own table') or diag($err);
my @pa_rows = (node_rows(0, 'alice.pa'), node_rows(1, 'alice.pa'));
ok($pa_rows[0] =~ /^0:/ && $pa_rows[1] =~ /^1:/, 'alice.pa: each node holds its segment');

# 3. Not someone else's table, even one she can read.
($rc, $out, $err) = as_role('alice', "SELECT madlib_dl.plproxy_distribute('bob.pb', 'c2')");
like($err, qr/ERROR:  42501: must be owner of table "bob\.pb" to distribute it/,
	'alice cannot distribute bob\'s table');
is($nothing_on_nodes->('bob.pb'), 't,t', '... and the nodes got nothing');
($rc, $out, $err) = as_role('alice',
	"INSERT INTO madlib_dl.plproxy_tables VALUES ('bob.pb', 'bob', 'pb', 'c2', 2)");
like($err, qr/ERROR:  42501: new row violates row-level security policy/,
	'nor record it in plproxy_tables by hand');

# 4. A cluster she may not use, or has no user mapping for: refused first.
($rc, $out, $err) = as_role('alice', "SELECT madlib_dl.plproxy_distribute('alice.pa', \$q\$$evil\$q\$)");
like($err, qr/ERROR:  42501: permission denied for PL\/Proxy cluster "\Q$evil\E": role "alice" has no USAGE/,
	'no USAGE on the cluster: 42501 before any work');
$coord->safe_psql('postgres', qq{SELECT format('GRANT USAGE ON FOREIGN SERVER %I TO alice', \$q\$$evil\$q\$) \\gexec});
($rc, $out, $err) = as_role('alice', "SELECT madlib_dl.plproxy_distribute('alice.pa', \$q\$$evil\$q\$)");
like($err, qr/ERROR:  42704: role "alice" has no user mapping for PL\/Proxy cluster/,
	'no user mapping: 42704 before any work');
is(join(',', node_rows(0, 'alice.pa'), node_rows(1, 'alice.pa')), join(',', @pa_rows),
	'alice.pa on the nodes is unchanged');

# 5. One node refuses the rows (alice may not INSERT into alice.pa on
# node 2): every node is checked before any write, so no node's rows
# change (the segments used to be emptied first, then the insert failed).
$nodes[1]->safe_psql('postgres', 'REVOKE INSERT ON alice.pa FROM alice');
($rc, $out, $err) = as_role('alice', "SELECT madlib_dl.plproxy_distribute('alice.pa', 'c2')");
like($err, qr/role "alice" may not INSERT table "alice\.pa" on data node px_node2/,
	'a node that refuses the load: error naming it');
is(join(',', node_rows(0, 'alice.pa'), node_rows(1, 'alice.pa')), join(',', @pa_rows),
	'... and no node\'s rows changed');
$nodes[1]->safe_psql('postgres', 'GRANT INSERT ON alice.pa TO alice');

# A training job on $tbl: transport 'workers' (on the coordinator's copy,
# $nseg segments) or undef (what fit chooses: the cluster the table was
# distributed over); $val: with the validation table v; the models of mst
# with mst_key <= $maxkey (default 3), or for fit the architecture
# $model_id with $compile.
sub job_sql
{
	my (%a) = @_;
	my $tr = $a{transport} ? "'$a{transport}'" : 'NULL';
	my $n = $a{nseg} // 'NULL';
	my $v = $a{val}
	  ? "validation => 'v', val_x_col => 'attributes', val_y_col => 'class_text',"
	  : '';
	my $models = defined $a{model_id}
	  ? "ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = $a{model_id})], ARRAY[\$\$$a{compile}\$\$],"
	  . " $a{iters}, fit_params => ARRAY['batch_size=16, epochs=2'],"
	  : "x.ar, x.c, $a{iters}, fit_params => x.f, init_weights => x.w, mst_keys => x.k,";
	my $avg = defined $a{period}
	  ? " averaging_period => $a{period}, lr_scaling => " . ($a{scaling} ? "'$a{scaling}'" : 'NULL') . ','
	  : '';
	return "madlib_dl._make_train_job('$a{tbl}', 'attributes', 'class_text', $models $v $avg"
	  . " metrics_compute_frequency => 1, num_segments => $n, transport => $tr)";
}

# fit_multiple of the models of mst (mst_key <= $maxkey) as job_sql.
sub mop_sql
{
	my (%a) = @_;
	my $maxkey = $a{maxkey} // 3;
	return "SELECT r.* FROM (SELECT array_agg(m.mst_key ORDER BY m.mst_key) AS k,"
	  . " array_agg(a.model_arch::text ORDER BY m.mst_key) AS ar,"
	  . " array_agg(a.model_weights ORDER BY m.mst_key) AS w,"
	  . " array_agg(m.compile_params::text ORDER BY m.mst_key) AS c,"
	  . " array_agg(m.fit_params::text ORDER BY m.mst_key) AS f"
	  . " FROM mst m JOIN arch a ON a.model_id = m.model_id WHERE m.mst_key <= $maxkey) x,"
	  . " madlib_dl._fit_multiple_run(" . job_sql(%a) . ") r";
}

# Compare fit_multiple over the cluster with the workers transport on
# $tbl ($n segments): weights, status, schedule and every metric equal.
sub mop_compare
{
	my ($tbl, $n, $what, %a) = @_;
	my $cols = 'mst_key, md5(model_weights), status, schedule, metrics_iters, training_loss, '
	  . 'training_metrics, validation_loss, validation_metrics';
	my $one = $coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT $cols FROM ("
		  . mop_sql(tbl => $tbl, nseg => $n, transport => 'workers', %a) . ") s ORDER BY 1");
	my $px = $coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT $cols FROM ("
		  . mop_sql(tbl => $tbl, %a) . ") s ORDER BY 1");
	is(scalar(split /\n/, $px), $a{maxkey} // 3, "$tbl ($what): every model trained over the cluster");
	is($px, $one, "$tbl ($what): weights and metrics identical to the workers transport ($n segments)");
	return $px;
}

# --- fit_multiple over the cluster vs one server -----------------------
$coord->safe_psql('postgres', qq{
	SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
		ARRAY[\$\$$COMPILE\$\$, \$\$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']\$\$],
		ARRAY['batch_size=16, epochs=2', 'batch_size=8, epochs=1']);
});
is($coord->safe_psql('postgres', 'SELECT count(*) FROM mst'), '4', '4 model configurations');
is($coord->safe_psql('postgres', "SELECT (madlib_dl._job_transport('p4')).*"), 'plproxy|c4|4',
	'a distributed table trains over its cluster, one segment per partition');

mop_compare('p4', 4, 'K < N', iters => 2, val => 1);
mop_compare('p2', 2, 'K > N', iters => 2, val => 1);

# --- madlib_keras_automl over the cluster vs one server ----------------
# Hyperband (every configuration in one session) and TPE (a session per
# batch): the same configurations, decisions and weights as on the workers
# transport, whose 4 segments are the cluster's 4 partitions.
my $am_cgrid = q|$${'loss': ['categorical_crossentropy'], 'metrics': ['accuracy'], |
  . q|'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.1, 'log']}]}$$|;
my $am_fgrid = q|$${'batch_size': [8, 16], 'epochs': [1]}$$|;
for my $m ([ 'hyperband', 'R=3, eta=3', 3 ], [ 'hyperopt', 'num_configs=3, num_iterations=2', 2 ])
{
	my ($method, $params, $iters) = @$m;
	my $run = sub {
		my ($tr) = @_;
		my $how = $tr ? "num_segments => 4, transport => '$tr'" : 'transport => NULL';
		return $coord->safe_psql('postgres',
			"SET client_min_messages = warning; SELECT string_agg(r.mst_key || ':' || md5(r.model_weights) "
			  . "|| ':' || r.rung_promoted::text || ':' || r.compile_params, ',' ORDER BY r.mst_key) "
			  . "FROM madlib_dl._automl_run(madlib_dl._make_train_job('p4', 'attributes', 'class_text', "
			  . "ARRAY[(SELECT model_arch::text FROM arch WHERE model_id = 1)], ARRAY[''], $iters, "
			  . "validation => 'v', val_x_col => 'attributes', val_y_col => 'class_text', "
			  . "mst_keys => ARRAY[1], $how), '$method', '$params', $am_cgrid, $am_fgrid, 7) r");
	};
	my $px = $run->(undef);
	like($px, qr/^1:[0-9a-f]{32}:/, "automl $method over the cluster trains its configurations");
	is($px, $run->('workers'), "automl $method over the cluster: identical to the workers transport");
}
$coord->safe_psql('postgres', "SET client_min_messages = warning; "
	  . "SELECT madlib_dl.madlib_keras_automl('p4', 'api_automl', 'arch', 'api_automl_mst', ARRAY[1], "
	  . "$am_cgrid, $am_fgrid, 'hyperband', 'R=3, eta=3', 7, NULL, FALSE, 'v')");
is($coord->safe_psql('postgres', 'SELECT count(*) FROM api_automl_info'), '5',
	'madlib_keras_automl on a distributed table writes its tables');

# --- fit (model averaging) over the cluster vs one server --------------
for my $case (['p4', 4], ['p2', 2])
{
	my ($t, $n) = @$case;
	my %f = (tbl => $t, model_id => 1, compile => $COMPILE, iters => 3, val => 1);
	my $cols = 'md5(r.model_weights), r.metrics_iters, r.training_loss, r.training_metrics, '
	  . 'r.validation_loss, r.validation_metrics, r.workers_launched';
	my $one = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl._fit_run(" . job_sql(%f, transport => 'workers', nseg => $n) . ") r");
	my $px = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl._fit_run(" . job_sql(%f) . ") r");
	like($px, qr/^[0-9a-f]{32}\|\{1,2,3\}\|/, "$t: fit over the cluster returns weights");
	is($px, $one, "$t: fit over the cluster: weights and metrics identical to the workers transport ($n segments)");
}

# --- every metric over the cluster: the metric sums (auc: 800) travel in
# the step results' metric_sums and are added in segment order
{
	my $c7 = "loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy', "
	  . "'top_2_accuracy', 'auc', 'precision', 'recall', 'mae', 'mse']";
	my %f = (tbl => 'p4', model_id => 1, compile => $c7, iters => 2, val => 1);
	my $cols = 'md5(r.model_weights), r.training_metrics, r.validation_metrics, r.metrics';
	my $one = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl._fit_run(" . job_sql(%f, transport => 'workers', nseg => 4) . ") r");
	my $px = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl._fit_run(" . job_sql(%f) . ") r");
	like($px, qr/"validation": \{.*"auc": \[[0-9.]+, [0-9.]+\]/, 'p4: every metric over the cluster, validation included');
	is($px, $one, 'p4: every metric over the cluster identical to the workers transport (4 segments)');
}

# --- fit averaging every few mini-batches over the cluster ---------------
# One proxy call per round of at most averaging_period mini-batches a
# segment: the bytes of the workers transport, and a last NOTICE with
# what a round costs beyond its slowest segment (the call and its states).
for my $case ([1, 'linear'], [3, undef])
{
	my ($p, $sc) = @$case;
	my %f = (tbl => 'p4', model_id => 1, compile => $COMPILE, iters => 2, val => 1,
		period => $p, scaling => $sc);
	my $cols = 'md5(r.model_weights), r.metrics_iters, r.training_loss, r.validation_loss';
	my $one = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl._fit_run(" . job_sql(%f, transport => 'workers', nseg => 4) . ") r");
	my ($stdout, $stderr);
	$coord->psql('postgres', "SELECT $cols FROM madlib_dl._fit_run(" . job_sql(%f) . ") r",
		stdout => \$stdout, stderr => \$stderr);
	is($stdout, $one,
		"p4, averaging_period $p: fit over the cluster identical to the workers transport");
	like($stderr, qr/fit averaged \d+ times \(averaging_period $p\)/,
		"p4, averaging_period $p: the rounds' NOTICE");
	note $1 if $stderr =~ /(fit averaged [^\n]*)/;
}

# --- a model of two inputs and two outputs over the cluster -------------
# MADlib's multi-io layout (one packed column per variable, _px_node_run
# reading every one): fit and fit_multiple over the cluster give the bytes
# and every metric, each output's included, of the workers transport.
my $mio_arch = '{"class_name": "Model", "config": {"name": "mio", "layers": ['
  . '{"class_name": "InputLayer", "name": "a", "config": {"name": "a", "batch_input_shape": [null, 4]}, "inbound_nodes": []}, '
  . '{"class_name": "InputLayer", "name": "b", "config": {"name": "b", "batch_input_shape": [null, 4]}, "inbound_nodes": []}, '
  . '{"class_name": "Dense", "name": "da", "config": {"name": "da", "units": 6, "activation": "relu"}, "inbound_nodes": [[["a", 0, 0, {}]]]}, '
  . '{"class_name": "Dense", "name": "db", "config": {"name": "db", "units": 6, "activation": "tanh"}, "inbound_nodes": [[["b", 0, 0, {}]]]}, '
  . '{"class_name": "Concatenate", "name": "cat", "config": {"name": "cat"}, "inbound_nodes": [[["da", 0, 0, {}], ["db", 0, 0, {}]]]}, '
  . '{"class_name": "Dense", "name": "c1", "config": {"name": "c1", "units": 3, "activation": "softmax"}, "inbound_nodes": [[["cat", 0, 0, {}]]]}, '
  . '{"class_name": "Dense", "name": "c2", "config": {"name": "c2", "units": 3, "activation": "softmax"}, "inbound_nodes": [[["db", 0, 0, {}]]]}], '
  . '"input_layers": [["a", 0, 0], ["b", 0, 0]], "output_layers": [["c1", 0, 0], ["c2", 0, 0]]}}';
$coord->safe_psql('postgres', qq{
	CREATE TABLE mio AS SELECT id, attributes, ARRAY(SELECT v * v FROM unnest(attributes) v) AS attributes2,
	       class_text, class_text AS class_text2 FROM iris_data;
	SELECT madlib_dl.load_keras_model('mio_arch', '$mio_arch');
	SELECT madlib_dl.training_preprocessor_dl('mio', 'mio4', 'class_text, class_text2',
		'attributes, attributes2', NULL, 1.0, NULL, '4');
	SELECT madlib_dl.validation_preprocessor_dl('mio', 'miov', 'class_text, class_text2',
		'attributes, attributes2', 'mio4');
});
is($coord->safe_psql('postgres', "SELECT madlib_dl.plproxy_distribute('mio4', 'c4')"),
	$coord->safe_psql('postgres', 'SELECT count(*) FROM mio4'), 'mio4: a table of four variables distributed');
for my $what ('_fit_run', '_fit_multiple_run')
{
	my $job = sub {
		my ($tr) = @_;
		my $how = $tr ? "num_segments => 4, transport => '$tr'" : 'transport => NULL';
		return "madlib_dl._make_train_job('mio4', NULL, NULL, "
		  . "ARRAY[(SELECT model_arch::text FROM mio_arch)], ARRAY[\$\$$COMPILE\$\$], 2, "
		  . "fit_params => ARRAY['batch_size=16, epochs=2'], validation => 'miov', "
		  . "metrics_compute_frequency => 1, $how, x_cols => ARRAY['attributes', 'attributes2'], "
		  . "y_cols => ARRAY['class_text', 'class_text2'], val_x_cols => ARRAY['attributes', 'attributes2'], "
		  . "val_y_cols => ARRAY['class_text', 'class_text2'])";
	};
	my $cols = 'md5(r.model_weights), r.training_loss, r.training_metrics, r.validation_loss, '
	  . 'r.validation_metrics, r.output_training_loss, r.output_training_metrics, '
	  . 'r.output_validation_loss, r.output_validation_metrics';
	my $one = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl.$what(" . $job->('workers') . ") r");
	my $px = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
		  . "madlib_dl.$what(" . $job->(undef) . ") r");
	like($px, qr/^[0-9a-f]{32}\|.*\|\{\{[-0-9.e]+,[-0-9.e]+\},\{[-0-9.e]+,[-0-9.e]+\}\}$/,
		"mio4: $what over the cluster gives weights and each output's metrics");
	is($px, $one, "mio4: $what over the cluster: weights and metrics identical to the workers transport");
}

# --- the public API on a distributed table -------------------------------
$coord->safe_psql('postgres', "SET client_min_messages = warning; "
	  . "SELECT madlib_dl.fit_multiple('p4', 'api_out', 'mst', 2, FALSE, 'v', 1)");
is($coord->safe_psql('postgres', 'SELECT count(*) FROM api_out'), '4',
	'fit_multiple on a distributed table writes one row per model');
is($coord->safe_psql('postgres',
		"SELECT string_agg(md5(model_weights), ',' ORDER BY mst_key) FROM api_out"),
	$coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT string_agg(md5(model_weights), ',' ORDER BY mst_key) FROM ("
		  . mop_sql(tbl => 'p4', nseg => 4, transport => 'workers', iters => 2, val => 1, maxkey => 4)
		  . ") r"),
	'fit_multiple on a distributed table: byte-identical to the workers transport');
$coord->safe_psql('postgres', "SET client_min_messages = warning; "
	  . "SELECT madlib_dl.fit('p2', 'api_fit', 'arch', 1, \$\$$COMPILE\$\$, "
	  . "'batch_size=16, epochs=2', 3, FALSE, 'v', 1)");
is($coord->safe_psql('postgres', 'SELECT md5(model_weights) FROM api_fit'),
	$coord->safe_psql('postgres', "SET client_min_messages = warning; "
		  . "SELECT md5(r.model_weights) FROM madlib_dl._fit_run("
		  . job_sql(tbl => 'p2', model_id => 1, compile => $COMPILE, iters => 3, val => 1,
			transport => 'workers', nseg => 2) . ") r"),
	'fit on a distributed table: byte-identical to the workers transport');

# --- the nodes' partitions across the hops of one call ---------------------
# px_cached runs _px_node_cached in the connection of one partition: the
# backend that serves the steps of that segment.
$_->safe_psql('postgres', q{
	CREATE FUNCTION public.px_cached(cluster text, part integer,
		OUT call_id bigint, OUT seg integer, OUT hits bigint) RETURNS SETOF record
	LANGUAGE sql AS $$ SELECT c.call_id, c.seg, c.hits FROM madlib_dl._px_node_cached() c $$;
}) for @nodes;
$coord->safe_psql('postgres', q{
	CREATE FUNCTION public.px_cached(cluster text, part integer,
		OUT call_id bigint, OUT seg integer, OUT hits bigint) RETURNS SETOF record AS $$
		CLUSTER madlib_dl._px_cluster_name(cluster); RUN ON part;
	$$ LANGUAGE plproxy;
	CREATE TABLE px_step AS
	SELECT madlib_dl._initial_state(model_arch, NULL, $$} . $COMPILE . q{$$, 'batch_size=16') AS state,
	       model_arch::text AS arch FROM arch WHERE model_id = 1;
});
# One coordinator session: its PL/Proxy connections (one per partition)
# are the node backends that keep the partitions.
my $cs = bg_session($coord);
$cs->query_safe('SET client_min_messages = warning');
my $cached = sub {
	return join(';', map {
		$cs->query_safe(
			"SELECT coalesce(string_agg(call_id || ':' || seg || ':' || hits, ','), '') FROM px_cached('c4', $_)")
	} 0 .. 3);
};
$cs->query_safe("SELECT madlib_dl.fit_multiple('p4', 'cache_out', 'mst', 2)");
my $after = $cached->();
is($after, ';;;', 'after fit_multiple over the cluster the nodes keep no partition');
# One round of call $call on segment 0 ($cache: use_caching).
my $round = sub {
	my ($call, $cache) = @_;
	return $cs->query_safe(
		"SELECT (t.result).n FROM px_step s, madlib_dl._px_round('c4', ARRAY['public', 'p4'], ARRAY['attributes'],"
		  . " ARRAY['class_text'], true, ARRAY[0], ARRAY[s.state], ARRAY[s.arch], ARRAY[\$\$$COMPILE\$\$],"
		  . " ARRAY['batch_size=16'], ARRAY[1], $call, $cache) t");
};
my $rows0 = $round->(42, 'NULL');
cmp_ok($rows0, '>', 0, "a hop of call 42 trains on segment 0 ($rows0 samples)");
is($cached->(), '42:0:1;;;', 'the node keeps the partition of segment 0 for call 42');
$round->(42, 'NULL');
is($cached->(), '42:0:2;;;', 'the second hop of call 42 used the partition its first hop cached');
$round->(43, 'NULL');
is($cached->(), '43:0:1;;;', 'a hop of another call drops the partitions of the last one (ended or failed)');
$cs->query_safe("SELECT madlib_dl._px_end_call('c4', 43)");
is($cached->(), ';;;', 'the end of the call drops them');
$round->(44, 'NULL');
$nodes[0]->safe_psql('postgres', 'VACUUM FULL p4');
$round->(44, 'NULL');
is($cached->(), '44:0:1;;;', 'a table rewritten between two hops (a new relfilenode) is read again');
$cs->query_safe("SELECT madlib_dl._px_end_call('c4', 44)");
is($round->(45, 'false'), $rows0, 'use_caching false: the hop streams its partition');
is($cached->(), ';;;', '... and keeps nothing');
$cs->quit;

# --- a segment without rows ------------------------------------------------
# p4 less its segment 3: segment 3 is empty on node 2.
$coord->safe_psql('postgres', q{
	CREATE TABLE p4e AS SELECT * FROM p4 WHERE __dist_key__ <> 3;
	CREATE TABLE p4e_summary AS SELECT * FROM p4_summary;
});
is($coord->safe_psql('postgres', 'SELECT array_agg(DISTINCT __dist_key__ ORDER BY __dist_key__) FROM p4e'),
	'{0,1,2}', 'p4e: segment 3 has no rows');
$coord->safe_psql('postgres', "SELECT madlib_dl.plproxy_distribute('p4e', 'c4')");
mop_compare('p4e', 4, 'an empty segment', iters => 2, val => 1);
{
	my %f = (tbl => 'p4e', model_id => 1, compile => $COMPILE, iters => 2, val => 1);
	my $cols = 'md5(r.model_weights), r.training_loss, r.validation_loss';
	is($coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
			  . "madlib_dl._fit_run(" . job_sql(%f) . ") r"),
		$coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM "
			  . "madlib_dl._fit_run(" . job_sql(%f, transport => 'workers', nseg => 4) . ") r"),
		'p4e (an empty segment): fit identical to the workers transport');
}

# --- divergence on one segment ---------------------------------------------
# In a buffer of segment 1 every row's first feature is 1e30: a softmax
# regression with plain SGD diverges there.  fit stops with a WARNING naming segment 1; in
# fit_multiple that model stops, the other goes on: as on the workers
# transport.
$coord->safe_psql('postgres', q{
	SELECT madlib_dl.load_keras_model('arch', '{"class_name": "Sequential", "config": {"layers": [
		{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}},
		{"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}');
	CREATE TABLE p4d AS SELECT * FROM p4;
	CREATE TABLE p4d_summary AS SELECT * FROM p4_summary;
	UPDATE p4d SET attributes = (SELECT string_agg(CASE WHEN i % 16 = 0 THEN '\xcaf24971'::bytea
	                                                   ELSE substr(attributes, i + 1, 4) END, ''::bytea ORDER BY i)
	                               FROM generate_series(0, length(attributes) - 1, 4) i)
	 WHERE buffer_id = (SELECT min(buffer_id) FROM p4 WHERE __dist_key__ = 1);
	SELECT madlib_dl.plproxy_distribute('p4d', 'c4');
	INSERT INTO mst (mst_key, model_id, compile_params, fit_params)
	VALUES (11, 2, $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)'$$, 'batch_size=8, epochs=2'),
	       (12, 1, $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)'$$, 'batch_size=8, epochs=2');
});
{
	my $sgd = q{loss='categorical_crossentropy', optimizer='SGD(lr=0.1)'};
	my %f = (tbl => 'p4d', model_id => 2, compile => $sgd, iters => 2);
	my ($o1, $e1, $o2, $e2);
	my $q = "SET client_min_messages = warning; SELECT md5(r.model_weights), r.metrics_iters FROM madlib_dl._fit_run(";
	$coord->psql('postgres', $q . job_sql(%f) . ") r", stdout => \$o1, stderr => \$e1);
	$coord->psql('postgres', $q . job_sql(%f, transport => 'workers', nseg => 4) . ") r",
		stdout => \$o2, stderr => \$e2);
	like($e1, qr/WARNING:  training diverged in iteration 1 on segment 1: /,
		'p4d: fit over the cluster stops with a WARNING naming the segment');
	is("$o1\n$e1", "$o2\n$e2", 'p4d: fit diverges as on the workers transport (weights, history, WARNING)');
	my $cols = 'mst_key, status, md5(model_weights), metrics_iters, training_loss';
	my $px = $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM ("
		  . mop_sql(tbl => 'p4d', iters => 2) =~ s/m\.mst_key <= 3/m.mst_key > 10/r . ") s ORDER BY 1");
	like($px, qr/^11\|diverged\|.*\n12\|completed\|/, 'p4d: in fit_multiple the model that diverges stops, the other goes on');
	is($px, $coord->safe_psql('postgres', "SET client_min_messages = warning; SELECT $cols FROM ("
		  . mop_sql(tbl => 'p4d', iters => 2, nseg => 4, transport => 'workers') =~ s/m\.mst_key <= 3/m.mst_key > 10/r
		  . ") s ORDER BY 1"),
		'p4d: fit_multiple diverges as on the workers transport');
	$coord->safe_psql('postgres', 'DELETE FROM mst WHERE mst_key > 10');
}

# --- the catalog follows the table, not its name -------------------------
$coord->safe_psql('postgres', q{
	ALTER TABLE p2 RENAME TO p2_old;
	ALTER TABLE p2_summary RENAME TO p2_old_summary;
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'p2', 'class_text', 'attributes',
		NULL, 1.0, NULL, '2');
});
is($coord->safe_psql('postgres',
		"SELECT coalesce(madlib_dl._px_cluster_of('p2'), '-') || ',' || coalesce(madlib_dl._px_cluster_of('p2_old'), '-')"),
	'-,c2', 'a renamed table stays distributed; a new table of its old name is not');
is($coord->safe_psql('postgres',
		"SET client_min_messages = warning; SELECT count(*) FROM ("
		  . mop_sql(tbl => 'p2_old', iters => 1) . ") r"), '3',
	'the renamed table trains over the cluster (on its rows under the old name)');
($rc, $out, $err) = $coord->psql('postgres', "SELECT madlib_dl.plproxy_distribute('p2', 'c2')");
like($err, qr/the data nodes already hold "public\.p2" for table "public\.p2_old"/,
	'the new table may not overwrite the renamed one\'s rows on the nodes');
$coord->safe_psql('postgres', 'DROP TABLE p2_old, p2_old_summary');
is($coord->safe_psql('postgres', "SELECT count(*) FROM madlib_dl.plproxy_tables WHERE table_name = 'p2'"),
	'0', 'dropping a distributed table removes its catalog row');
is($coord->safe_psql('postgres', "SELECT madlib_dl.plproxy_distribute('p2', 'c2', 3)"),
	$coord->safe_psql('postgres', 'SELECT count(*) FROM p2'), 'then the new table can be distributed');

# A row left by a table dropped while the event trigger was off matches
# no table: a new table of that name is not distributed, and
# plproxy_distribute sweeps the stale row.
$coord->safe_psql('postgres', q{
	ALTER EVENT TRIGGER madlib_dl_plproxy_forget DISABLE;
	DROP TABLE pq;
	ALTER EVENT TRIGGER madlib_dl_plproxy_forget ENABLE;
	CREATE TABLE pq AS SELECT * FROM p2;
});
is($coord->safe_psql('postgres',
		"SELECT count(*) || ',' || coalesce(madlib_dl._px_cluster_of('pq'), '-') FROM madlib_dl.plproxy_tables "
		  . "WHERE relid::oid NOT IN (SELECT oid FROM pg_class)"),
	'1,-', 'a stale row does not make a new table of that name distributed');
$coord->safe_psql('postgres', q{
	DROP TABLE pq, pq_summary;
	SELECT madlib_dl.training_preprocessor_dl('iris_data', 'pq', 'class_text', 'attributes', NULL, 1.0, NULL, '2');
});
is($coord->safe_psql('postgres', "SELECT madlib_dl.plproxy_distribute('pq', \$q\$$evil\$q\$) > 0"),
	't', 'a stale row is swept when its name is distributed again');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM madlib_dl.plproxy_tables WHERE relid::oid NOT IN (SELECT oid FROM pg_class)"),
	'0', 'no stale row is left');

# A table not distributed, and a cluster of the wrong size.
($rc, $out, $err) = $coord->psql('postgres',
	mop_sql(tbl => 'v', iters => 1) =~ s/transport => NULL/transport => 'plproxy', cluster => 'c4'/r
	  =~ s/num_segments => NULL/num_segments => 4/r);
like($err, qr/ERROR:  table "v" is not distributed over a PL\/Proxy cluster named "c4"/,
	'a plproxy job on a local table is refused');

# A node that lost its share: the remote error names the node.
$nodes[0]->safe_psql('postgres', 'ALTER TABLE p2 RENAME TO p2_away');
($rc, $out, $err) = $coord->psql('postgres', mop_sql(tbl => 'p2', iters => 1));
like($err, qr/ERROR:  PL\/Proxy cluster "c2": .*REMOTE ERROR: table "public.p2" does not exist on data node px_node1/,
	'a node without the table: error naming the node');
$nodes[0]->safe_psql('postgres', 'ALTER TABLE p2_away RENAME TO p2');

# --- a data node fails in the middle of a run --------------------------
# Through fit_multiple: no model, _info or _summary table may be left.
my $s = bg_session($coord);
bg_send($s, "SELECT madlib_dl.fit_multiple('p4', 'px_fail', 'mst', 2000, FALSE, NULL, 1);");
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
		  . mop_sql(tbl => 'p4', iters => 1) . ") r"), '3',
	'after the node restarts, training over the cluster works again');

# DROP EXTENSION takes the proxy functions and the catalog with it.
$coord->safe_psql('postgres', 'DROP EXTENSION madlib_dl');
is($coord->safe_psql('postgres',
		"SELECT coalesce(string_agg(oid::regprocedure::text, ','), '') "
		  . "|| coalesce(to_regclass('madlib_dl.plproxy_tables')::text, '') FROM pg_proc "
		  . "WHERE proname LIKE '\\_px\\_%' OR pronamespace::regnamespace::text = 'madlib_dl'"),
	'', 'DROP EXTENSION madlib_dl drops every PL/Proxy object of madlib_dl');
is($coord->safe_psql('postgres', "SELECT count(*) FROM pg_event_trigger WHERE evtname LIKE 'madlib_dl%'"),
	'0', 'and its event trigger');

# With plproxy already there, CREATE EXTENSION madlib_dl makes the proxy
# functions itself.
$coord->safe_psql('postgres', 'CREATE EXTENSION madlib_dl');
is($coord->safe_psql('postgres',
		"SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang AND l.lanname = 'plproxy' "
		  . "JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e' WHERE p.proname LIKE '\\_px\\_%'"),
	'6', 'CREATE EXTENSION after plproxy makes the 6 proxy functions');

$_->stop for ($coord, @nodes);
done_testing();
