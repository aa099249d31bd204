-- madlib_dl.fit_progress: the columns, and no row while nothing trains.
-- (A live run seen from another session is checked in test/t/010_progress.pl.)
SELECT attnum, attname, format_type(atttypid, atttypmod) AS type
FROM pg_attribute
WHERE attrelid = 'madlib_dl.fit_progress'::regclass AND attnum > 0
ORDER BY attnum;
SELECT count(*) AS runs_in_progress FROM madlib_dl.fit_progress;
SELECT obj_description('madlib_dl.fit_progress'::regclass, 'pg_class') LIKE '%shared_preload_libraries%' AS comment_names_preload;
SELECT has_table_privilege('public', 'madlib_dl.fit_progress', 'SELECT') AS public_can_read;
-- A label alone starts nothing.
SELECT madlib_dl._progress_label('public.some_model');
SELECT count(*) AS runs_in_progress FROM madlib_dl.fit_progress;
