-- census: a census-like table with raw columns of mixed types, made
-- deterministically (the same rows on every server): 500 people with
-- an integer age, a numeric income (NULL for one in 13), a float
-- hours_per_week, a text city, a boolean married, a varchar education,
-- and the class income_class ('>50K' or '<=50K'), which depends on them.
-- Used by docs/transforms.md, sql/33_transform.sql and
-- test/python/check_transform_stats.py.
CREATE TABLE census AS
SELECT g AS id,
       17 + (g * 7919) % 63 AS age,
       CASE WHEN g % 13 = 0 THEN NULL
            ELSE round((9000 + ((g * 104729) % 9973) * 9.7)::numeric, 2) END AS income,
       (8 + (g * 31) % 61)::double precision AS hours_per_week,
       (ARRAY['Berlin', 'Lisbon', 'Oslo', 'Paris', 'Rome', 'Vienna'])[1 + (g * 17) % 6] AS city,
       ((g * 5) % 7 < 3) AS married,
       (ARRAY['primary', 'secondary', 'bachelor', 'master'])[1 + (g * 11) % 4]::varchar(16) AS education,
       CASE WHEN (17 + (g * 7919) % 63 > 40)::integer
                 + (g % 13 <> 0 AND 9000 + ((g * 104729) % 9973) * 9.7 > 60000)::integer
                 + ((g * 5) % 7 < 3)::integer
                 + ((g * 11) % 4 >= 2)::integer >= 2
            THEN '>50K' ELSE '<=50K' END AS income_class
  FROM generate_series(1, 500) g;
