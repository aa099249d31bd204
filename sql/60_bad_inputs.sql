--
-- 60_bad_inputs: a catalog of bad inputs to every user-facing function.
-- Each case runs in bi_run() (an exception handler, so a subtransaction)
-- and prints its SQLSTATE, message and hint on one line.  Then the checks:
-- every case failed, none with XX000 (internal error) and none without a
-- hint; no output table of any case exists; the source tables have the
-- same contents (md5) as before; the server still serves.  A few cases
-- also run as top-level statements, so the plain ERROR line shows too.
--
\set VERBOSITY terse
\set SHOW_CONTEXT never
SET extra_float_digits = 0;
CREATE SCHEMA bad;
SET search_path = bad, public;
\set ECHO none
\i test/data/iris.sql
\set ECHO all

-- ---------------------------------------------------------------------
-- Good inputs the bad ones are variations of
-- ---------------------------------------------------------------------
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_packed', 'class_text',
    'attributes', NULL, 1.0, NULL, '2');
SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'iris_test_packed', 'class_text',
    'attributes', 'iris_packed');

\set iris_arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 10, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 3, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set arch_5in '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 5], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "units": 3, "activation": "softmax"}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set arch_4out '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "units": 4, "activation": "softmax"}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set arch_mha '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4, 1], "dtype": "float32", "name": "in"}}, {"class_name": "MultiHeadAttention", "config": {"name": "mha", "num_heads": 2, "key_dim": 8}}, {"class_name": "Dense", "config": {"name": "dense", "units": 3, "activation": "softmax"}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
\set compile 'loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.01)'', metrics=[''accuracy'']'
\set arch_conv_huge '{"class_name": "Sequential", "config": {"name": "c", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 256, 256, 16]}}, {"class_name": "Conv2D", "config": {"name": "c", "filters": 4, "kernel_size": [64, 64], "padding": "same"}}, {"class_name": "Flatten", "config": {"name": "f"}}, {"class_name": "Dense", "config": {"name": "d", "units": 3, "activation": "softmax"}}]}}'
\set arch_dense_huge '{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4]}}, {"class_name": "Dense", "config": {"name": "d", "units": 2147483647, "activation": "softmax"}}]}}'

SELECT madlib_dl.load_keras_model('arch', :'iris_arch', NULL, 'iris mlp');        -- model_id 1
SELECT madlib_dl.load_keras_model('arch', :'arch_5in', NULL, 'five inputs');      -- model_id 2
SELECT madlib_dl.load_keras_model('arch', :'arch_4out', NULL, 'four classes');    -- model_id 3
SET client_min_messages = warning;
SELECT madlib_dl.fit('iris_packed', 'iris_model', 'arch', 1, :'compile', 'batch_size=16', 2);
RESET client_min_messages;
SELECT count(*) AS model_rows, min(octet_length(model_weights)) AS weight_bytes FROM iris_model;
-- the trained weights as an architecture with weights
SELECT madlib_dl.load_keras_model('arch', :'iris_arch', (SELECT model_weights FROM iris_model),
                                  'iris mlp, trained');                           -- model_id 4

-- Bad tables: empty, with NULL / NaN / Infinity features, a NULL one-hot
-- label, wrong column types; corrupt models: truncated weights, NaN
-- weights, a damaged architecture, two rows.
CREATE TABLE iris_empty (LIKE iris_train);
CREATE TABLE iris_null_x AS SELECT * FROM iris_train;
UPDATE iris_null_x SET attributes = NULL WHERE id = 7;
CREATE TABLE iris_null_elem AS SELECT * FROM iris_train;
UPDATE iris_null_elem SET attributes[3] = NULL WHERE id = 7;
CREATE TABLE iris_nan_x AS SELECT * FROM iris_train;
UPDATE iris_nan_x SET attributes[2] = 'NaN' WHERE id = 7;
CREATE TABLE iris_inf_x AS SELECT * FROM iris_train;
UPDATE iris_inf_x SET attributes[4] = '-Infinity' WHERE id = 8;
CREATE TABLE iris_ragged AS SELECT * FROM iris_train;
UPDATE iris_ragged SET attributes = attributes || 1.0::float8 WHERE id = 9;
CREATE TABLE iris_onehot AS
SELECT id, attributes,
       ARRAY[(class_text = 'Iris-setosa')::int, (class_text = 'Iris-versicolor')::int,
             (class_text = 'Iris-virginica')::int]::real[] AS y
  FROM iris_train;
CREATE TABLE iris_onehot_nan AS SELECT * FROM iris_onehot;
UPDATE iris_onehot_nan SET y[2] = 'NaN' WHERE id = 11;
CREATE TABLE iris_onehot_null AS SELECT * FROM iris_onehot;
UPDATE iris_onehot_null SET y = NULL WHERE id = 1;
CREATE TABLE iris_types AS
SELECT id, attributes::text[] AS attr_text, attributes, date '2020-01-01' + id AS day,
       class_text, (SELECT 1) AS n
  FROM iris_train;
