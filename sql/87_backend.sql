--
-- 87_backend: madlib_dl.backend, the kernels of Conv2D and Dense layers
-- (oneDNN or OpenBLAS).  A small CNN on synthetic 8x8 images: each
-- backend is deterministic run to run (byte-identical weights), and the
-- two train to nearly the same weights (they differ in the last bits of
-- float sums; this expected output is that of a build with oneDNN, as
-- CI's).
--
\set SHOW_CONTEXT never
CREATE SCHEMA backend_test;
SET search_path = backend_test, public;
SHOW madlib_dl.backend;
SET madlib_dl.backend = 'gpu';
SET madlib_dl.backend = 'openblas';
SHOW madlib_dl.backend;
RESET madlib_dl.backend;

-- 96 images 8x8x1 of three classes: a bright row, column or diagonal
CREATE TABLE images AS
SELECT i AS id, (i % 3) AS label,
       ARRAY(SELECT ARRAY(SELECT ARRAY[(CASE
                 WHEN i % 3 = 0 AND r = 2 + i % 4 THEN 1.0
                 WHEN i % 3 = 1 AND c = 2 + i % 4 THEN 1.0
                 WHEN i % 3 = 2 AND r = c THEN 1.0
                 ELSE 0.0 END + 0.1 * ((i * 31 + r * 7 + c * 13) % 5))::real]
               FROM generate_series(0, 7) c)
             FROM generate_series(0, 7) r) AS x
  FROM generate_series(1, 96) i;
SELECT madlib_dl.training_preprocessor_dl('images', 'images_packed', 'label', 'x',
    NULL, 1.0, NULL, '2');

\set cnn '{"class_name": "Sequential", "config": {"name": "s", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 1]}}, {"class_name": "Conv2D", "config": {"name": "c1", "filters": 8, "kernel_size": [3, 3], "padding": "same", "activation": "relu"}}, {"class_name": "MaxPooling2D", "config": {"name": "p1", "pool_size": [2, 2]}}, {"class_name": "Conv2D", "config": {"name": "c2", "filters": 16, "kernel_size": [3, 3], "activation": "relu"}}, {"class_name": "Flatten", "config": {"name": "f"}}, {"class_name": "Dense", "config": {"name": "d", "units": 3, "activation": "softmax"}}]}}'
SELECT madlib_dl.load_keras_model('arch', :'cnn', NULL, 'small cnn');

SET client_min_messages = warning;
SELECT madlib_dl.madlib_keras_fit('images_packed', 'm_auto_1', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2', 3);
SELECT madlib_dl.madlib_keras_fit('images_packed', 'm_auto_2', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2', 3);
SET madlib_dl.backend = 'openblas';
SELECT madlib_dl.madlib_keras_fit('images_packed', 'm_openblas_1', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2', 3);
SELECT madlib_dl.madlib_keras_fit('images_packed', 'm_openblas_2', 'arch', 1,
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
    'batch_size=16, epochs=2', 3);
RESET madlib_dl.backend;
RESET client_min_messages;

-- each backend: byte-identical weights run to run
SELECT (SELECT model_weights FROM m_auto_1) = (SELECT model_weights FROM m_auto_2) AS auto_repeats,
       (SELECT model_weights FROM m_openblas_1) = (SELECT model_weights FROM m_openblas_2) AS openblas_repeats;

-- the two backends: the same training up to float rounding
WITH a AS (SELECT w, n FROM m_auto_1, unnest(madlib_dl.weights_to_array(model_weights)) WITH ORDINALITY AS t(w, n)),
     b AS (SELECT w, n FROM m_openblas_1, unnest(madlib_dl.weights_to_array(model_weights)) WITH ORDINALITY AS t(w, n))
SELECT count(*) AS n_weights,
       sqrt(sum((a.w - b.w) ^ 2)) / sqrt(sum(b.w ^ 2)) < 1e-3 AS backends_close,
       bool_or(a.w <> b.w) AS backends_differ_in_bits
  FROM a JOIN b USING (n);
-- both learn: below the loss of a uniform guess, ln 3 = 1.0986
SELECT training_loss_final < 1.0986 AS auto_learns FROM m_auto_1_summary;
SELECT training_loss_final < 1.0986 AS openblas_learns FROM m_openblas_1_summary;

DROP SCHEMA backend_test CASCADE;
