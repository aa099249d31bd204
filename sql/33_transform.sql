--
-- 33_transform: column transforms saved with the model.  A raw table of
-- mixed columns (test/data/census.sql) is packed with transform => '...',
-- trained and predicted with no feature SQL; the same model fed features
-- transformed by hand in SQL gives the same buffers, weights and
-- predictions, bit for bit.  Then the refusals.
--
\set SHOW_CONTEXT never
CREATE SCHEMA tf_test;
SET search_path = tf_test, public;
\set ECHO none
\i test/data/census.sql
\set ECHO all
\set spec 'standardize(age), standardize(impute(median, log(income))), minmax(hours_per_week), onehot(city, max_categories => 10), ordinal(education), married, clip(hours_per_week, 20, 60)'
CREATE TABLE census_train AS SELECT * FROM census WHERE id % 5 <> 0 ORDER BY id;
CREATE TABLE census_test AS SELECT * FROM census WHERE id % 5 = 0 ORDER BY id;
-- a city the training rows never had: the "unknown" bucket
UPDATE census_test SET city = 'Madrid' WHERE id = 5;

-- The features by hand, from statistics computed here in SQL (means and
-- standard deviations summed in numeric, as the transform does).
CREATE TABLE hand_stats AS
SELECT avg(age::float8::numeric)::float8 AS age_mean, stddev_pop(age::float8::numeric)::float8 AS age_std,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ln(income::float8)) AS inc_median,
       min(hours_per_week) AS h_min, max(hours_per_week) AS h_max
  FROM census_train;
CREATE TABLE hand_stats2 AS
SELECT avg(coalesce(ln(c.income::float8), s.inc_median)::numeric)::float8 AS inc_mean,
       stddev_pop(coalesce(ln(c.income::float8), s.inc_median)::numeric)::float8 AS inc_std
  FROM census_train c, hand_stats s;
CREATE FUNCTION hand_features(age integer, income numeric, hours_per_week float8, city text,
                              education varchar, married boolean)
RETURNS real[] LANGUAGE sql STABLE AS $$
    SELECT (ARRAY[(age - s.age_mean) / s.age_std,
                  (coalesce(ln(income::float8), s.inc_median) - s2.inc_mean) / s2.inc_std,
                  (hours_per_week - s.h_min) / (s.h_max - s.h_min)]
            || ARRAY(SELECT (city = v)::integer::float8
                       FROM unnest(ARRAY['Berlin', 'Lisbon', 'Oslo', 'Paris', 'Rome', 'Vienna']) v)
            || ARRAY[(city NOT IN ('Berlin', 'Lisbon', 'Oslo', 'Paris', 'Rome', 'Vienna'))::integer::float8,
                     coalesce(array_position(ARRAY['bachelor', 'master', 'primary', 'secondary'],
                                             education::text) - 1, -1),
                     married::integer,
                     least(greatest(hours_per_week, 20), 60)])::real[]
      FROM hand_stats s, hand_stats2 s2
$$;
-- one table with both: the raw columns and x, so that both packings
-- see the same rows in the same places (the shuffle follows ctid)
CREATE TABLE census_both AS SELECT c.*, hand_features(c.age, c.income, c.hours_per_week, c.city, c.education, c.married) AS x FROM census_train c ORDER BY id;
CREATE TABLE census_test_hand AS SELECT c.*, hand_features(c.age, c.income, c.hours_per_week, c.city, c.education, c.married) AS x FROM census_test c ORDER BY id;

SET client_min_messages = warning;
SELECT madlib_dl.training_preprocessor_dl('census_both', 'census_tf', 'income_class', NULL, NULL, 1.0,
    NULL, '2', transform => :'spec');
SELECT madlib_dl.training_preprocessor_dl('census_both', 'census_hand', 'income_class', 'x', NULL, 1.0,
    NULL, '2');
RESET client_min_messages;

-- the statistics, readable in the packed summary
SELECT independent_varname, e->>'column' AS col, e->>'op' AS op, e->>'impute' AS impute,
       (e->>'width')::integer AS width, e->'categories' AS categories
  FROM census_tf_summary, jsonb_array_elements(transform->'items') e;