CREATE TABLE iris_test_nan AS SELECT * FROM iris_test;
UPDATE iris_test_nan SET attributes[1] = 'Infinity' WHERE id = 10;
CREATE TABLE iris_test_short AS SELECT * FROM iris_test;
UPDATE iris_test_short SET attributes = attributes[1:3] WHERE id = 15;
CREATE TABLE not_an_arch (model_id integer, model_arch text, model_weights bytea);
INSERT INTO not_an_arch VALUES (1, 'x', NULL);
CREATE VIEW iris_view AS SELECT * FROM iris_train;
-- empty packed table, with a copy of the summary
CREATE TABLE packed_empty (LIKE iris_packed);
CREATE TABLE packed_empty_summary AS SELECT * FROM iris_packed_summary;
-- a packed table whose buffers have been damaged
CREATE TABLE packed_damaged AS SELECT * FROM iris_packed;
CREATE TABLE packed_damaged_summary AS SELECT * FROM iris_packed_summary;
UPDATE packed_damaged SET attributes = substring(attributes FROM 1 FOR 17);
-- model tables: truncated weights, NaN weights, architecture damaged, 2 rows
CREATE TABLE model_trunc AS SELECT * FROM iris_model;
CREATE TABLE model_trunc_summary AS SELECT * FROM iris_model_summary;
UPDATE model_trunc_summary SET model = 'bad.model_trunc';
UPDATE model_trunc SET model_weights = substring(model_weights FROM 1 FOR 100);
CREATE TABLE model_nan AS SELECT * FROM iris_model;
CREATE TABLE model_nan_summary AS SELECT * FROM iris_model_summary;
UPDATE model_nan_summary SET model = 'bad.model_nan';
UPDATE model_nan SET model_weights = madlib_dl.weights_from_array(
    (SELECT array_agg(CASE WHEN i = 5 THEN 'NaN'::real ELSE w END ORDER BY i)
       FROM unnest(madlib_dl.weights_to_array(model_weights)) WITH ORDINALITY u(w, i)));
CREATE TABLE model_badarch AS SELECT * FROM iris_model;
CREATE TABLE model_badarch_summary AS SELECT * FROM iris_model_summary;
UPDATE model_badarch SET model_arch = '{"class_name": "Sequential", "config": {"layers": 7}}';
CREATE TABLE model_tworows AS SELECT * FROM iris_model UNION ALL SELECT * FROM iris_model;
CREATE TABLE model_tworows_summary AS SELECT * FROM iris_model_summary;
UPDATE model_tworows_summary SET model = 'bad.model_tworows';
CREATE TABLE model_nosummary AS SELECT * FROM iris_model;
-- an architecture row with weights of the wrong size, slipped past
-- load_keras_model
CREATE TABLE arch_badw AS SELECT * FROM arch;
UPDATE arch_badw SET model_weights = '\x0000803f'::bytea WHERE model_id = 1;
-- architectures too large for memory: a 64x64 kernel on a [256, 256, 16]
-- input (262k parameters, 17 GB of im2col for one sample), and a
-- Dense(units=2147483647) row slipped past load_keras_model
CREATE TABLE arch_big AS SELECT * FROM arch WHERE false;
INSERT INTO arch_big (model_id, model_arch) VALUES
(1, :'arch_conv_huge'),
(2, :'arch_dense_huge');
-- a model selection table, a multi-model table made from it by
-- fit_multiple, and damaged copies of both
SELECT madlib_dl.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY[:'compile'], ARRAY['batch_size=16']);
SET client_min_messages = warning;
SELECT madlib_dl.fit_multiple('iris_packed', 'multi', 'mst', 1);
RESET client_min_messages;
SELECT mst_key, octet_length(model_weights) AS weight_bytes FROM multi ORDER BY mst_key;
CREATE TABLE mst_bad_id AS SELECT * FROM mst;
CREATE TABLE mst_bad_id_summary AS SELECT * FROM mst_summary;
UPDATE mst_bad_id SET model_id = 99;
CREATE TABLE mst_bad_params AS SELECT * FROM mst;
CREATE TABLE mst_bad_params_summary AS SELECT * FROM mst_summary;
UPDATE mst_bad_params SET compile_params = 'loss=''mse'', optimizer=''SGD(lr=-1)''';
CREATE TABLE mst_dup AS SELECT * FROM mst UNION ALL SELECT * FROM mst;
CREATE TABLE mst_dup_summary AS SELECT * FROM mst_summary;
CREATE TABLE mst_empty AS SELECT * FROM mst WHERE false;
CREATE TABLE mst_empty_summary AS SELECT * FROM mst_summary;
-- one configuration more than a fit_multiple job takes (madlib_dl._job_limit('models'))
CREATE TABLE mst_big AS SELECT * FROM mst WHERE false;
INSERT INTO mst_big (mst_key, model_id, compile_params, fit_params)
SELECT g, m.model_id, m.compile_params, m.fit_params
  FROM (SELECT * FROM mst ORDER BY mst_key LIMIT 1) m, generate_series(1, madlib_dl._job_limit('models') + 1) g;
