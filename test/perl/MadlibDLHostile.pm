#-------------------------------------------------------------------------
#
# MadlibDLHostile.pm
#	  The hostile-call test's machinery (test/t/030_hostile_calls.pl), and
#	  the fixtures it shares with the sqlsmith run (031_sqlsmith.pl).
#
#	  hostile_fixtures: well-formed tables made by the extension itself
#	  (iris data, packed tables, an architecture table, a model, a model
#	  selection table, a fit_multiple model) and, generated from the
#	  catalog, decoys of each: the same column names with the wrong types,
#	  empty, NULL, corrupted contents, corrupted or missing companion
#	  (_summary, _info) tables, views, materialized views, partitioned
#	  tables, temporary copies, tables the caller may not read.
#
#	  hostile_calls: one call list generated from pg_proc: for every
#	  function of schema madlib_dl callable from SQL, one call with "good"
#	  arguments (the fixtures), one call per (parameter, hostile value of
#	  its type) with the other arguments good, and seeded random mixes,
#	  cut to a fixed budget.  Nothing is listed by function: the values
#	  come from the parameter's type and, for the good value and the
#	  table decoys, from its name.
#
#	  hostile_run: runs a call list through one psql session as a role,
#	  each call in its own transaction (rolled back) under
#	  statement_timeout.  psql stops at a lost connection, so every call
#	  it goes on to is proof that the session survived the one before; a
#	  SELECT 1 ends the list.  A lost connection is a crash when the
#	  server log says so: the call is recorded, the run waits for the
#	  restarted server and goes on with a new session, so one run lists
#	  every crash.  A call still running long after its statement_timeout
#	  is recorded as a hang and terminated.
#
# IDENTIFICATION
#	  test/perl/MadlibDLHostile.pm
#
#-------------------------------------------------------------------------
package MadlibDLHostile;

use strict;
use warnings;

use Exporter 'import';
use File::Temp qw(tempfile);
use POSIX qw(WNOHANG);
use MadlibDLTest;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

our @EXPORT = qw(hostile_fixtures hostile_calls hostile_run hostile_log_crashes);

# The fixture schema (and owner role) is 'hostile'; every name below is
# in it unless qualified.
our $FS = 'hostile';

# Fixed names of the well-formed fixtures.  Main tables and their
# companion tables (the extension finds <table>_summary, <table>_info).
our %COMPANIONS = (
	packed => ['summary'],
	vpacked => ['summary'],
	model => ['summary'],
	mst => ['summary'],
	fm => [ 'summary', 'info' ],
	arch => [],
	iris_data => [],);
our @MAINS = qw(packed vpacked model arch mst fm iris_data);

# SQL literal.
sub lit
{
	my ($s) = @_;
	return 'NULL' unless defined $s;
	$s =~ s/'/''/g;
	return "'$s'";
}

# A Keras JSON architecture (iris MLP 4-10-3 by default); %o changes
# input width, units, output units.
sub arch_json
{
	my (%o) = @_;
	my $in = $o{in} // '4';
	my $units = $o{units} // '10';
	my $out = $o{out} // '3';
	my $act = $o{act} // '"relu"';
	return '{"class_name": "Sequential", "config": {"name": "s", "layers": ['
	  . qq({"class_name": "InputLayer", "config": {"batch_input_shape": [null, $in], "name": "in"}}, )
	  . qq({"class_name": "Dense", "config": {"name": "d1", "units": $units, "activation": $act}}, )
	  . qq({"class_name": "Dense", "config": {"name": "d2", "units": $out, "activation": "softmax"}}]}, )
	  . '"keras_version": "2.11.0", "backend": "tensorflow"}';
}

sub conv_json
{
	my (%o) = @_;
	my $k = $o{kernel} // '[3, 3]';
	my $s = $o{strides} // '[1, 1]';
	my $f = $o{filters} // '2';
	my $in = $o{in} // '[null, 8, 8, 1]';
	return '{"class_name": "Sequential", "config": {"layers": ['
	  . qq({"class_name": "InputLayer", "config": {"batch_input_shape": $in}}, )
	  . qq({"class_name": "Conv2D", "config": {"filters": $f, "kernel_size": $k, "strides": $s, "activation": "relu"}}, )
	  . '{"class_name": "Flatten", "config": {}}, '
	  . '{"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}';
}