SELECT abs((transform#>>'{items,0,mean}')::float8 - s.age_mean) = 0 AS age_mean_same,
       abs((transform#>>'{items,0,std}')::float8 - s.age_std) = 0 AS age_std_same,
       abs((transform#>>'{items,1,impute_value}')::float8 - s.inc_median) = 0 AS median_same,
       abs((transform#>>'{items,1,mean}')::float8 - s2.inc_mean) = 0 AS inc_mean_same,
       (transform#>>'{items,2,min}')::float8 = s.h_min AND (transform#>>'{items,2,max}')::float8 = s.h_max AS minmax_same
  FROM census_tf_summary, hand_stats s, hand_stats2 s2;
SELECT features_shape FROM census_tf ORDER BY buffer_id;
-- the same buffers, byte for byte
SELECT count(*) AS buffers, bool_and(a.features = b.x) AS same_features,
       bool_and(a.income_class = b.income_class) AS same_classes
  FROM census_tf a JOIN census_hand b USING (buffer_id);

-- validation reuses the training statistics (no independent_varname)
SELECT madlib_dl.validation_preprocessor_dl('census_test', 'census_test_tf', 'income_class', NULL, 'census_tf');
SELECT transform = (SELECT transform FROM census_tf_summary) AS same_plan FROM census_test_tf_summary;

\set arch '{"class_name": "Sequential", "config": {"name": "sequential", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 13], "dtype": "float32", "name": "dense_input"}}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 8, "activation": "relu", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}, "batch_input_shape": [null, 13]}}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 2, "activation": "softmax", "use_bias": true, "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": null}}, "bias_initializer": {"class_name": "Zeros", "config": {}}}}]}, "keras_version": "2.11.0", "backend": "tensorflow"}'
SELECT madlib_dl.load_keras_model('tf_arch', :'arch', NULL, 'census mlp');
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit('census_tf', 'model_tf', 'tf_arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=32, epochs=2, seed=7', 4, FALSE, 'census_test_tf');
SELECT madlib_dl.madlib_keras_fit('census_hand', 'model_hand', 'tf_arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=32, epochs=2, seed=7', 4);
RESET client_min_messages;
SELECT a.model_weights = b.model_weights AS same_weights FROM model_tf a, model_hand b;
-- the model's summary holds the plan
SELECT s.transform = p.transform AS plan_in_model, s.independent_varname
  FROM model_tf_summary s, census_tf_summary p;

-- predict from the raw table: no feature SQL
SELECT madlib_dl.predict('model_tf', 'census_test', 'id', NULL, 'pred_tf');
CREATE TABLE census_no_city_early AS SELECT id, age, income FROM census_test;
SELECT madlib_dl.predict('model_hand', 'census_test_hand', 'id', 'x', 'pred_hand');
SELECT count(*) AS rows, bool_and(a.prob = b.prob AND a.class_value = b.class_value) AS same_predictions
  FROM pred_tf a JOIN pred_hand b USING (id, class_value);
SELECT madlib_dl.predict('model_tf', 'census_test', 'id', NULL, 'pred_tf_resp', 'response');
SELECT count(*) FROM pred_tf_resp;
-- fit_multiple keeps the plan too: predict a raw table with an mst_key
SELECT madlib_dl.load_model_selection_table('tf_arch', 'tf_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=32, epochs=1, seed=7']);
SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit_multiple_model('census_tf', 'multi_tf', 'tf_mst', 2);
RESET client_min_messages;
SELECT s.transform = p.transform AS plan_in_multi_model FROM multi_tf_summary s, census_tf_summary p;
SELECT madlib_dl.predict('multi_tf', 'census_test', 'id', NULL, 'pred_multi', 'response', false, 1);
SELECT count(*) FROM pred_multi;
-- the unknown city: its one-hot is the last bucket
SELECT madlib_dl._transform_apply(transform, 'Madrid'::text) FROM (SELECT jsonb_build_object('version', 1,
    'items', jsonb_build_array(transform->'items'->3)) AS transform FROM census_tf_summary) p;
-- a fitted plan applied to a row, as predict_row does
SELECT madlib_dl._transform_apply(transform, c.age, c.income, c.hours_per_week, c.city, c.education,
                                  c.married, c.hours_per_week) = c.x AS apply_equals_hand
  FROM census_tf_summary, census_test_hand c WHERE c.id IN (5, 10, 65) ORDER BY c.id;

-- the public form for one raw row, by column names (predict_row's input)
SELECT madlib_dl.transform_features('model_tf', c) = h.x AS features_equal_hand
  FROM census_test c JOIN census_test_hand h USING (id) WHERE c.id IN (5, 10, 65) ORDER BY c.id;
SELECT count(*) FILTER (WHERE madlib_dl.transform_features('model_tf', c) = h.x) AS rows_equal, count(*)
  FROM census_test c JOIN census_test_hand h USING (id);
SELECT madlib_dl.transform_features('model_hand', c) FROM census_test c LIMIT 1;
SELECT madlib_dl.transform_features('model_tf', c) FROM census_no_city_early c LIMIT 1;
SELECT madlib_dl.transform_features('model_tf', ROW(1, 2));

-- evaluate: the packed test table
SELECT madlib_dl.madlib_keras_evaluate('model_tf', 'census_test_tf', 'eval_tf');
SELECT loss > 0 AS has_loss FROM eval_tf;
-- and a raw table, packed on the fly with the model's transform
SELECT madlib_dl.madlib_keras_evaluate('model_tf', 'census_test', 'eval_raw');
SELECT abs(r.loss - p.loss) <= 1e-6 * p.loss AS same_loss, r.metric = p.metric AS same_metric
  FROM eval_raw r, eval_tf p;
SELECT count(*) AS temp_tables_left FROM pg_class
 WHERE relname LIKE 'madlib_dl_eval%' AND relpersistence = 't';
-- a raw table for a model without a transform is not a packed table
SELECT madlib_dl.madlib_keras_evaluate('model_hand', 'census_test', 'bad_eval');

-- categories of booleans and integers, compared as their text; integers
-- sorted as numbers
SELECT madlib_dl.training_preprocessor_dl('census_train', 'oh_int', 'income_class', 'x2',
    transform => 'onehot(married), ordinal(age)');
SELECT transform#>'{items,0,categories}' AS married_categories,
       transform#>'{items,1,categories}'->>0 AS first_age, transform#>'{items,1,categories}'->>62 AS last_age
  FROM oh_int_summary;
SELECT x2_shape[2] AS width FROM oh_int LIMIT 1;
SELECT madlib_dl._transform_apply(transform, true, 17) AS married_17,
       madlib_dl._transform_apply(transform, NULL::boolean, 100) AS unknown_both
  FROM oh_int_summary;

-- =====================================================================
-- refusals
-- =====================================================================
-- an unknown column
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'standardize(agee)');
-- a transform that does not fit the type
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'standardize(city)');
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'onehot(hours_per_week)');
-- a category limit exceeded
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'onehot(city, max_categories => 3)');
-- NULLs without imputation
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'standardize(income)');
-- not a known function, not SQL
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'standardize(age); DROP TABLE census');
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', NULL,
    transform => 'lower(city)');
-- several inputs are independent_varname's list, without a transform
SELECT madlib_dl.training_preprocessor_dl('census_train', 'bad1', 'income_class', 'a, b',
    transform => 'age');
-- a raw table without a transformed model
SELECT madlib_dl.predict('model_hand', 'census_test', 'id', NULL, 'bad_pred');
-- a raw table without a column of the transform
CREATE TABLE census_no_city AS SELECT id, age, income, hours_per_week, married, education FROM census_test;
SELECT madlib_dl.predict('model_tf', 'census_no_city', 'id', NULL, 'bad_pred');
-- a column of another type than in training
CREATE TABLE census_text_age AS SELECT id, age::text AS age, income, hours_per_week, city, married, education
  FROM census_test;
SELECT madlib_dl.predict('model_tf', 'census_text_age', 'id', NULL, 'bad_pred');
-- a tampered plan is refused, not trusted
SELECT madlib_dl._transform_apply('{"version": 1, "items": [{"column": "a", "op": "onehot"}]}', 'x'::text);
SELECT madlib_dl._transform_width('{"version": 1, "items": []}');
-- a plan of a newer layout is refused, not misread
UPDATE model_tf_summary SET transform = jsonb_set(transform, '{version}', '2');
SELECT madlib_dl.predict('model_tf', 'census_test', 'id', NULL, 'bad_pred');
SELECT to_regclass('bad1') IS NULL AND to_regclass('bad1_summary') IS NULL AND to_regclass('bad_pred') IS NULL
       AND to_regclass('bad_eval') IS NULL AS nothing_left;
DROP SCHEMA tf_test CASCADE;