CREATE TABLE mst_big_summary AS SELECT * FROM mst_summary;
CREATE TABLE mst_nosummary AS SELECT * FROM mst;
CREATE TABLE multi_trunc AS SELECT * FROM multi;
CREATE TABLE multi_trunc_summary AS SELECT * FROM multi_summary;
CREATE TABLE multi_trunc_info AS SELECT * FROM multi_info;
UPDATE multi_trunc_summary SET model = 'bad.multi_trunc', model_info = 'bad.multi_trunc_info';
UPDATE multi_trunc SET model_weights = substring(model_weights FROM 1 FOR 40);

-- ---------------------------------------------------------------------
-- The harness
-- ---------------------------------------------------------------------
-- bi_try(stmt): run stmt; its SQLSTATE, message and hint ('ok' if it
-- ran: then its effects are undone too, so one case cannot mask another).
CREATE FUNCTION bi_try(stmt text, OUT state text, OUT message text, OUT hint text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RAISE EXCEPTION 'bi_try: the statement ran' USING ERRCODE = 'BI000';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT,
                            hint = PG_EXCEPTION_HINT;
    IF state = 'BI000' THEN
        state := 'ok';
        message := NULL;
    END IF;
    hint := nullif(hint, '');
END
$$;

-- The catalog: function, what is wrong, the statement, and the output
-- tables it must not leave behind.
CREATE TABLE bi_case (id serial PRIMARY KEY, fn text, what text, stmt text, outputs text[]);
CREATE TABLE bi_result (id integer, state text, message text, hint text);

-- The contents of every input table, before.
CREATE FUNCTION bi_table_md5s() RETURNS TABLE (relname name, n bigint, md5 text)
LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
    FOR r IN SELECT c.oid::regclass AS rel, c.relname FROM pg_class c
              WHERE c.relnamespace = 'bad'::regnamespace AND c.relkind IN ('r', 'v')
                AND c.relname NOT LIKE 'bi\_%' ORDER BY c.relname LOOP
        relname := r.relname;
        EXECUTE format('SELECT count(*), md5(coalesce(string_agg(t::text, ''|'' ORDER BY t::text), '''')) FROM %s t',
                       r.rel) INTO n, md5;
        RETURN NEXT;
    END LOOP;
END
$$;
CREATE TABLE bi_before AS SELECT * FROM bi_table_md5s();
CREATE TABLE bi_rels_before AS
SELECT c.oid, c.relname FROM pg_class c WHERE c.relnamespace = 'bad'::regnamespace;

-- ---------------------------------------------------------------------
-- The cases
-- ---------------------------------------------------------------------
\set pp 'madlib_dl.training_preprocessor_dl'
\set vp 'madlib_dl.validation_preprocessor_dl'
INSERT INTO bi_case (fn, what, stmt, outputs) VALUES
-- load_keras_model / delete_keras_model
('load_keras_model', 'NULL model_arch',
 $$SELECT madlib_dl.load_keras_model('arch_new', NULL::json)$$, '{arch_new}'),
('load_keras_model', 'JSON that is not a Keras model',
 $$SELECT madlib_dl.load_keras_model('arch_new', '{"foo": 1}')$$, '{arch_new}'),
('load_keras_model', 'malformed JSON (truncated)',
 $$SELECT madlib_dl.load_keras_model('arch_new', '{"class_name": "Sequential", "config": {')$$, '{arch_new}'),
('load_keras_model', 'layers is not a list',
 $$SELECT madlib_dl.load_keras_model('arch_new', '{"class_name": "Sequential", "config": {"layers": 7}}')$$, '{arch_new}'),
('load_keras_model', 'unsupported layer (MultiHeadAttention)',
 format($$SELECT madlib_dl.load_keras_model('arch_new', %L)$$, :'arch_mha'), '{arch_new}'),
('load_keras_model', 'weights of the wrong size (one float short)',
 format($$SELECT madlib_dl.load_keras_model('arch_new', %L, madlib_dl.weights_from_array(array_fill(0.5::real, ARRAY[82])))$$, :'iris_arch'), '{arch_new}'),
('load_keras_model', 'weights not a whole number of float32',
 format($$SELECT madlib_dl.load_keras_model('arch_new', %L, '\x000000'::bytea)$$, :'iris_arch'), '{arch_new}'),
('load_keras_model', 'NaN among the weights',
 format($$SELECT madlib_dl.load_keras_model('arch_new', %L, madlib_dl.weights_from_array(array_fill('NaN'::real, ARRAY[83])))$$, :'iris_arch'), '{arch_new}'),
('load_keras_model', 'table name with a semicolon (injection)',
 format($$SELECT madlib_dl.load_keras_model('arch; DROP TABLE bad.iris_train', %L)$$, :'iris_arch'), '{arch}'),
('load_keras_model', 'existing table of another layout',
 format($$SELECT madlib_dl.load_keras_model('not_an_arch', %L)$$, :'iris_arch'), '{}'),
('delete_keras_model', 'model_id not in the table',
 $$SELECT madlib_dl.delete_keras_model('arch', 99)$$, '{}'),
('delete_keras_model', 'NULL model_id',
 $$SELECT madlib_dl.delete_keras_model('arch', NULL)$$, '{}'),
('delete_keras_model', 'missing table',
 $$SELECT madlib_dl.delete_keras_model('no_such_arch', 1)$$, '{}'),
('delete_keras_model', 'three-part name (dots)',
 $$SELECT madlib_dl.delete_keras_model('bad.arch.x', 1)$$, '{}'),
-- training_preprocessor_dl
('training_preprocessor_dl', 'missing source table',
 $$SELECT madlib_dl.training_preprocessor_dl('no_such_table', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'empty source table',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_empty', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'source is a view',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_view', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'output table exists',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'iris_packed', 'class_text', 'attributes')$$, '{}'),
('training_preprocessor_dl', 'output name with a semicolon (injection)',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'x; DROP TABLE bad.iris_train', 'class_text', 'attributes')$$, '{x}'),
('training_preprocessor_dl', 'output in a schema that does not exist',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'no_such_schema.pp_out', 'class_text', 'attributes')$$, '{}'),
('training_preprocessor_dl', 'column name with SQL in it (injection)',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'pp_out', 'class_text', 'attributes FROM bad.iris_train; DROP TABLE bad.iris_train; --')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'dependent variable of type date',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_types', 'pp_out', 'day', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'independent variable of type text[]',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_types', 'pp_out', 'class_text', 'attr_text')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'independent variable not an array',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_types', 'pp_out', 'class_text', 'n')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'NULL feature array',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_null_x', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'NULL feature element',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_null_elem', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'NaN feature',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_nan_x', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', '-Infinity feature',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_inf_x', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'rows of different lengths',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_ragged', 'pp_out', 'class_text', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'NaN in a one-hot label',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_onehot_nan', 'pp_out', 'y', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'NULL one-hot label',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_onehot_null', 'pp_out', 'y', 'attributes')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'buffer_size = 0',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'pp_out', 'class_text', 'attributes', 0)$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'normalizing_const Infinity',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'pp_out', 'class_text', 'attributes', NULL, 'Infinity')$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'num_classes below the class count',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'pp_out', 'class_text', 'attributes', NULL, 1.0, 2)$$, '{pp_out,pp_out_summary}'),
('training_preprocessor_dl', 'bad distribution_rules',
 $$SELECT madlib_dl.training_preprocessor_dl('iris_train', 'pp_out', 'class_text', 'attributes', NULL, 1.0, NULL, 'gpu_segments')$$, '{pp_out,pp_out_summary}'),
-- validation_preprocessor_dl
('validation_preprocessor_dl', 'training table is not preprocessed',
 $$SELECT madlib_dl.validation_preprocessor_dl('iris_test', 'vp_out', 'class_text', 'attributes', 'iris_train')$$, '{vp_out,vp_out_summary}'),
('validation_preprocessor_dl', 'class the training data did not have',
 $$SELECT madlib_dl.validation_preprocessor_dl('iris_types', 'vp_out', 'day', 'attributes', 'iris_packed')$$, '{vp_out,vp_out_summary}'),
('validation_preprocessor_dl', 'features of another shape',
 $$SELECT madlib_dl.validation_preprocessor_dl('iris_test_short', 'vp_out', 'class_text', 'attributes', 'iris_packed')$$, '{vp_out,vp_out_summary}'),
('validation_preprocessor_dl', 'Infinity feature',
 $$SELECT madlib_dl.validation_preprocessor_dl('iris_test_nan', 'vp_out', 'class_text', 'attributes', 'iris_packed')$$, '{vp_out,vp_out_summary}'),
-- fit
('fit', 'missing source table',
 $$SELECT madlib_dl.fit('no_such_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'source not preprocessed (no summary)',
 $$SELECT madlib_dl.fit('iris_train', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'empty packed table',
 $$SELECT madlib_dl.fit('packed_empty', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'damaged packed buffers',
 $$SELECT madlib_dl.fit('packed_damaged', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'model table exists',
 $$SELECT madlib_dl.fit('iris_packed', 'iris_model', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{}'),
('fit', 'model name with a quote and a semicolon (injection)',
 $$SELECT madlib_dl.fit('iris_packed', 'm''; DROP TABLE bad.iris_train; --', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{m}'),
('fit', 'model name with an unterminated double quote',
 $$SELECT madlib_dl.fit('iris_packed', '"fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out}'),
('fit', 'model in a schema that does not exist',
 $$SELECT madlib_dl.fit('iris_packed', 'no_such_schema.fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{}'),
('fit', 'model_id not in the architecture table',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 42, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'architecture table of another layout',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'not_an_arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'input shape of the data differs from the model',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 2, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'class count differs from the model outputs',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 3, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'num_iterations = 0',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 0)$$, '{fit_out,fit_out_summary}'),
('fit', 'NULL num_iterations',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, NULL)$$, '{fit_out,fit_out_summary}'),
('fit', 'batch_size = 0',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', 'batch_size=0', 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'negative learning rate',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD(lr=-0.1)''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'metrics_compute_frequency = 0',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 3, FALSE, NULL, 0)$$, '{fit_out,fit_out_summary}'),
('fit', 'metrics_compute_frequency above num_iterations',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 3, FALSE, NULL, 4)$$, '{fit_out,fit_out_summary}'),
('fit', 'unknown loss',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''hinge_squared_cubed'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'compile_params with SQL in it',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse''); DROP TABLE bad.iris_train; --', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'malformed fit_params',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', 'batch_size=, epochs=2', 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'unsupported fit parameter',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', 'validation_split=0.2', 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'use_gpus',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1, TRUE)$$, '{fit_out,fit_out_summary}'),
('fit', 'validation table not preprocessed',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1, FALSE, 'iris_test')$$, '{fit_out,fit_out_summary}'),
('fit', 'architecture weights of the wrong size (transfer learning)',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch_badw', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'warm start from truncated weights',
 $$SELECT madlib_dl.fit('iris_packed', 'model_trunc', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1, FALSE, NULL, NULL, TRUE)$$, '{}'),
('fit', 'warm start from NaN weights',
 $$SELECT madlib_dl.fit('iris_packed', 'model_nan', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1, FALSE, NULL, NULL, TRUE)$$, '{}'),
('fit', 'warm start from a model with two rows',
 $$SELECT madlib_dl.fit('iris_packed', 'model_tworows', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1, FALSE, NULL, NULL, TRUE)$$, '{}'),
('fit', 'warm start without a model table',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 1, FALSE, NULL, NULL, TRUE)$$, '{fit_out,fit_out_summary}'),
-- evaluate
('evaluate', 'missing model table',
 $$SELECT madlib_dl.evaluate('no_such_model', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'model without its summary',
 $$SELECT madlib_dl.evaluate('model_nosummary', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'test table not preprocessed',
 $$SELECT madlib_dl.evaluate('iris_model', 'iris_test', 'ev_out')$$, '{ev_out}'),
('evaluate', 'output table exists',
 $$SELECT madlib_dl.evaluate('iris_model', 'iris_test_packed', 'iris_train')$$, '{}'),
('evaluate', 'output in a schema that does not exist',
 $$SELECT madlib_dl.evaluate('iris_model', 'iris_test_packed', 'no_such_schema.ev_out')$$, '{}'),
('evaluate', 'truncated model weights',
 $$SELECT madlib_dl.evaluate('model_trunc', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'NaN model weights',
 $$SELECT madlib_dl.evaluate('model_nan', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'damaged model architecture',
 $$SELECT madlib_dl.evaluate('model_badarch', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'model table with two rows',
 $$SELECT madlib_dl.evaluate('model_tworows', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'mst_key given for a single-model table',
 $$SELECT madlib_dl.evaluate('iris_model', 'iris_test_packed', 'ev_out', FALSE, 1)$$, '{ev_out}'),
('evaluate', 'damaged test buffers',
 $$SELECT madlib_dl.evaluate('iris_model', 'packed_damaged', 'ev_out')$$, '{ev_out}'),
-- predict
('predict', 'truncated model weights',
 $$SELECT madlib_dl.predict('model_trunc', 'iris_test', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'output in a schema that does not exist',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'no_such_schema.pr_out')$$, '{}'),
('predict', 'NaN model weights',
 $$SELECT madlib_dl.predict('model_nan', 'iris_test', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'missing test table',
 $$SELECT madlib_dl.predict('iris_model', 'no_such_test', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'output table exists',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_test')$$, '{}'),
('predict', 'id_col with SQL in it (injection)',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id FROM bad.iris_test; DROP TABLE bad.iris_train; --', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'independent variable of type text[]',
 $$SELECT madlib_dl.predict('iris_model', 'iris_types', 'id', 'attr_text', 'pr_out')$$, '{pr_out}'),
('predict', 'Infinity feature',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test_nan', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'row with too few features',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test_short', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'NULL feature array',
 $$SELECT madlib_dl.predict('iris_model', 'iris_null_x', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'pred_type 0',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'pr_out', 0)$$, '{pr_out}'),
('predict', 'pred_type threshold 1.5',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'pr_out', 1.5::float8)$$, '{pr_out}'),
('predict', 'unknown pred_type',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'pr_out', 'probability')$$, '{pr_out}'),
('predict', 'mst_key given for a single-model table',
 $$SELECT madlib_dl.predict('iris_model', 'iris_test', 'id', 'attributes', 'pr_out', 'prob', FALSE, 3)$$, '{pr_out}'),
-- predict_byom
('predict_byom', 'architecture without weights',
 $$SELECT madlib_dl.predict_byom('arch', 1, 'iris_test', 'id', 'attributes', 'pb_out')$$, '{pb_out}'),
('predict_byom', 'architecture weights of the wrong size',
 $$SELECT madlib_dl.predict_byom('arch_badw', 1, 'iris_test', 'id', 'attributes', 'pb_out')$$, '{pb_out}'),
('predict_byom', 'model_id not in the table',
 $$SELECT madlib_dl.predict_byom('arch', 77, 'iris_test', 'id', 'attributes', 'pb_out')$$, '{pb_out}'),
('predict_byom', 'class_values of the wrong length',
 $$SELECT madlib_dl.predict_byom('arch', 4, 'iris_test', 'id', 'attributes', 'pb_out', 'response', FALSE, ARRAY['a','b'])$$, '{pb_out}'),
('predict_byom', 'normalizing_const = 0',
 $$SELECT madlib_dl.predict_byom('arch', 4, 'iris_test', 'id', 'attributes', 'pb_out', 'prob', FALSE, NULL, 0)$$, '{pb_out}'),
('predict_byom', 'dependent_count = 2',
 $$SELECT madlib_dl.predict_byom('arch', 4, 'iris_test', 'id', 'attributes', 'pb_out', 'prob', FALSE, NULL, NULL, 2)$$, '{pb_out}'),
-- load_model_selection_table / generate_model_configs
('load_model_selection_table', 'model_id not in the architecture table',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'ms_out', ARRAY[1, 9], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY['batch_size=8'])$$, '{ms_out,ms_out_summary}'),
('load_model_selection_table', 'empty compile_params_list',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'ms_out', ARRAY[1], ARRAY[]::varchar[], ARRAY['batch_size=8'])$$, '{ms_out,ms_out_summary}'),
('load_model_selection_table', 'NULL in fit_params_list',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'ms_out', ARRAY[1], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY[NULL]::varchar[])$$, '{ms_out,ms_out_summary}'),
('load_model_selection_table', 'unknown optimizer',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'ms_out', ARRAY[1], ARRAY['loss=''mse'', optimizer=''Foo(lr=0.1)'''], ARRAY['batch_size=8'])$$, '{ms_out,ms_out_summary}'),
('load_model_selection_table', 'batch_size = 0',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'ms_out', ARRAY[1], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY['batch_size=0'])$$, '{ms_out,ms_out_summary}'),
('load_model_selection_table', 'output in a schema that does not exist',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'no_such_schema.ms_out', ARRAY[1], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY['batch_size=8'])$$, '{}'),
('load_model_selection_table', 'missing architecture table',
 $$SELECT madlib_dl.load_model_selection_table('no_such_arch', 'ms_out', ARRAY[1], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY['batch_size=8'])$$, '{ms_out,ms_out_summary}'),