our $COMPILE =
  q{loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']};
our $FIT = 'batch_size=16';
our $CGRID =
  q{{'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.01]}], 'metrics': ['accuracy']}};
our $FGRID = q{{'batch_size': [16], 'epochs': [1]}};

# ----------------------------------------------------------------------
# Fixtures
# ----------------------------------------------------------------------

# Column (name, format_type) pairs of $table in the fixture schema.
sub columns_of
{
	my ($node, $table) = @_;
	my $out = $node->safe_psql('postgres',
		"SELECT attname || '|' || format_type(atttypid, atttypmod) FROM pg_attribute "
		  . "WHERE attrelid = '$FS.$table'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
	return [ map { [ split /\|/, $_, 2 ] } split /\n/, $out ];
}

# Wrong types: every column integer ('wi'), every column text ('wt'), or
# a close but different type ('w2': same storage class or a varlena of
# another layout).  Returns [type, expression of the real value or undef].
my %CLOSE = (
	'bytea' => [ 'text', 'encode(%s, \'hex\')' ],
	'integer' => [ 'bigint', '%s' ],
	'bigint' => [ 'integer', 'least(%s, 2147483647)::integer' ],
	'integer[]' => [ 'bigint[]', '%s' ],
	'real' => [ 'double precision', '%s' ],
	'double precision' => [ 'real', '%s' ],
	'json' => [ 'jsonb', '%s' ],
	'text' => [ 'name', '%s' ],
	'character varying' => [ 'name', '%s' ],
	'text[]' => [ 'name[]', '%s' ],
	'character varying[]' => [ 'name[]', '%s' ],
	'double precision[]' => [ 'real[]', '%s' ],
	'boolean' => [ 'integer', '%s::integer' ],
	'timestamp without time zone' => [ 'text', '%s' ],);

# A hostile value of $type: 'max' (large, infinite) or 'neg' (negative,
# empty, zero).
sub extreme_value
{
	my ($type, $which) = @_;
	my $max = $which eq 'max';
	return $max ? q{decode(repeat('ff', 4096), 'hex')} : q{'\x'} if $type eq 'bytea';
	return $max ? '2147483647' : '-1' if $type eq 'integer';
	return $max ? '9223372036854775807' : '-1' if $type eq 'bigint';
	return $max ? q{'{2147483647,2147483647}'} : q{'{-1,-1}'} if $type eq 'integer[]';
	return $max ? q{'Infinity'} : '0' if $type =~ /^(real|double precision)$/;
	return $max ? q{'{NaN,Infinity}'} : q{'{}'} if $type =~ /^(real|double precision)\[\]$/;
	return $max ? q{repeat('x', 10000)} : q{''} if $type =~ /^(text|character varying)$/;
	return $max ? q{array_fill('x'::text, ARRAY[1000])} : q{'{}'}
	  if $type =~ /^(text|character varying)\[\]$/;
	return $max ? lit(arch_json(units => '2147483647')) : q{'{}'} if $type eq 'json';
	return $max ? 'true' : 'false' if $type eq 'boolean';
	return $max ? q{'infinity'} : q{'-infinity'} if $type =~ /^timestamp/;
	return 'NULL';
}

# CREATE statements for the decoys of main table $m (columns $cols),
# and the list of decoy names.  Companion tables are copied unless the
# variant is about a companion.
sub decoy_sql
{
	my ($node, $m, $cols) = @_;
	my @sql;
	my @names;
	my @comp = @{ $COMPANIONS{$m} };
	my $copy_comps = sub {
		my ($name, $except) = @_;
		for my $c (@comp)
		{
			next if defined $except && $c eq $except;
			push @sql, "CREATE TABLE ${name}_$c AS SELECT * FROM ${m}_$c;";
		}
	};
	# Wrong-typed main table, same column names, with the values cast
	# where a cast exists.
	for my $v (qw(wi wt w2))
	{
		my $name = "${v}_$m";
		my (@defs, @vals);
		for my $c (@$cols)
		{
			my ($col, $type) = @$c;
			my ($t, $e);
			if ($v eq 'wi')
			{
				$t = 'integer';
				$e = $type =~ /^(integer|bigint|real|double precision|boolean)$/ ? '%s::integer' : '1';
			}
			elsif ($v eq 'wt')
			{
				($t, $e) = ('text', '%s::text');
			}
			else
			{
				($t, $e) = @{ $CLOSE{$type} // [ 'text', '%s::text' ] };
			}
			push @defs, qq{"$col" $t};
			push @vals, $e =~ /%s/ ? sprintf($e, qq{"$col"}) : $e;
		}
		push @sql, "CREATE TABLE $name (" . join(', ', @defs) . ");",
		  "INSERT INTO $name SELECT " . join(', ', @vals) . " FROM $m;";
		$copy_comps->($name);
		push @names, $name;
	}
	# Same types: empty, one all-NULL row, extreme contents.
	push @sql, "CREATE TABLE e_$m AS SELECT * FROM $m WITH NO DATA;";
	$copy_comps->("e_$m");
	push @sql, "CREATE TABLE n_$m AS SELECT * FROM $m WITH NO DATA;",
	  "INSERT INTO n_$m DEFAULT VALUES;";
	$copy_comps->("n_$m");
	push @names, "e_$m", "n_$m";
	for my $which (qw(max neg))
	{
		my $name = ($which eq 'max' ? 'ca' : 'cb') . "_$m";
		push @sql, "CREATE TABLE $name AS SELECT * FROM $m WITH NO DATA;",
		  "INSERT INTO $name SELECT "
		  . join(', ', map { extreme_value($_->[1], $which) . "::$_->[1]" } @$cols) . ";";
		$copy_comps->($name);
		push @names, $name;
	}
	# The real rows with one kind of damage each, when the table has
	# such columns.
	my @bytea = map { $_->[0] } grep { $_->[1] eq 'bytea' } @$cols;
	my @shape = map { $_->[0] } grep { $_->[1] eq 'integer[]' } @$cols;
	my @json = map { $_->[0] } grep { $_->[1] eq 'json' } @$cols;
	my @damage;
	push @damage, [ 'cc', join(', ', map { qq{"$_" = substring("$_" FROM 1 FOR length("$_") / 2)} } @bytea) ]
	  if @bytea;
	push @damage, [ 'ch', join(', ', map { qq{"$_" = "$bytea[0]"} } @bytea) ] if @bytea > 1;
	push @damage, [ 'cd', join(', ', map { qq{"$_"[1] = "$_"[1] * 2} } @shape) ] if @shape;
	push @damage, [ 'ce', join(', ', map { qq{"$_" = array_fill(2147483647, ARRAY[cardinality("$_")])} } @shape) ]
	  if @shape;
	push @damage, [ 'cf', join(', ', map { qq{"$_" = '{}'} } @shape) ] if @shape;
	push @damage, [ 'cg', join(', ', map { qq{"$_" = } . lit(arch_json(in => 5, out => 2)) } @json) ]
	  if @json;
	for my $d (@damage)
	{
		my $name = "$d->[0]_$m";
		push @sql, "CREATE TABLE $name AS SELECT * FROM $m;", "UPDATE $name SET $d->[1];";
		$copy_comps->($name);
		push @names, $name;
	}
	# Companion variants: main copied, one companion wrong.
	for my $c (@comp)
	{
		my $ccols = columns_of($node, "${m}_$c");
		my $p = substr($c, 0, 1);
		for my $v (qw(wi wt n ca cb ms))
		{
			my $name = "$p$v\_$m";
			push @sql, "CREATE TABLE $name AS SELECT * FROM $m;";
			$copy_comps->($name, $c);
			my $cn = "${name}_$c";
			if ($v eq 'wi' || $v eq 'wt')
			{
				my $t = $v eq 'wi' ? 'integer' : 'text';
				my @vals = map {
					$v eq 'wt' ? qq{"$_->[0]"::text}
					  : $_->[1] =~ /^(integer|bigint|real|double precision)$/ ? qq{"$_->[0]"::integer}
					  : '1'
				} @$ccols;
				push @sql, "CREATE TABLE $cn (" . join(', ', map { qq{"$_->[0]" $t} } @$ccols) . ");",
				  "INSERT INTO $cn SELECT " . join(', ', @vals) . " FROM ${m}_$c;";
			}
			elsif ($v eq 'n')
			{
				push @sql, "CREATE TABLE $cn AS SELECT * FROM ${m}_$c WITH NO DATA;",
				  "INSERT INTO $cn DEFAULT VALUES;";
			}
			elsif ($v eq 'ca' || $v eq 'cb')
			{
				push @sql, "CREATE TABLE $cn AS SELECT * FROM ${m}_$c WITH NO DATA;",
				  "INSERT INTO $cn SELECT "
				  . join(', ', map { extreme_value($_->[1], $v eq 'ca' ? 'max' : 'neg') . "::$_->[1]" } @$ccols) . ";";
			}
			push @names, $name;
		}
		# One field of the real companion row damaged at a time.
		my $i = 0;
		for my $cc (@$ccols)
		{
			$i++;
			my $name = "$p${i}_$m";
			push @sql, "CREATE TABLE $name AS SELECT * FROM $m;";
			$copy_comps->($name, $c);
			push @sql, "CREATE TABLE ${name}_$c AS SELECT * FROM ${m}_$c;",
			  "UPDATE ${name}_$c SET \"$cc->[0]\" = "
			  . extreme_value($cc->[1], $i % 2 ? 'max' : 'neg') . "::$cc->[1];";
			push @names, $name;
		}
	}
	# Not a table: a view, a materialized view; a partitioned table.
	push @sql, "CREATE VIEW v_$m AS SELECT * FROM $m;";
	push @sql, "CREATE VIEW v_${m}_$_ AS SELECT * FROM ${m}_$_;" for @comp;
	push @sql, "CREATE MATERIALIZED VIEW mv_$m AS SELECT * FROM $m;";
	$copy_comps->("mv_$m");
	push @names, "v_$m", "mv_$m";
	my ($int) = grep { $_->[1] eq 'integer' } @$cols;
	if ($int)
	{
		push @sql,
		  "CREATE TABLE p_$m (LIKE $m) PARTITION BY LIST (\"$int->[0]\");",
		  "CREATE TABLE p_${m}_all PARTITION OF p_$m DEFAULT;",
		  "INSERT INTO p_$m SELECT * FROM $m;";
		$copy_comps->("p_$m");
		push @names, "p_$m";
	}
	return (\@sql, \@names);
}

# Build every fixture in database postgres, schema 'hostile', owned by
# role 'hostile' (both created here).  Returns a hash:
#   decoys => { main => [decoy names] }, temp_sql => SQL that makes the
#   temporary copies (tmp_<main>) in a session.
sub hostile_fixtures
{
	my ($node) = @_;
	my $arch = arch_json();
	$node->safe_psql('postgres', qq{
		CREATE ROLE $FS LOGIN;
		CREATE SCHEMA $FS AUTHORIZATION $FS;
		GRANT USAGE ON SCHEMA madlib_dl TO $FS;
		-- Tables the role may not read: another role's schema, and a
		-- schema it may not even look into.
		CREATE SCHEMA secret;
		GRANT USAGE ON SCHEMA secret TO $FS;
		CREATE SCHEMA private;
	});
	load_iris($node, 'postgres', $FS);
	$node->safe_psql('postgres', qq{
		SET ROLE $FS;
		SET search_path = $FS;
		SET client_min_messages = warning;
		SELECT madlib_dl.training_preprocessor_dl('iris_data', 'packed', 'class_text', 'attributes',
			NULL, 1.0, NULL, '2');
		SELECT madlib_dl.validation_preprocessor_dl('iris_data', 'vpacked', 'class_text', 'attributes',
			'packed');
		SELECT madlib_dl.load_keras_model('arch', '$arch');
		SELECT madlib_dl.fit('packed', 'model', 'arch', 1, \$\$$COMPILE\$\$, '$FIT', 2, FALSE, 'vpacked');
		SELECT madlib_dl.load_keras_model('arch', '$arch', (SELECT model_weights FROM model));
		SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1, 2], ARRAY[\$\$$COMPILE\$\$],
			ARRAY['batch_size=16', 'batch_size=8']);
		SELECT madlib_dl.fit_multiple('packed', 'fm', 'mst', 1, FALSE, 'vpacked');
		-- 4 rows, one per page: a parallel scan hands rows to several
		-- processes, so that aggregates combine partial states.
		CREATE TABLE agg_rows (g integer, pad text) WITH (fillfactor = 10);
		ALTER TABLE agg_rows ALTER pad SET STORAGE PLAIN;
		INSERT INTO agg_rows SELECT g, repeat('x', 1500) FROM generate_series(1, 4) g;
	});
	my (%decoys, @sql);
	for my $m (@MAINS)
	{
		my ($s, $n) = decoy_sql($node, $m, columns_of($node, $m));
		push @sql, @$s;
		$decoys{$m} = $n;
	}
	# Copies the role may not read.
	my @secret;
	for my $m (qw(packed model arch mst))
	{
		push @secret, "CREATE TABLE secret.$m AS SELECT * FROM $FS.$m;",
		  "CREATE TABLE private.$m AS SELECT * FROM $FS.$m;";
		push @secret, "CREATE TABLE secret.${m}_$_ AS SELECT * FROM $FS.${m}_$_;" for @{ $COMPANIONS{$m} };
	}
	my ($ret, $out, $err) = $node->psql('postgres',
		"SET ROLE $FS;\nSET search_path = $FS;\n" . join("\n", @sql) . "\nRESET ROLE;\n" . join("\n", @secret),
		on_error_stop => 0);
	# A decoy whose CREATE failed is simply absent (its name is then a
	# missing table); say so, so that a change shows.
	note "decoy setup: $_" for grep { /ERROR/ } split /\n/, $err;
	my $temp_sql = '';
	for my $m (@MAINS)
	{
		$temp_sql .= "CREATE TEMP TABLE tmp_$m AS SELECT * FROM $FS.$m;\n";
		$temp_sql .= "CREATE TEMP TABLE tmp_${m}_$_ AS SELECT * FROM $FS.${m}_$_;\n" for @{ $COMPANIONS{$m} };
	}
	my $n = $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_class WHERE relnamespace = '$FS'::regnamespace AND relkind IN ('r', 'p', 'v', 'm')");
	note "fixture relations in schema $FS: $n";
	return { decoys => \%decoys, temp_sql => $temp_sql, nrel => $n };
}

# ----------------------------------------------------------------------
# Values
# ----------------------------------------------------------------------

# Each value is [label, SQL expression].  Expressions of non-polymorphic
# types are cast to the parameter's type when the call is built.

sub v { return [ $_[0], $_[1] ]; }

my $HUGE = q{repeat('x', 1048576)};

# Good expressions of the fixtures.
my %G = (
	arch_json => "(SELECT model_arch FROM $FS.arch WHERE model_id = 1)",
	weights => "(SELECT model_weights FROM $FS.model)",
	state => "madlib_dl._initial_state((SELECT model_arch FROM $FS.arch WHERE model_id = 1), "
	  . "(SELECT model_weights FROM $FS.model), " . lit($COMPILE) . ", " . lit($FIT) . ")",
	xbuf => "(SELECT attributes FROM $FS.packed ORDER BY buffer_id LIMIT 1)",
	ybuf => "(SELECT class_text FROM $FS.packed ORDER BY buffer_id LIMIT 1)",
	xshape => "(SELECT attributes_shape FROM $FS.packed ORDER BY buffer_id LIMIT 1)",
	yshape => "(SELECT class_text_shape FROM $FS.packed ORDER BY buffer_id LIMIT 1)",);

# Table-name values for a parameter whose good table is $main.
sub table_names
{
	my ($fx, $main) = @_;
	my @t;
	push @t, [ $main, $FS, $main ];
	push @t, [ $_, $FS, $_ ] for @{ $fx->{decoys}{$main} // [] };
	push @t, [ "tmp_$main", 'pg_temp', "tmp_$main" ];
	push @t, [ "secret.$main", 'secret', $main ], [ "private.$main", 'private', $main ]
	  if $main =~ /^(packed|model|arch|mst)$/;
	# Other fixtures in its place.
	push @t, [ $_, $FS, $_ ]
	  for grep { $_ ne $main }
	  qw(packed vpacked model arch mst fm fm_info iris_data packed_summary model_summary);
	# Names that are no table.
	push @t,
	  [ 'no_such_table', $FS, 'no_such_table' ],
	  [ 'no_such_schema.t', 'no_such_schema', 't' ],
	  [ 'sequence', $FS, 'arch_model_id_seq' ],
	  [ 'index', $FS, 'arch_pkey' ],
	  [ 'pg_class', 'pg_catalog', 'pg_class' ],
	  [ 'information_schema.tables', 'information_schema', 'tables' ];
	return \@t;
}

# Names as strings that are not plain names.
my @ODD_NAMES = (
	v('empty', q{''}), v('huge', $HUGE), v('64 chars', q{repeat('a', 64)}),
	v('quoted', q{'"packed"'}), v('upper', q{'PACKED'}), v('3 parts', q{'a.b.c'}),
	v('dot', q{'.'}), v('trailing dot', qq{'$FS.'}), v('leading dot', q{'.packed'}),
	v('injection', q{'packed; DROP TABLE arch'}), v('quote', q{'pa''cked'}),
	v('nul-like', q{E'pa\\\\0cked'}), v('unicode', q{U&'\+01D11E'}),);

my @TEXT_GENERIC = (
	v('NULL', 'NULL'), v('empty', q{''}), v('space', q{' '}), v('huge', $HUGE),
	v('huge multibyte', q{repeat(U&'\00E9', 300000)}), v('usage', q{'usage'}),
	v('quote', q{''''}), v('backslash', q{E'\\\\'}), v('percent', q{'%s%n%x'}),
	v('control char', 'chr(1)'), v('emoji', q{U&'\+01D11E'}),
	v('json {', q!'{'!), v('json [1,', q{'[1,'}), v('deep [', q{repeat('[', 100000)}),
	v('deep (', q{repeat('(', 100000)}), v('x=', q{'x='}),);

my @COLUMNS = (
	v('class_text', q{'class_text'}), v('attributes', q{'attributes'}), v('id', q{'id'}),
	v('shape column', q{'attributes_shape'}), v('buffer_id', q{'buffer_id'}),
	v('__dist_key__', q{'__dist_key__'}), v('model_weights', q{'model_weights'}),
	v('model_arch', q{'model_arch'}), v('no such column', q{'no_such_column'}),
	v('ctid', q{'ctid'}), v('xmin', q{'xmin'}), v('tableoid', q{'tableoid'}),
	v('quoted', q{'"attributes"'}), v('upper', q{'ATTRIBUTES'}), v('subscript', q{'attributes[1]'}),
	v('cast', q{'attributes::text'}), v('star', q{'*'}), v('number', q{'1'}),
	v('two columns', q{'id, attributes'}), v('injection', q{'attributes) FROM packed; --'}),);

my @COMPILES = (
	v('loss=', q{'loss='}), v('loss only', q{'loss=''categorical_crossentropy'''}),
	v('lr 1e999', q{'loss=''categorical_crossentropy'', optimizer=''Adam(lr=1e999)'', metrics=[''accuracy'']'}),
	v('lr nan', q{'loss=''categorical_crossentropy'', optimizer=''Adam(lr=nan)'', metrics=[''accuracy'']'}),
	v('lr -1', q{'loss=''categorical_crossentropy'', optimizer=''Adam(lr=-1)'', metrics=[''accuracy'']'}),
	v('momentum huge', q{'loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.01, momentum=2147483647)'', metrics=[''accuracy'']'}),
	v('mse top_k', q{'loss=''mse'', optimizer=''Adam'', metrics=[''top_k_categorical_accuracy'']'}),
	v('duplicate lr', q{'loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01, lr=0.02)'''}),
	v('metrics=[', q{'loss=''mse'', optimizer=''Adam'', metrics=['}),
	v('optimizer=Adam(', q{'loss=''mse'', optimizer=''Adam('}),
	v('loss weights', q{'loss=''categorical_crossentropy'', optimizer=''Adam'', metrics=[''accuracy''], loss_weights=[1e308]'}),
	v('binary loss', q{'loss=''binary_crossentropy'', optimizer=''RMSprop(rho=2)'', metrics=[''mae'']'}),
	v('long loss', q{'loss=''' || repeat('x', 100000) || ''''}),);

my @FITS = (
	v('batch 0', q{'batch_size=0'}), v('batch -1', q{'batch_size=-1'}),
	v('batch 2^31-1', q{'batch_size=2147483647'}), v('batch 2^63-1', q{'batch_size=9223372036854775807'}),
	v('epochs 2^31-1', q{'epochs=2147483647'}), v('epochs -1', q{'epochs=-1'}),
	v('batch 1e999', q{'batch_size=1e999'}), v('shuffle maybe', q{'shuffle=maybe'}),
	v('batch=', q{'batch_size='}), v('commas', q{'batch_size=16,,'}),
	v('callbacks', q{'callbacks=[TensorBoard()]'}), v('validation_split', q{'validation_split=2'}),
	v('batch 1 epochs 1e9', q{'batch_size=1, epochs=1000000000'}),);

my @GRIDS = (
	v('{', q!'{'!), v('{}', q{'{}'}), v('empty list', q{'{''loss'': []}'}),
	v('lr extremes', q{'{''loss'': [''categorical_crossentropy''], ''optimizer_params_list'': [{''optimizer'': [''Adam''], ''lr'': [1e-300, 1e300]}]}'}),
	v('lr log range', q{'{''optimizer_params_list'': [{''optimizer'': [''Adam''], ''lr'': [''log'', 0, 1]}]}'}),
	v('batch 0', q{'{''batch_size'': [0]}'}),
	v('batch 2^31-1', q{'{''batch_size'': [2147483647], ''epochs'': [2147483647]}'}),
	v('10^6 configs', q{'{''batch_size'': [' || (SELECT string_agg(g::text, ',') FROM generate_series(1, 1000) g) || '], ''epochs'': [' || (SELECT string_agg(g::text, ',') FROM generate_series(1, 1000) g) || ']}'}),
	v('deep', q!repeat('{''a'': ', 10000)!),);

my @JSONS = (
	v('null', q{'null'}), v('{}', q{'{}'}), v('[]', q{'[]'}), v('1', q{'1'}), v('string', q{'"s"'}),
	v('class only', q{'{"class_name": "Sequential"}'}),
	v('no layers', q{'{"class_name": "Sequential", "config": {"layers": []}}'}),
	v('config []', q{'{"class_name": "Sequential", "config": []}'}),
	v('input only', q{'{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}]}}'}),
	v('units 2^31-1', lit(arch_json(units => '2147483647'))),
	v('units -1', lit(arch_json(units => '-1'))), v('units 0', lit(arch_json(units => '0'))),
	v('units 1.5', lit(arch_json(units => '1.5'))), v('units "10"', lit(arch_json(units => '"10"'))),
	v('units 1e30', lit(arch_json(units => '1e30'))),
	v('activation nope', lit(arch_json(act => '"nope"'))),
	v('input 2^31-1', lit(arch_json(in => '2147483647'))), v('input 0', lit(arch_json(in => '0'))),
	v('input -1', lit(arch_json(in => '-1'))), v('input 5 (data has 4)', lit(arch_json(in => '5'))),
	v('2 classes (data has 3)', lit(arch_json(out => '2'))),
	v('shape [null]', q{'{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null]}}, {"class_name": "Dense", "config": {"units": 3}}]}}'}),
	v('shape 8 dims', q{'{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4, 4, 4, 4, 4, 4, 4, 4]}}, {"class_name": "Dense", "config": {"units": 3}}]}}'}),
	v('conv kernel > input', lit(conv_json(kernel => '[100, 100]'))),
	v('conv strides 0', lit(conv_json(strides => '[0, 0]'))),
	v('conv filters 2^31-1', lit(conv_json(filters => '2147483647'))),
	v('conv on 2-d input', lit(conv_json(in => '[null, 4]'))),
	v('conv 65536x65536', lit(conv_json(in => '[null, 65536, 65536, 1]'))),
	v('dropout rate 2', q{'{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dropout", "config": {"rate": 2}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}'}),
	v('functional bad refs', q{'{"class_name": "Functional", "config": {"layers": [{"class_name": "InputLayer", "name": "i", "config": {"batch_input_shape": [null, 4]}, "inbound_nodes": []}, {"class_name": "Dense", "name": "d", "config": {"units": 3}, "inbound_nodes": [[["nope", 0, 0, {}]]]}], "input_layers": [["i", 0, 0], 0], "output_layers": [["d", 7, 9]]}}'}),
	v('functional cycle', q{'{"class_name": "Functional", "config": {"layers": [{"class_name": "Dense", "name": "a", "config": {"units": 3}, "inbound_nodes": [[["b", 0, 0, {}]]]}, {"class_name": "Dense", "name": "b", "config": {"units": 3}, "inbound_nodes": [[["a", 0, 0, {}]]]}], "input_layers": [["a", 0, 0]], "output_layers": [["b", 0, 0]]}}'}),
	v('10000 layers', q{'{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}' || repeat(', {"class_name": "Dense", "config": {"units": 4}}', 10000) || ']}}'}),
	v('deep nesting', q{repeat('[', 10000) || repeat(']', 10000)}),
	v('huge string', qq{to_json($HUGE)::text}),
	v('duplicate keys', q{'{"class_name": "Sequential", "class_name": "Functional", "config": {"layers": [], "layers": 1}}'}),
	v('wide model', lit(arch_json(units => '65536'))),);

my @BYTEAS = (
	v('empty', q{'\x'}), v('1 byte', q{'\x00'}), v('deadbeef', q{'\xdeadbeef'}),
	v('weights, half', "substring($G{weights} FROM 1 FOR length($G{weights}) / 2)"),
	v('weights, 16 bytes', "substring($G{weights} FROM 1 FOR 16)"),
	v('weights, byte flipped', "overlay($G{weights} PLACING '\\xff'::bytea FROM length($G{weights}) / 2 FOR 1)"),
	v('weights + 8 bytes', "$G{weights} || '\\x0000000000000000'::bytea"),
	v('82 floats', q{madlib_dl.weights_from_array(array_fill(0::real, '{82}'))}),
	v('83 NaN', q{madlib_dl.weights_from_array(array_fill('NaN'::real, '{83}'))}),
	v('model state', $G{state}), v('state, half', "substring($G{state} FROM 1 FOR length($G{state}) / 2)"),
	v('state, byte flipped', "overlay($G{state} PLACING '\\xff'::bytea FROM 40 FOR 1)"),
	v('x buffer', $G{xbuf}), v('y buffer', $G{ybuf}), v('1 MB zeros', q{decode(repeat('00', 1048576), 'hex')}),);

my @INTS = (v('-1', '-1'), v('0', '0'), v('2^31-1', '2147483647'), v('-2^31', '(-2147483648)'));
my @BIGINTS = (@INTS, v('2^63-1', '9223372036854775807'), v('-2^63', '(-9223372036854775808)'));
my @FLOATS = (
	v('NaN', q{'NaN'}), v('Infinity', q{'Infinity'}), v('-Infinity', q{'-Infinity'}), v('-1', '-1'),
	v('0', '0'), v('1e308', '1e308'), v('denormal', '5e-324'),);
my @REALS = (
	v('NaN', q{'NaN'}), v('Infinity', q{'Infinity'}), v('-1', '-1'), v('0', '0'),
	v('3.4e38', '3.4e38'), v('denormal', '1e-45'),);
my @INT_ARRAYS = (
	v('{}', q{'{}'}), v('{NULL}', q{'{NULL}'}), v('{-1}', q{'{-1}'}), v('{0}', q{'{0}'}),
	v('{2^31-1}', q{'{2147483647}'}), v('{2^31-1,2^31-1}', q{'{2147483647,2147483647}'}),
	v('{-1,-1}', q{'{-1,-1}'}), v('2-d', q{'{{1,2},{3,4}}'}), v('lower bound 0', q{'[0:1]={1,2}'}),
	v('{1,NULL,3}', q{'{1,NULL,3}'}), v('10^6 elements', q{array_fill(1, ARRAY[1000000])}),
	v('x shape', $G{xshape}), v('y shape', $G{yshape}), v('{1,1}', q{'{1,1}'}), v('{1,2,999}', q{'{1,2,999}'}),
	# shapes the model accepts, with rows no buffer holds: length before allocation
	v('{2^31-1,3}', q{'{2147483647,3}'}), v('{2^31-1,4}', q{'{2147483647,4}'}),);
my @TEXT_ARRAYS = (
	v('{}', q{'{}'}), v('{NULL}', q{'{NULL}'}), v('{""}', q{'{""}'}), v('2-d', q{'{{a,b},{c,d}}'}),
	v('lower bound 0', q{'[0:1]={a,b}'}), v('10^5 elements', q{array_fill('x'::text, ARRAY[100000])}),
	v('{huge}', "ARRAY[$HUGE]"), v('{a,a}', q{'{a,a}'}), v('3 parts', q{'{a,b,c}'}),);
my @FLOAT_ARRAYS = (
	v('{}', q{'{}'}), v('{NULL}', q{'{NULL}'}), v('{NaN}', q{'{NaN}'}), v('{Inf,-Inf}', q{'{Infinity,-Infinity}'}),
	v('2-d', q{'{{1,2},{3,4}}'}), v('10^6 elements', q{array_fill(0::float8, ARRAY[1000000])}),
	v('82 zeros', q{array_fill(0, '{82}')}), v('84 zeros', q{array_fill(0, '{84}')}),
	v('83 NaN', q{array_fill('NaN'::float8, '{83}')}),);
my @BYTEA_ARRAYS = (
	v('{}', q{'{}'}), v('{NULL}', q{'{NULL}'}), v('{deadbeef}', q{ARRAY['\xdeadbeef'::bytea]}),
	v('{weights, NULL}', "ARRAY[$G{weights}, NULL]"), v('3 weights', "ARRAY[$G{weights}, $G{weights}, $G{weights}]"),
	v('2-d', "ARRAY[[$G{weights}], [$G{weights}]]"),
	v('{half weights}', "ARRAY[substring($G{weights} FROM 1 FOR 100)]"),
	v('{state}', "ARRAY[$G{state}]"), v('{x buffer}', "ARRAY[$G{xbuf}]"),);
my @JSON_ARRAYS = (
	v('{}', q{'{}'}), v('{NULL}', q{'{NULL}'}), v('{{}}', q{ARRAY['{}'::json]}), v('{[1]}', q{ARRAY['[1]'::json]}),
	v('{huge}', "ARRAY[to_json($HUGE)]"), v('{arch}', "ARRAY[$G{arch_json}]"),);
my @REGTYPES = (
	v('0', '0'), v('integer', q{'integer'}), v('bytea', q{'bytea'}), v('text', q{'text'}), v('json', q{'json'}),
	v('real[]', q{'real[]'}), v('internal', q{'internal'}), v('anyarray', q{'anyarray'}),
	v('record', q{'record'}), v('cstring', q{'cstring'}), v('no such oid', '4294967295'),);
my @TIDS = (v('(0,0)', q{'(0,0)'}), v('(0,1)', q{'(0,1)'}), v('max', q{'(4294967295,65535)'}), v('(0,65535)', q{'(0,65535)'}));
my @JSONBS = (
	v('{}', q{'{}'}), v('[]', q{'[]'}), v('null', q{'null'}), v('num_segments -1', q{'{"num_segments": -1}'}),
	v('num_segments 2^31-1', q{'{"num_segments": 2147483647}'}), v('num_segments "x"', q{'{"num_segments": "x"}'}),
	v('num_segments 0', q{'{"num_segments": 0}'}), v('rules x', q{'{"distribution_rules": "x"}'}),);

# Polymorphic parameters: values carry their own type.
my @ANYARRAYS = (
	v('float8[] NULL', 'NULL::float8[]'), v('float8[] {}', q{'{}'::float8[]}),
	v('float8[] {NULL}', q{'{NULL}'::float8[]}), v('float8[] {NaN}', q{'{NaN,1,1,1}'::float8[]}),
	v('float8[] 2-d', q{'{{1,2},{3,4}}'::float8[]}), v('float8[] 10^6', q{array_fill(1::float8, ARRAY[1000000])}),
	v('float8[] 1e308', q{'{1e308,1e308,1e308,1e308}'::float8[]}), v('float8[] lower 0', q{'[0:3]={1,2,3,4}'::float8[]}),
	v('float8[] 3 values', q{'{1,2,3}'::float8[]}), v('text[]', q{'{a,b,c,d}'::text[]}), v('bool[]', q{'{t,f,t,f}'::bool[]}),
	v('int2[]', q{'{1,2,3,4}'::int2[]}), v('int4[]', q{'{1,2,3,4}'::int4[]}), v('int8[]', q{'{1,2,3,9223372036854775807}'::int8[]}),
	v('numeric[]', q{'{1.5,2,3,1e100}'::numeric[]}), v('float4[]', q{'{1,2,3,4}'::float4[]}), v('bytea[]', q{ARRAY['\x00'::bytea]}),
	v('int4[] {-1}', q{'{-1}'::int4[]}), v('int4[] {2^31-1}', q{'{2147483647}'::int4[]}), v('int4[] 2-d', q{'{{1,2},{3,4}}'::int4[]}),);
my @ANYELEMENTS = (
	v('int NULL', 'NULL::integer'), v('int 1', '1'), v('int -1', '-1'), v('text', q{'x'::text}),
	v('float8', '1.5::float8'), v('json', q{'{}'::json}), v('int[]', 'ARRAY[1]'), v('text NULL', 'NULL::text'),);
my @ANYCOMPATIBLES = (
	v('int NULL', 'NULL::integer'), v('3', '3'), v('-1', '-1'), v('0', '0'), v('2^31-1', '2147483647'),
	v('text x', q{'x'::text}), v('text 3', q{'3'::text}), v('1.5', '1.5::float8'), v('bigint 3', '3::bigint'),
	v('numeric 3.0', '3.0::numeric'), v('bool', 'true'),);

# ----------------------------------------------------------------------
# Parameter roles: which fixture a parameter means, from its name
# ----------------------------------------------------------------------

# [function name regex, parameter name regex, role].  The first match
# wins.  Table roles name the good main table.
my @ROLES = (
	# Parameters of particular functions (unnamed ones are $1, $2, ...).
	[ qr/^_pack_float32$/, qr/^\$6$/, q{sql:'{4}'} ],
	[ qr/^_pack_float32$/, qr/^\$5$/, 'one' ],
	[ qr/^_pack_int16_array$/, qr/^\$1$/, q{sql:'{0,1,0}'::integer[]} ],
	[ qr/^_pack_int16_array$/, qr/^\$5$/, 'sql:3' ],
	[ qr/^_pack_onehot_int16$/, qr/^\$1$/, 'sql:0' ],
	[ qr/^_pack_onehot_int16$/, qr/^\$2$/, 'sql:3' ],
	[ qr/^_pack/, qr/^\$3$/, 'sql:0' ],
	[ qr/^_pack/, qr/^\$4$/, 'one' ],
	[ qr/^_pp_pack$/, qr/^summ$/, 'table:packed_summary' ],
	[ qr/^_pp_pack$/, qr/^cv_col$/, q{sql:'class_text_class_values'} ],
	[ qr/^_pp_pack$/, qr/^dep_kind$/, q{sql:'class'} ],
	[ qr/^_pp_pack$/, qr/^cast_type$/, q{sql:'character varying'} ],
	[ qr/^_pp_pack$/, qr/^n_rows$/, 'sql:150' ],
	[ qr/^_pp_pack$/, qr/^ncls$/, 'sql:3' ],
	[ qr/^_pp_pack$/, qr/^dims$/, q{sql:'{4}'} ],
	[ qr/^_pp_first_dims$/, qr/^coltype$/, q{sql:'double precision[]'} ],
	[ qr/^_pp_first_dims$/, qr/^elemtype$/, q{sql:'double precision'} ],
	[ qr/^_check_model_memory$/, qr/^job$/, q{sql:'fit'} ],
	[ qr/^_assert_warm_start_outputs$/, qr/^cols$/, q{sql:ARRAY['model_weights', 'model_arch']} ],
	[ qr/^_assert_warm_start_outputs$/, qr/^types$/, q{sql:ARRAY['bytea', 'json']} ],
	[ qr/^_assert_warm_start_outputs$/, qr/^summary$/, 'table:model_summary' ],
	[ qr/^_assert_warm_start_outputs$/, qr/^(companion|companion_col)$/, 'null' ],
	[ qr/^_assert_columns$/, qr/^cols$/, q{sql:ARRAY['attributes']} ],
	[ qr/^_assert_columns$/, qr/^types$/, q{sql:ARRAY['bytea']} ],
	[ qr/^_px_node_prepare$/, qr/^colnames$/, q{sql:ARRAY['attributes']} ],
	[ qr/^_px_node_prepare$/, qr/^coltypes$/, q{sql:ARRAY['bytea']} ],
	[ qr/^_assert_(output_absent|schema_exists)$/, qr/^tbl$/, 'out' ],
	[ qr/keras_model/, qr/^tbl$/, 'table:arch' ],
	[ qr/byom/, qr/^model_id$/, 'sql:2' ],
	[ qr/gpu/, qr/^source$/, q{sql:'tensorflow'} ],
	[ qr/./, qr/^(kind)$/, q{sql:'response'} ],
	[ qr/./, qr/^transport$/, q{sql:'workers'} ],
	[ qr/./, qr/^cluster$/, 'null' ],
	[ qr/fit/, qr/^model$/, 'out' ],
	[ qr/preprocessor|^_pp_|^_ep_/, qr/^(source_table|source|src|rel)$/, 'table:iris_data' ],
	[ qr/./, qr/^sql_table$/, 'table:iris_data' ],
	[ qr/./, qr/^(source_table|source|src|train|training_preprocessor_table|packed_table|src_rel)$/, 'table:packed' ],
	[ qr/predict/, qr/^(test_table|ttbl)$/, 'table:iris_data' ],
	[ qr/./, qr/^(validation_table|validation|test|test_table|ttbl)$/, 'table:vpacked' ],
	[ qr/./, qr/^(tbl|rel)$/, 'table:packed' ],
	[ qr/multiple/, qr/^(model|model_table|mtbl)$/, 'table:fm' ],
	[ qr/./, qr/^(model_table|model|mtbl)$/, 'table:model' ],
	[ qr/./, qr/^(model_arch_table|keras_model_arch_table|arch|atbl|arch_tbl)$/, 'table:arch' ],
	[ qr/./, qr/^(model_selection_table|mst)$/, 'table:mst' ],
	[ qr/./, qr/^(output_table|model_output_table|dst|otbl|output)$/, 'out' ],
	[ qr/./, qr/^summ$/, 'out' ],
	[ qr/./, qr/^object_table$/, 'null' ],
	[ qr/./, qr/^(dep_col|y_col|val_y_col|cv_col|dependent_varname|class_name|y_cols|val_y_cols|dep_cols|deps|model_deps|class_names)$/, 'col:class_text' ],
	[ qr/./, qr/^(indep_col|x_col|val_x_col|independent_varname|varname|col|x_cols|val_x_cols|indep_cols|indeps|model_indeps|feature_cols|cols)$/, 'col:attributes' ],
	[ qr/./, qr/^cv_cols$/, 'col:class_text_class_values' ],
	[ qr/./, qr/^id_col$/, 'col:id' ],
	[ qr/./, qr/^(compile_params|compiles)$/, 'compile' ],
	[ qr/./, qr/^(fit_params|fits)$/, 'fit' ],
	[ qr/./, qr/^compile_params_list$/, 'compile' ],
	[ qr/./, qr/^fit_params_list$/, 'fit' ],
	[ qr/./, qr/^compile_params_grid$/, 'cgrid' ],
	[ qr/./, qr/^fit_params_grid$/, 'fgrid' ],
	[ qr/./, qr/^(model_arch|arch_raw|model_archs|archs|rows)$/, 'arch' ],
	[ qr/./, qr/^(model_weights|init_weights|weights)$/, 'weights' ],
	[ qr/./, qr/^(model_state|state|states)$/, 'state' ],
	[ qr/^_unpack_int16/, qr/^(buffer)$/, 'ybuf' ],
	[ qr/./, qr/^(indep|buffer)$/, 'xbuf' ],
	[ qr/./, qr/^dep$/, 'ybuf' ],
	[ qr/^_unpack_int16/, qr/^shape$/, 'yshape' ],
	[ qr/./, qr/^(indep_shape|x_shape|shape)$/, 'xshape' ],
	[ qr/./, qr/^(dep_shape|y_shape)$/, 'yshape' ],
	[ qr/./, qr/^(mst_key|num_configs|random_state)$/, 'null' ],
	[ qr/./, qr/^(model_id|num_iterations|metrics_compute_frequency|freq|iteration|k|dependent_count|nseg|num_segments|random_state|seed|schedule_seed|num_places|part|workers)$/, 'one' ],
	[ qr/./, qr/^(model_id_list|mst_keys|ids|msts|iters)$/, 'ids' ],
	[ qr/./, qr/^(batch_size|bs)$/, 'batch' ],
	[ qr/./, qr/^(buffer_size|num_classes|ncls|n_classes)$/, 'null' ],
	[ qr/./, qr/^(normalizing_const)$/, 'one' ],
	[ qr/./, qr/^search_type$/, 'search' ],
	[ qr/./, qr/^automl_method$/, 'automl' ],
	[ qr/./, qr/^automl_params$/, 'automlp' ],
	[ qr/./, qr/^schedule_table$/, 'out' ],
	[ qr/./, qr/^pred_type$/, 'pred' ],
	[ qr/./, qr/^distribution_rules$/, 'rules' ],
	[ qr/./, qr/^(class_values)$/, 'classes' ],
	[ qr/./, qr/^psum$/, 'psum' ],
	[ qr/./, qr/^message$/, 'usage' ],);

sub role_of
{
	my ($fname, $pname) = @_;
	for my $r (@ROLES)
	{
		return $r->[2] if $fname =~ $r->[0] && $pname =~ $r->[1];
	}
	return '';
}

# A table name ([label, schema, name]) as an expression of $type.
sub render_table
{
	my ($t, $type) = @_;
	my ($label, $schema, $name) = @$t;
	my $qual = $schema eq 'pg_temp' ? "pg_temp.$name" : "$schema.$name";
	# Unqualified in the caller's search_path when in the fixture schema.
	my $given = $schema eq $FS ? $name : $qual;
	return "ARRAY[" . lit($schema) . ", " . lit($name) . "]" if $type =~ /\[\]$/;
	return "to_regclass(" . lit($given) . ")" if $type eq 'regclass';
	return lit($given);
}

# The composite types of schema madlib_dl: type => [[attribute, type], ...]
# (catalog_functions fills it).  A parameter of such a type is a value
# built field by field: its good value has every field good, and its
# hostile values make one field hostile at a time.
my %COMPOSITE;

# The good value of a parameter, as an SQL expression (uncast).
sub good_value
{
	my ($fname, $pname, $type) = @_;
	my $role = role_of($fname, $pname);
	if ($COMPOSITE{$type})
	{
		return "ROW(" . join(', ', map { "(" . good_value($fname, $_->[0], $_->[1]) . ")::$_->[1]" }
			  @{ $COMPOSITE{$type} }) . ")";
	}
	my $arr = $type =~ /\[\]$/;
	return $1 if $role =~ /^sql:(.*)/s;
	if ($role =~ /^table:(.*)/)
	{
		return render_table([ $1, $FS, $1 ], $type);
	}
	if ($role eq 'out' && $type =~ /\[\]$|text|character/)
	{
		return $arr ? "ARRAY[current_user::text, 'hostile_out']" : q{'hostile_out'};
	}
	return ($type =~ /^any/ ? 'NULL::integer' : 'NULL') if $role eq 'null';
	return ($arr ? 'ARRAY[' . lit($1) . ']' : lit($1)) if $role =~ /^col:(.*)/;
	return ($arr ? 'ARRAY[' . lit($COMPILE) . ']' : lit($COMPILE)) if $role eq 'compile';
	return ($arr ? 'ARRAY[' . lit($FIT) . ']' : lit($FIT)) if $role eq 'fit';
	return lit($CGRID) if $role eq 'cgrid';
	return lit($FGRID) if $role eq 'fgrid';
	if ($role eq 'arch')
	{
		return "ARRAY[$G{arch_json}::text]" if $type eq 'text[]';
		return "ARRAY[$G{arch_json}]" if $type eq 'json[]';
		return $G{arch_json};
	}
	return ($arr ? "ARRAY[$G{weights}]" : $G{weights}) if $role eq 'weights' && $type =~ /^bytea/;
	return q{array_fill(0::real, '{83}')} if $role eq 'weights';
	return ($arr ? "ARRAY[$G{state}]" : $G{state}) if $role eq 'state' && $type =~ /^bytea/;
	return $G{$role} if $role =~ /^(xbuf|ybuf|xshape|yshape)$/;
	return '1' if $role eq 'one' && !$arr;
	return q{'{1}'} if $role eq 'ids' || ($role eq 'one' && $arr);
	return '16' if $role eq 'batch';
	return q{'grid'} if $role eq 'search';
	return q{'hyperopt'} if $role eq 'automl';
	return q{'num_configs=1, num_iterations=1'} if $role eq 'automlp';
	return $type =~ /int/ ? '1' : $type =~ /double|real/ ? '0.5' : q{'response'} if $role eq 'pred';
	return q{'2'} if $role eq 'rules';
	return q{'{Iris-setosa,Iris-versicolor,Iris-virginica}'} if $role eq 'classes';
	return "(SELECT to_jsonb(s) FROM $FS.packed_summary s)" if $role eq 'psum';
	return q{'usage'} if $role eq 'usage';
	# By type.
	my %by_type = (
		'integer' => '1', 'bigint' => '1', 'double precision' => '1', 'real' => '1', 'boolean' => 'false',
		'text' => q{'x'}, 'character varying' => q{'x'}, 'bytea' => q{'\x00'}, 'json' => q{'{}'},
		'jsonb' => q{'{}'}, 'integer[]' => q{'{1}'}, 'text[]' => q{'{x}'}, 'character varying[]' => q{'{x}'},
		'double precision[]' => q{'{1}'}, 'real[]' => q{'{1}'}, 'bytea[]' => "ARRAY[$G{weights}]",
		'json[]' => q{ARRAY['{}'::json]}, 'regclass' => "to_regclass('$FS.packed')", 'regtype' => q{'integer'},
		'tid' => q{'(0,1)'}, 'anyarray' => q{'{5.1,3.5,1.4,0.2}'::float8[]}, 'anyelement' => '1',
		'anycompatible' => 'NULL::integer',);
	return $by_type{$type} // 'NULL';
}

# The hostile values of a parameter: [label, expression].
sub hostile_values
{
	my ($fx, $fname, $pname, $type) = @_;
	my $role = role_of($fname, $pname);
	my $arr = $type =~ /\[\]$/;
	my $base = $type =~ s/\[\]$//r;
	my @v;
	if ($COMPOSITE{$type})
	{
		# NULL, then each field hostile in turn (its first values), the
		# others good
		my @attrs = @{ $COMPOSITE{$type} };
		my @good = map { "(" . good_value($fname, $_->[0], $_->[1]) . ")::$_->[1]" } @attrs;
		push @v, v('NULL', 'NULL');
		for my $i (0 .. $#attrs)
		{
			my $pool = hostile_values($fx, $fname, $attrs[$i][0], $attrs[$i][1]);
			for my $hv (@$pool[ 0 .. ($#$pool < 7 ? $#$pool : 7) ])
			{
				my @row = @good;
				$row[$i] = "($hv->[1])::$attrs[$i][1]";
				push @v, [ "$attrs[$i][0] = $hv->[0]", "ROW(" . join(', ', @row) . ")" ];
			}
		}
		return \@v;
	}
	return \@ANYARRAYS if $type eq 'anyarray';
	return \@ANYELEMENTS if $type eq 'anyelement';
	return \@ANYCOMPATIBLES if $type eq 'anycompatible';
	push @v, v('NULL', 'NULL');
	if ($role =~ /^table:(.*)/ || ($role eq 'out'))
	{
		my $names;
		if ($role eq 'out')
		{
			# Output parameters: existing relations, places the role may
			# not write to, missing schemas; decoys add nothing there.
			my %decoy = map { $_ => 1 } @{ $fx->{decoys}{packed} };
			$names = [ grep { !$decoy{ $_->[0] } } @{ table_names($fx, 'packed') } ];
			push @$names, [ 'pg_catalog.out', 'pg_catalog', 'hostile_out' ], [ 'secret.out', 'secret', 'hostile_out' ],
			  [ 'pg_temp.out', 'pg_temp', 'hostile_out' ];
		}
		else
		{
			$names = table_names($fx, $1);
		}
		push @v, map { [ "table $_->[0]", render_table($_, $type) ] } @$names;
		if ($type eq 'regclass')
		{
			push @v, v('oid 0', '0'), v('no such oid', '4294967295'), v('pg_proc', q{'pg_catalog.pg_proc'});
		}
		elsif ($arr)
		{
			push @v, @TEXT_ARRAYS[ 0 .. 6 ], v('{packed}', q{'{packed}'}),
			  v('{hostile,huge}', "ARRAY['$FS', $HUGE]"), v('{NULL,packed}', q{ARRAY[NULL, 'packed']});
		}
		else
		{
			push @v, map { [ "name $_->[0]", $_->[1] ] } @ODD_NAMES;
		}
		return \@v;
	}
	if ($base =~ /^(text|character varying|name)$/)
	{
		my @extra;
		@extra = @COLUMNS if $role =~ /^col:/;
		@extra = @COMPILES if $role eq 'compile';
		@extra = @FITS if $role eq 'fit';
		@extra = (@GRIDS, @COMPILES[ 0 .. 3 ]) if $role =~ /grid$/;
		@extra = map { [ $_->[0], "$_->[1]::text" ] } @JSONS if $role eq 'arch';
		@extra = (v('grid', q{'grid'}), v('random', q{'random'}), v('hyperband', q{'hyperband'}), v('GRID', q{'GRID'}))
		  if $role eq 'search';
		@extra = (v('prob', q{'prob'}), v('response', q{'response'}), v('ref', q{'ref'}), v('prob_3', q{'prob_3'}))
		  if $role eq 'pred';
		@extra = (v('hyperband', q{'hyperband'}), v('asha', q{'asha'}), v('HYPEROPT', q{'HYPEROPT'}), v('bayes', q{'bayes'}))
		  if $role eq 'automl';
		@extra = (
			v('R=100000,eta=2', q{'R=100000, eta=2'}), v('num_configs=1024', q{'num_configs=1024, num_iterations=100000'}),
			v('R=2^31', q{'R=2147483648'}), v('trailing =', q{'R='}), v('eta=0', q{'eta=0'}), v('algorithm quote', q{'algorithm='''}),
			v('R=3,eta=3', q{'R=3, eta=3'}), v('skip_last=-1', q{'skip_last=-1'}))
		  if $role eq 'automlp';
		@extra = (
			v('all_segments', q{'all_segments'}), v('gpu_segments', q{'gpu_segments'}), v('{0}', q{'{0}'}),
			v('-1', q{'-1'}), v('0', q{'0'}), v('2^31-1', q{'2147483647'}), v('1e9', q{'1e9'}), v('{1,2,3}', q{'{1,2,3}'}))
		  if $role eq 'rules';
		if ($arr)
		{
			push @v, grep { $_->[0] ne 'NULL' } @TEXT_ARRAYS;
			push @v, map { [ "{$_->[0]}", "ARRAY[$_->[1]]" ] } grep { $_->[0] ne 'NULL' } (@extra, @TEXT_GENERIC[ 1, 3 ]);
		}
		else
		{
			push @v, grep { $_->[0] ne 'NULL' } @TEXT_GENERIC;
			push @v, @extra;
		}
		return \@v;
	}
	my %pool = (
		'integer' => \@INTS, 'bigint' => \@BIGINTS, 'double precision' => \@FLOATS, 'real' => \@REALS,
		'boolean' => [ v('true', 'true'), v('false', 'false') ], 'bytea' => \@BYTEAS, 'json' => \@JSONS,
		'jsonb' => \@JSONBS, 'regtype' => \@REGTYPES, 'tid' => \@TIDS,
		'regclass' => [ v('oid 0', '0'), v('no such oid', '4294967295'), v('pg_class', q{'pg_class'}) ],);
	my %apool = (
		'integer' => \@INT_ARRAYS, 'double precision' => \@FLOAT_ARRAYS, 'real' => \@FLOAT_ARRAYS,
		'bytea' => \@BYTEA_ARRAYS, 'json' => \@JSON_ARRAYS,);
	if ($arr)
	{
		push @v, @{ $apool{$base} // \@TEXT_ARRAYS };
		push @v, map { [ "{$_->[0]}", "ARRAY[$_->[1]::$base]" ] } @JSONS[ 5 .. 12 ] if $base eq 'json';
		push @v, map { [ "{$_->[0]}", "ARRAY[$_->[1]]" ] } @BYTEAS[ 3 .. 9 ] if $base eq 'bytea';
	}
	else
	{
		push @v, @{ $pool{$base} // [] };
	}
	return \@v;
}

# ----------------------------------------------------------------------
# Calls
# ----------------------------------------------------------------------

# The functions of schema madlib_dl: [{sig, name, kind, retset, lang,
# types => [...], names => [...], body}], in signature order.
sub catalog_functions
{
	my ($node) = @_;
	my $out = $node->safe_psql('postgres', q{
		SELECT p.oid::regprocedure::text, p.proname, p.prokind, p.proretset, l.lanname,
		       coalesce((SELECT string_agg(format_type(t, NULL), ';' ORDER BY o)
		                   FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, o)), ''),
		       coalesce((SELECT string_agg(coalesce(n, ''), ';' ORDER BY o)
		                   FROM unnest(p.proargnames, coalesce(p.proargmodes::text[],
		                               array_fill('i'::text, ARRAY[coalesce(cardinality(p.proargnames), 0)])))
		                        WITH ORDINALITY u(n, m, o)
		                  WHERE m IN ('i', 'b', 'v')), ''),
		       md5(p.prosrc), coalesce(a.aggkind::text, ''), coalesce(a.aggnumdirectargs, 0)
		  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		       LEFT JOIN pg_aggregate a ON a.aggfnoid = p.oid
		 WHERE p.pronamespace = 'madlib_dl'::regnamespace
		 ORDER BY 1});
	my $comp = $node->safe_psql('postgres', q{
		SELECT format_type(t.oid, NULL), a.attname, format_type(a.atttypid, a.atttypmod)
		  FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid
		 WHERE t.typtype = 'c' AND t.typnamespace = 'madlib_dl'::regnamespace
		   AND a.attnum > 0 AND NOT a.attisdropped
		 ORDER BY 1, a.attnum});
	%COMPOSITE = ();
	for my $line (split /\n/, $comp)
	{
		my ($type, $attr, $atype) = split /\|/, $line;
		push @{ $COMPOSITE{$type} }, [ $attr, $atype ];
	}
	my @f;
	for my $line (split /\n/, $out)
	{
		my ($sig, $name, $kind, $retset, $lang, $types, $names, $body, $aggkind, $ndirect) = split /\|/, $line;
		my @types = length $types ? split(/;/, $types, -1) : ();
		my @names = length $names ? split(/;/, $names, -1) : ();
		push @f, {
			sig => $sig, name => $name, kind => $kind, retset => $retset eq 't', lang => $lang,
			types => \@types, names => [ map { ($names[$_] // '') eq '' ? '$' . ($_ + 1) : $names[$_] } 0 .. $#types ],
			body => $body, ordered_set => $aggkind eq 'o', n_direct => $ndirect };
	}
	return \@f;
}

# One call: the SQL of calling $f with argument expressions @args.
sub call_sql
{
	my ($f, @args) = @_;
	# An aggregate over the rows of agg_rows, in parallel, when an
	# argument refers to r.g.
	my $parallel = grep { /\br\.g\b/ } @args;
	my @a;
	for my $i (0 .. $#args)
	{
		my $t = $f->{types}[$i];
		push @a, $t =~ /^any/ ? $args[$i] : "($args[$i])::$t";
	}
	my $call = "madlib_dl.$f->{name}(" . join(', ', @a) . ")";
	# An ordered-set aggregate: its direct arguments, then WITHIN GROUP
	# (ORDER BY the aggregated ones).
	$call = "madlib_dl.$f->{name}(" . join(', ', @a[ 0 .. $f->{n_direct} - 1 ]) . ") WITHIN GROUP (ORDER BY "
	  . join(', ', @a[ $f->{n_direct} .. $#a ]) . ")"
	  if $f->{ordered_set};
	return "SET LOCAL parallel_setup_cost = 0; SET LOCAL parallel_tuple_cost = 0; "
	  . "SET LOCAL min_parallel_table_scan_size = 0; SET LOCAL max_parallel_workers_per_gather = 4; "
	  . "SELECT $call FROM $FS.agg_rows AS r"
	  if $f->{kind} eq 'a' && $parallel;
	return "SELECT $call FROM generate_series(1, 1) AS g" if $f->{kind} eq 'a';
	return "SELECT count(*) FROM $call AS r" if $f->{retset};
	return "SELECT $call";
}

# Share $n calls among the plans @$open by weight, none getting more
# than its number of single-parameter calls; adds to %$share, returns
# what is left.
sub share_out
{
	my ($n, $open, $share) = @_;
	my @open = @$open;
	while ($n > 0 && @open)
	{
		my $w = 0;
		$w += $_->{weight} for @open;
		my (@next, $given);
		$given = 0;
		for my $p (@open)
		{
			my $room = @{ $p->{singles} } - ($share->{$p} // 0);
			my $s = int($n * $p->{weight} / $w);
			$s = $room if $s > $room;
			$share->{$p} += $s;
			$given += $s;
			push @next, $p if $s < $room;
		}
		$n -= $given;
		if ($given == 0)
		{
			# Less than one call each: one each in plan order.
			for my $p (@next)
			{
				last if $n == 0;
				$share->{$p}++;
				$n--;
			}
			last;
		}
		@open = @next;
	}
	return $n;
}

# The call list: hashes {fn, label, sql}.  Options: budget (calls),
# seed, skip (regex on the signature), fx (hostile_fixtures' result).
# Returns (calls, stats).
sub hostile_calls
{
	my ($node, %o) = @_;
	my $fx = $o{fx};
	srand($o{seed});
	my $funcs = catalog_functions($node);
	my (%stats, @plan, %seen_body);
	$stats{functions} = scalar @$funcs;
	for my $f (@$funcs)
	{
		if (grep { $_ eq 'internal' } @{ $f->{types} })
		{
			# Not callable from SQL; reached through their aggregates.
			push @{ $stats{internal} }, $f->{sig};
			next;
		}
		if (defined $o{skip} && length $o{skip} && $f->{sig} =~ /$o{skip}/)
		{
			push @{ $stats{skipped} }, $f->{sig};
			next;
		}
		my @good = map { good_value($f->{name}, $f->{names}[$_], $f->{types}[$_]) } 0 .. $#{ $f->{types} };
		my @singles;
		my @pools;
		for my $i (0 .. $#good)
		{
			my $pool = hostile_values($fx, $f->{name}, $f->{names}[$i], $f->{types}[$i]);
			push @pools, $pool;
			for my $hv (@$pool)
			{
				next if $hv->[1] eq $good[$i];
				my @args = @good;
				$args[$i] = $hv->[1];
				push @singles, { label => "$f->{names}[$i] = $hv->[0]", args => \@args };
				next unless $f->{kind} eq 'a';
				# Aggregates again in parallel, half the rows hostile: the
				# workers' partial states differ when they are combined.
				my $t = $f->{types}[$i];
				my @pargs = @good;
				$pargs[$i] = $t =~ /^any/
				  ? "CASE WHEN r.g % 2 = 0 THEN $good[$i] ELSE $hv->[1] END"
				  : "CASE WHEN r.g % 2 = 0 THEN ($good[$i])::$t ELSE ($hv->[1])::$t END";
				push @singles, { label => "parallel, half the rows: $f->{names}[$i] = $hv->[0]", args => \@pargs };
			}
		}
		# Aliases (same body and argument types as a function seen
		# before) weigh less: they reach the same code.
		my $key = "$f->{body}/" . join(',', @{ $f->{types} });
		my $weight = $seen_body{$key}++ ? 0.25
		  : $f->{lang} eq 'c' ? 4
		  : $f->{lang} eq 'plpgsql' ? 2
		  : 1;
		$weight = 0.25 if @good == 0;
		push @plan, { f => $f, good => \@good, singles => \@singles, pools => \@pools, weight => $weight };
	}
	# Shares of the budget: every function has its good call.  The rest
	# goes first to the single-parameter calls, shared by weight (all of
	# them when the budget allows), then to random mixes, as many at most
	# as the function has single-parameter calls.
	my $left = $o{budget} - scalar(@plan) - scalar(grep { $_->{f}{kind} eq 'a' } @plan);
	my (%singles, %mixes);
	$left = share_out($left, [ grep { @{ $_->{singles} } } @plan ], \%singles);
	share_out($left, [ grep { @{ $_->{singles} } } @plan ], \%mixes);
	my @calls;
	for my $p (@plan)
	{
		my $f = $p->{f};
		push @calls, { fn => $f->{sig}, label => 'all good', sql => call_sql($f, @{ $p->{good} }) };
		if ($f->{kind} eq 'a')
		{
			my @args = @{ $p->{good} };
			my $t = $f->{types}[0];
			$args[0] = $t =~ /^any/ ? "CASE WHEN r.g > 0 THEN $args[0] END"
			  : "CASE WHEN r.g > 0 THEN ($args[0])::$t END";
			push @calls, { fn => $f->{sig}, label => 'all good, parallel', sql => call_sql($f, @args) };
		}
		my $ns = $singles{$p} // 0;
		my $nm = $mixes{$p} // 0;
		my @s = @{ $p->{singles} };
		# Seeded shuffle; singles first, then random mixes.
		for (my $i = $#s; $i > 0; $i--)
		{
			my $j = int(rand($i + 1));
			@s[ $i, $j ] = @s[ $j, $i ];
		}
		push @calls,
		  map { { fn => $f->{sig}, label => $_->{label}, sql => call_sql($f, @{ $_->{args} }) } }
		  @s[ 0 .. $ns - 1 ];
		for (1 .. $nm)
		{
			my (@args, @lab);
			for my $i (0 .. $#{ $p->{good} })
			{
				if (rand() < 0.4 && @{ $p->{pools}[$i] })
				{
					my $hv = $p->{pools}[$i][ int(rand(scalar @{ $p->{pools}[$i] })) ];
					push @args, $hv->[1];
					push @lab, "$f->{names}[$i] = $hv->[0]";
				}
				else
				{
					push @args, $p->{good}[$i];
				}
			}
			push @calls, { fn => $f->{sig}, label => 'mix: ' . (join('; ', @lab) || 'all good'),
				sql => call_sql($f, @args) };
		}
	}
	$stats{callable} = scalar @plan;
	$stats{universe} = 0;
	$stats{universe} += 1 + @{ $_->{singles} } for @plan;
	return (\@calls, \%stats);
}

# ----------------------------------------------------------------------
# Running
# ----------------------------------------------------------------------

# Crash lines of a server log text.
sub hostile_log_crashes
{
	my ($text) = @_;
	return grep {
		# A parallel worker that raised an ERROR exits with code 1: not
		# a crash.  A backend's abnormal exit, a signal, a PANIC is.
		/terminated by signal|terminated by exception|PANIC:|TRAP:|server process \(PID \d+\) exited with exit code|exited with exit code (?!1\b)\d+/
	} split /\n/, $text;
}

sub log_from
{
	my ($node, $offset) = @_;
	my $all = slurp_file($node->logfile);
	return (substr($all, $offset), length $all);
}

# Run @$calls as $role through psql.  Options: timeout (statement_timeout,
# e.g. '2s'), hang_s (seconds a call may run before it is a hang),
# prologue (SQL run at the start of every session).  Returns a hash:
# calls (made), crashes [{call, fn, label, sql, log}], hangs, lost
# (connection lost, no crash in the log), sqlstates {code => n},
# internal [XX000 messages], seconds.
sub hostile_run
{
	my ($node, $role, $calls, %o) = @_;
	my $t0 = time();
	my $hang_s = $o{hang_s} // 30;
	my %r = (calls => 0, crashes => [], hangs => [], lost => [], sqlstates => {}, internal => {});
	my $i = 0;
	my $segments = 0;
	my $app = "hostile_$role";
	while ($i < @$calls)
	{
		$segments++;
		my ($sfh, $script) = tempfile('hostile_XXXX', SUFFIX => '.sql', TMPDIR => 1, UNLINK => 1);
		print $sfh "\\o /dev/null\n\\set VERBOSITY verbose\n\\set SHOW_CONTEXT never\n"
		  . "SET client_min_messages = error;\nSET application_name = '$app';\n"
		  . "SET statement_timeout = '$o{timeout}';\n"
		  . ($o{prologue} // '')
		  . "\\warn @@ BEGIN\n";
		for my $k ($i .. $#$calls)
		{
			print $sfh "\\warn @@ $k\nBEGIN;\n$calls->[$k]{sql};\nROLLBACK;\n";
		}
		print $sfh "\\warn @@ END\nSELECT 1;\n\\warn @@ DONE\n";
		close $sfh;
		my ($efh, $errfile) = tempfile('hostile_XXXX', SUFFIX => '.err', TMPDIR => 1, UNLINK => 1);
		close $efh;
		my (undef, $logoff) = log_from($node, 0);
		my @cmd = ($node->installed_command('psql'), '-X', '-q', '-v', 'ON_ERROR_STOP=0',
			'-d', $node->connstr('postgres') . " user=$role", '-f', $script);
		my $pid = fork();
		die "fork: $!" unless defined $pid;
		if ($pid == 0)
		{
			open STDIN, '<', '/dev/null';
			open STDOUT, '>', '/dev/null';
			open STDERR, '>', $errfile;
			exec @cmd or POSIX::_exit(127);
		}
		my $reader = { file => $errfile, pos => 0, mark => -1 };
		my $last_mark = -1;
		my $last_change = time();
		my $hung;
		while (waitpid($pid, WNOHANG) == 0)
		{
			usleep(50_000);
			my $mark = last_mark($reader);
			if ($mark ne $last_mark)
			{
				# Time per function, to the poll's resolution.
				$r{fn_seconds}{ $calls->[$last_mark]{fn} } += time() - $last_change
				  if $last_mark =~ /^\d+$/;
				($last_mark, $last_change) = ($mark, time());
			}
			elsif (!defined $hung && $mark =~ /^\d+$/ && time() - $last_change > $hang_s)
			{
				# Ignored statement_timeout: record it and end the session.
				$hung = $mark;
				push @{ $r{hangs} }, { call => $mark, %{ $calls->[$mark] } };
				note "hang at call $mark ($calls->[$mark]{fn}, $calls->[$mark]{label})";
				$node->psql('postgres',
					"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '$app'");
				$last_change = time();
			}
			elsif (defined $hung && time() - $last_change > 60)
			{
				kill 'KILL', $pid;
			}
		}
		my $errtext = slurp_file($errfile);
		my $done = $errtext =~ /^@@ DONE$/m;
		my $end = $errtext =~ /^@@ END$/m;
		my $mark = last_mark({ file => $errfile, pos => 0, mark => -1 });
		# Outcomes of the calls in this segment.
		my @chunks = split /^@@ (\d+|BEGIN|END|DONE)\n/m, $errtext;
		shift @chunks;
		while (@chunks)
		{
			my ($k, $txt) = splice @chunks, 0, 2;
			next unless $k =~ /^\d+$/;
			$txt //= '';
			$r{calls}++;
			if ($txt =~ /ERROR:\s+([0-9A-Z]{5}):\s*(.*)/)
			{
				$r{outcome}{$k} = "$1: " . substr($2, 0, 160);
				$r{sqlstates}{$1}++;
				if ($1 eq 'XX000')
				{
					my $msg = substr($2, 0, 200);
					$r{internal}{"$calls->[$k]{fn}: $msg"} //= $calls->[$k];
				}
			}
			elsif ($txt =~ /connection to server was lost|server closed the connection|terminating connection/)
			{
				$r{sqlstates}{'lost'}++;
			}
			else
			{
				$r{outcome}{$k} = 'ok';
				$r{sqlstates}{'ok'}++;
			}
		}
		last if $done;
		my ($newlog) = log_from($node, $logoff);
		my @crash = hostile_log_crashes($newlog);
		if ($end)
		{
			# Lost after the last call: the final SELECT 1 failed.
			push @{ $r{lost} }, { call => 'end', fn => '', label => 'SELECT 1 after the last call',
				sql => '', log => join("\n", @crash) };
			last;
		}
		my $k = $mark =~ /^\d+$/ ? $mark : $i;
		$k = $i if $k < $i;
		if (@crash)
		{
			push @{ $r{crashes} }, { call => $k, %{ $calls->[$k] }, log => join("\n", @crash) };
			note "crash at call $k ($calls->[$k]{fn}, $calls->[$k]{label}): $crash[0]";
		}
		elsif (!(defined $hung && $hung == $k))
		{
			push @{ $r{lost} }, { call => $k, %{ $calls->[$k] }, log => substr($errtext, -500) };
			note "connection lost at call $k ($calls->[$k]{fn}, $calls->[$k]{label})";
		}
		# The server restarts itself after a crash (restart_after_crash).
		$node->poll_query_until('postgres', 'SELECT true')
		  or BAIL_OUT('the server did not come back after a crash');
		$i = $k + 1;
	}
	$r{segments} = $segments;
	$r{seconds} = time() - $t0;
	return \%r;
}

# The last "@@ n" marker written to $r->{file} so far (n, or BEGIN, END,
# DONE; -1 before the first), reading on from where the last look ended.
sub last_mark
{
	my ($r) = @_;
	open my $fh, '<', $r->{file} or return $r->{mark};
	seek $fh, $r->{pos}, 0;
	local $/;
	my $new = <$fh> // '';
	close $fh;
	# Keep a partial last line for the next look.
	my $cut = rindex($new, "\n");
	return $r->{mark} if $cut < 0;
	$new = substr($new, 0, $cut + 1);
	$r->{pos} += length $new;
	my @m = $new =~ /^@@ (\d+|BEGIN|END|DONE)$/mg;
	$r->{mark} = $m[-1] if @m;
	return $r->{mark};
}

1;
