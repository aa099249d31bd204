-- gpu_configuration: one (hostname, gpu_descr) row per NVIDIA GPU that the
-- driver lists in /proc/driver/nvidia/gpus, without CUDA.  This host's
-- list is compared with the directory itself (zero rows without GPUs);
-- the parsing and both description formats are checked on given texts of
-- the driver's information files through the internal
-- _gpu_configuration(output_table, source, information).
\set VERBOSITY terse
-- this host: as many rows as the driver lists GPUs it does not exclude
SET client_min_messages = warning;
SELECT madlib_dl.gpu_configuration('gpu_conf');
SELECT madlib_dl.gpu_configuration('gpu_conf_nv', 'NVIDIA');
RESET client_min_messages;
SELECT attname, format_type(atttypid, atttypmod)
  FROM pg_attribute WHERE attrelid = 'gpu_conf'::regclass AND attnum > 0 ORDER BY attnum;
SELECT (SELECT count(*) FROM gpu_conf) = n AND (SELECT count(*) FROM gpu_conf_nv) = n AS one_row_per_gpu
  FROM (SELECT count(*) AS n FROM pg_ls_dir('/proc/driver/nvidia/gpus', true, false) AS g
         WHERE pg_read_file('/proc/driver/nvidia/gpus/' || g || '/information')
               !~ '\n(GPU Excluded|Blacklisted):\s*Yes') d;
SELECT count(*) AS rows_without_hostname FROM gpu_conf WHERE coalesce(hostname, '') = '';
SELECT count(*) AS bad_tensorflow_rows FROM gpu_conf
 WHERE gpu_descr !~ '^device: [0-9]+, name: .+, pci bus id: [0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$';
SELECT count(*) AS bad_nvidia_rows FROM gpu_conf_nv
 WHERE gpu_descr !~ '^GPU [0-9]+: .+ \(UUID: GPU-[0-9a-f-]+\)$';
-- bad arguments
SELECT madlib_dl.gpu_configuration('gpu_conf');
SELECT madlib_dl.gpu_configuration('gpu_conf2', 'foo');
SELECT to_regclass('gpu_conf2') IS NULL AS no_table_left;
-- a NULL source is MADlib's default, 'tensorflow'
SET client_min_messages = warning;
SELECT madlib_dl.gpu_configuration('gpu_conf2', NULL);
RESET client_min_messages;
SELECT count(*) = (SELECT count(*) FROM gpu_conf) AS same_rows FROM gpu_conf2;
DROP TABLE gpu_conf, gpu_conf_nv, gpu_conf2;
-- given information texts: two GPUs out of bus order and one the driver
-- excludes (as a 550 driver writes them: key, colon, tabs and spaces)
CREATE TEMP TABLE gpu_info AS SELECT ARRAY[
E'Model: \t\t NVIDIA H200\nIRQ:   \t\t 345\nGPU UUID: \t GPU-5e0d3b4a-1c2f-4e8b-9a7d-0f1e2d3c4b5a\nVideo BIOS: \t 96.00.99.00.01\nBus Type: \t PCIe\nDMA Size: \t 52 bits\nDMA Mask: \t 0xfffffffffffff\nBus Location: \t 0000:9a:00.0\nDevice Minor: \t 1\nGPU Excluded:\t No\n',
E'Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   \t\t 120\nGPU UUID: \t GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\nBus Location: \t 0000:1b:00.0\nDevice Minor: \t 0\nGPU Excluded:\t No\n',
E'Model: \t\t Tesla K80\nGPU UUID: \t GPU-ffffffff-0000-1111-2222-333333333333\nBus Location: \t 0000:05:00.0\nBlacklisted:\t Yes\n'
] AS info;
SELECT madlib_dl._gpu_configuration('{public,gpu_tf}', 'tensorflow', info) FROM gpu_info;
SELECT gpu_descr FROM gpu_tf ORDER BY gpu_descr;
SELECT madlib_dl._gpu_configuration('{public,gpu_nv}', 'Nvidia', info) FROM gpu_info;
SELECT gpu_descr FROM gpu_nv ORDER BY gpu_descr;
SELECT count(DISTINCT hostname) = 1 AS one_host FROM gpu_nv;
-- CRLF line ends and a last line without one
SELECT madlib_dl._gpu_configuration('{public,gpu_crlf}', 'nvidia',
  ARRAY[E'Model:\tQuadro RTX 8000\r\nGPU UUID:\tGPU-12345678-aaaa-bbbb-cccc-1234567890ab\r\nBus Location:\t0000:3b:00.0']);
SELECT gpu_descr FROM gpu_crlf;
-- no GPUs: zero rows and a NOTICE
SELECT madlib_dl._gpu_configuration('{public,gpu_none}', 'tensorflow', '{}');
SELECT count(*) AS gpus FROM gpu_none;
-- texts that are not the driver's: clear errors, no table left
SELECT madlib_dl._gpu_configuration('{public,gpu_bad}', 'nvidia', ARRAY[E'Model: \t X\nGPU UUID: \t GPU-1\n']);
SELECT madlib_dl._gpu_configuration('{public,gpu_bad}', 'nvidia', ARRAY[E'Model:\nGPU UUID: GPU-1\nBus Location: 0000:01:00.0\n']);
SELECT madlib_dl._gpu_configuration('{public,gpu_bad}', 'nvidia', ARRAY[E'XModel: A\nGPU UUID: GPU-1\nBus Location: 0000:01:00.0\n']);
SELECT madlib_dl._gpu_configuration('{public,gpu_bad}', 'nvidia', ARRAY[NULL]::text[]);
SELECT to_regclass('gpu_bad') IS NULL AS no_table_left;
SELECT * FROM madlib_dl._gpu_list('cuda', NULL);
SELECT * FROM madlib_dl._gpu_list(NULL, NULL);
DROP TABLE gpu_tf, gpu_nv, gpu_crlf, gpu_none, gpu_info;
-- help
SELECT split_part(madlib_dl.gpu_configuration(), E'\n', 1) AS help;