('load_model_selection_table', 'output name with a semicolon (injection)',
 $$SELECT madlib_dl.load_model_selection_table('arch', 'ms; DROP TABLE bad.iris_train', ARRAY[1], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY['batch_size=8'])$$, '{ms}'),
('load_model_selection_table', 'appending to a table of another architecture table',
 $$SELECT madlib_dl.load_model_selection_table('arch_badw', 'mst', ARRAY[1], ARRAY['loss=''mse'', optimizer=''SGD'''], ARRAY['batch_size=8'])$$, '{}'),
-- fit_multiple
('fit_multiple', 'missing model selection table',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'no_such_mst', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'model selection table without its summary',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst_nosummary', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'empty model selection table',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst_empty', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'repeated mst_key',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst_dup', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'model_id of a configuration not in the architecture table',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst_bad_id', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'negative learning rate in a configuration',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst_bad_params', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'the model selection table is a data table',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'iris_train', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'num_iterations = 0',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst', 0)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'metrics_compute_frequency above num_iterations',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst', 2, FALSE, NULL, 5)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'output table exists',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'multi', 'mst', 1)$$, '{}'),
('fit_multiple', 'output name with a semicolon (injection)',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm; DROP TABLE bad.mst', 'mst', 1)$$, '{fm}'),
('fit_multiple', 'source not preprocessed',
 $$SELECT madlib_dl.fit_multiple('iris_train', 'fm_out', 'mst', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'validation table not preprocessed',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst', 1, FALSE, 'iris_test')$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'use_gpus',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst', 1, TRUE)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'warm start without an output table',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst', 1, FALSE, NULL, NULL, TRUE)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('fit_multiple', 'warm start from truncated weights',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'multi_trunc', 'mst', 1, FALSE, NULL, NULL, TRUE)$$, '{}'),
-- mst_key with multi-model tables
('evaluate', 'multi-model table without mst_key',
 $$SELECT madlib_dl.evaluate('multi', 'iris_test_packed', 'ev_out')$$, '{ev_out}'),
('evaluate', 'mst_key not in the multi-model table',
 $$SELECT madlib_dl.evaluate('multi', 'iris_test_packed', 'ev_out', FALSE, 99)$$, '{ev_out}'),
('predict', 'multi-model table without mst_key',
 $$SELECT madlib_dl.predict('multi', 'iris_test', 'id', 'attributes', 'pr_out')$$, '{pr_out}'),
('predict', 'negative mst_key',
 $$SELECT madlib_dl.predict('multi', 'iris_test', 'id', 'attributes', 'pr_out', 'prob', FALSE, -1)$$, '{pr_out}'),
('predict', 'truncated weights in a multi-model table',
 $$SELECT madlib_dl.predict('multi_trunc', 'iris_test', 'id', 'attributes', 'pr_out', 'prob', FALSE, 1)$$, '{pr_out}'),
('generate_model_configs', 'unknown search_type',
 $$SELECT madlib_dl.generate_model_configs('arch', 'ms_out', ARRAY[1], '{''loss'': [''mse''], ''optimizer_params_list'': [{''optimizer'': [''SGD'']}]}', '{''batch_size'': [8]}', 'bayes')$$, '{ms_out,ms_out_summary}'),
('generate_model_configs', 'malformed grid',
 $$SELECT madlib_dl.generate_model_configs('arch', 'ms_out', ARRAY[1], '{''loss'': [''mse''], ''optimizer_params_list'': [{''optimizer'': [''SGD'']}]}', '{''batch_size'': [8}')$$, '{ms_out,ms_out_summary}'),
('generate_model_configs', 'grid value not a list',
 $$SELECT madlib_dl.generate_model_configs('arch', 'ms_out', ARRAY[1], '{''loss'': [''mse''], ''optimizer_params_list'': [{''optimizer'': [''SGD'']}]}', '{''batch_size'': 64}')$$, '{ms_out,ms_out_summary}'),
('generate_model_configs', 'num_configs with grid search',
 $$SELECT madlib_dl.generate_model_configs('arch', 'ms_out', ARRAY[1], '{''loss'': [''mse''], ''optimizer_params_list'': [{''optimizer'': [''SGD'']}]}', '{''batch_size'': [8]}', 'grid', 10)$$, '{ms_out,ms_out_summary}'),
('generate_model_configs', 'random search with num_configs = 0',
 $$SELECT madlib_dl.generate_model_configs('arch', 'ms_out', ARRAY[1], '{''loss'': [''mse''], ''optimizer_params_list'': [{''optimizer'': [''SGD''], ''lr'': [0.001, 0.1, ''log'']}]}', '{''batch_size'': [8]}', 'random', 0)$$, '{ms_out,ms_out_summary}'),
('generate_model_configs', 'negative learning rate in the grid',
 $$SELECT madlib_dl.generate_model_configs('arch', 'ms_out', ARRAY[1], '{''loss'': [''mse''], ''optimizer_params_list'': [{''optimizer'': [''SGD''], ''lr'': [-0.5]}]}', '{''batch_size'': [8]}')$$, '{ms_out,ms_out_summary}'),
-- memory: refused from the architecture, before anything is allocated
('load_keras_model', 'Dense(units=2147483647): 10.7 billion parameters',
 format($$SELECT madlib_dl.load_keras_model('arch_new', %L)$$, :'arch_dense_huge'), '{arch_new}'),
('load_keras_model', '300 million parameters: weights over 1 GB',
 format($$SELECT madlib_dl.load_keras_model('arch_new', %L)$$, replace(:'arch_dense_huge', '2147483647', '60000000')), '{arch_new}'),
('fit', 'num_iterations 100000000 with metrics every iteration',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, 'loss=''mse'', optimizer=''SGD''', NULL, 100000000, metrics_compute_frequency => 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'a 64x64 kernel on a [256, 256, 16] input',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch_big', 1, 'loss=''mse'', optimizer=''SGD''', 'batch_size=1', 1)$$, '{fit_out,fit_out_summary}'),
('fit', 'Dense(units=2147483647) slipped past load_keras_model',
 $$SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch_big', 2, 'loss=''mse'', optimizer=''SGD''', NULL, 1)$$, '{fit_out,fit_out_summary}'),
-- internal functions called directly: clean errors, never XX000
('_pack_onehot_int16', 'a class index outside the classes',
 $$SELECT madlib_dl._pack_onehot_int16(-1, 3, 0, 1)$$, '{}'),
('_pack_onehot_int16', 'a slot outside the buffer',
 $$SELECT madlib_dl._pack_onehot_int16(0, 3, 2147483647, 1)$$, '{}'),
('_predict', 'an unknown prediction kind',
 $$SELECT madlib_dl._predict('{bad,iris_model}', '{bad,iris_test}', 'id', 'attributes', '{bad,pr_out}', 'bogus', 1, 0, false, NULL)$$, '{pr_out}'),
('fit_multiple', 'more configurations than one job takes',
 $$SELECT madlib_dl.fit_multiple('iris_packed', 'fm_out', 'mst_big', 1)$$, '{fm_out,fm_out_info,fm_out_summary}'),
('_job_limit', 'an unknown limit',
 $$SELECT madlib_dl._job_limit('workers')$$, '{}'),
('_job_limit', 'NULL',
 $$SELECT madlib_dl._job_limit(NULL)$$, '{}'),
('_fit_num_segments', 'a regclass that is not the named table',
 $$SELECT madlib_dl._fit_num_segments('{bad,iris_packed}', 'bad.iris_test'::regclass, '{}')$$, '{}'),
('_assert_same_table', 'NULL',
 $$SELECT madlib_dl._assert_same_table(NULL, NULL, 'source_table')$$, '{}');

-- Run them all, in order, each as a top-level statement: the ERROR line
-- a user sees (VERBOSITY terse: the message).
\set ECHO errors
SELECT stmt FROM bi_case ORDER BY id \gexec
\set ECHO all

-- And again in an exception handler, to record SQLSTATE and hint.
DO $$
DECLARE c record;
BEGIN
    FOR c IN SELECT * FROM bi_case ORDER BY id LOOP
        INSERT INTO bi_result SELECT c.id, r.* FROM bi_try(c.stmt) r;
    END LOOP;
END
$$;

-- One line per case: SQLSTATE | message | hint.
\pset format unaligned
\pset fieldsep ' | '
SELECT c.id, c.fn, c.what, r.state, r.message, coalesce(r.hint, '(no hint)') AS hint
  FROM bi_case c JOIN bi_result r USING (id) ORDER BY c.id;
\pset format aligned

-- ---------------------------------------------------------------------
-- The checks
-- ---------------------------------------------------------------------
-- how many cases, and the functions they cover
SELECT count(*) AS n_cases, count(DISTINCT fn) AS n_functions FROM bi_case;
-- cases that did not fail, failed with an internal error (XX000) or a
-- generic one, or have no hint: none.  (Malformed JSON text fails in
-- PostgreSQL's json input, before any function of ours runs: 22P02 has
-- no hint there.)
SELECT c.id, c.fn, c.what, r.state, r.hint IS NULL AS no_hint
  FROM bi_case c JOIN bi_result r USING (id)
 WHERE r.state IN ('ok', 'XX000', 'XX001', 'P0001') OR (r.hint IS NULL AND r.state <> '22P02')
 ORDER BY c.id;
-- no output table of any case exists
SELECT c.id, o AS left_behind
  FROM bi_case c, unnest(c.outputs) o
 WHERE to_regclass('bad.' || quote_ident(o)) IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM bi_rels_before b WHERE b.relname = o);
