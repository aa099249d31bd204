-- gpu_configuration on a CPU build: an empty (hostname, gpu_descr) table
-- and a NOTICE saying why; bad arguments give clear errors.
\set VERBOSITY terse
SELECT madlib_dl.gpu_configuration('gpu_conf');
SELECT attname, format_type(atttypid, atttypmod)
  FROM pg_attribute WHERE attrelid = 'gpu_conf'::regclass AND attnum > 0 ORDER BY attnum;
SELECT count(*) AS gpus FROM gpu_conf;
SELECT madlib_dl.gpu_configuration('gpu_conf');
SELECT madlib_dl.gpu_configuration('gpu_conf2', 'foo');
SELECT madlib_dl.gpu_configuration('gpu_conf3', 'nvidia');
SELECT count(*) AS gpus FROM gpu_conf3;
DROP TABLE gpu_conf, gpu_conf3;
SELECT madlib_dl._gpu_status();