-- no relation at all was created in the schema (besides bi_result rows)
SELECT c.relname AS new_relation FROM pg_class c
 WHERE c.relnamespace = 'bad'::regnamespace
   AND c.oid NOT IN (SELECT oid FROM bi_rels_before) AND c.relname NOT LIKE 'bi\_%';
-- every input table has the same contents as before
SELECT coalesce(b.relname, a.relname) AS relname, b.n AS rows_before, a.n AS rows_after
  FROM bi_before b FULL JOIN bi_table_md5s() a USING (relname)
 WHERE b.md5 IS DISTINCT FROM a.md5;
SELECT count(*) AS tables_compared FROM bi_before;

-- ---------------------------------------------------------------------
-- Top level: the ERROR lines as a user sees them
-- ---------------------------------------------------------------------
SELECT madlib_dl.training_preprocessor_dl('iris_train', 'x; DROP TABLE bad.iris_train', 'class_text', 'attributes');
SELECT madlib_dl.fit('iris_packed', 'fit_out', 'arch', 1, :'compile', 'batch_size=0', 1);
SELECT madlib_dl.predict('model_trunc', 'iris_test', 'id', 'attributes', 'pr_out');
SELECT madlib_dl.load_keras_model('arch', '{"class_name": "Sequential", "config": {');

-- A quoted name with a quote, a semicolon and a dot in it is a legal
-- table name: it is used as that name, never as SQL.
SELECT madlib_dl.training_preprocessor_dl('iris_train', '"we""ird; DROP TABLE bad.iris_train; --.x"',
    'class_text', 'attributes', NULL, 1.0, NULL, '1');
SELECT relname FROM pg_class WHERE relnamespace = 'bad'::regnamespace AND relname LIKE 'we"ird%' ORDER BY 1;
SELECT count(*) AS iris_train_rows FROM iris_train;
SET client_min_messages = warning;
SELECT madlib_dl.fit('"we""ird; DROP TABLE bad.iris_train; --.x"', 'bad."m;o""del"', 'arch', 1,
    :'compile', 'batch_size=16', 1);
RESET client_min_messages;
SELECT count(*) AS n_rows FROM bad."m;o""del";
SELECT madlib_dl.predict('"m;o""del"', 'iris_test', 'id', 'attributes', '"p''red"');
SELECT count(*) AS n_predictions FROM bad."p'red";

-- The server still serves, and nothing was damaged.
SELECT 1 AS alive;
SELECT coalesce(b.relname, a.relname) AS relname
  FROM bi_before b FULL JOIN bi_table_md5s() a USING (relname)
 WHERE b.md5 IS DISTINCT FROM a.md5 AND a.relname NOT LIKE 'we"ird%' AND a.relname NOT IN ('m;o"del', 'm;o"del_summary', 'p''red');

SET client_min_messages = warning;
DROP SCHEMA bad CASCADE;
RESET client_min_messages;
