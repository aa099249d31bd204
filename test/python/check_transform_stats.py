#!/usr/bin/env python3
"""check_transform_stats.py: the statistics and features of
training_preprocessor_dl's transform against an independent computation:
numpy and scikit-learn (StandardScaler, MinMaxScaler, SimpleImputer,
OneHotEncoder, OrdinalEncoder) on the same rows.

    python3 test/python/check_transform_stats.py

It makes a scratch database on the server the PG* variables name (the
library installed there), loads test/data/census.sql, packs its training
rows with a transform, and compares:
  * each statistic of the stored plan with scikit-learn's (relative
    1e-12: both are float64 computations of the same values);
  * the categories with scikit-learn's categories_;
  * the features madlib_dl._transform_apply builds for every test row,
    including a city never seen in training and NULL incomes, with the
    output of scikit-learn's transformers (float32: 1e-6 relative).
Exit status 0 when all agree; the mismatches are printed otherwise.

IDENTIFICATION
    test/python/check_transform_stats.py
"""
import json
import os
import sys

import numpy as np
import psycopg2
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import MinMaxScaler, OneHotEncoder, OrdinalEncoder, StandardScaler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC = ("standardize(age), standardize(impute(median, log(income))), minmax(hours_per_week), "
        "onehot(city, max_categories => 10), ordinal(education), married, clip(hours_per_week, 20, 60), "
        "impute(mean, income), minmax(impute(7, log(income)))")
COLS = ["age", "income", "hours_per_week", "city", "education", "married", "hours_per_week",
        "income", "income"]

failures = []


def close(what, got, want, rtol):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or not np.all(np.abs(got - want) <= rtol * np.maximum(1.0, np.abs(want))):
        failures.append(f"{what}: madlib_dl {got.tolist()} vs sklearn {want.tolist()}")


def main():
    db = f"madlib_dl_tf_check_{os.getpid()}"
    admin = psycopg2.connect(dbname=os.environ.get("PGDATABASE", "postgres"))
    admin.autocommit = True
    admin.cursor().execute(f'CREATE DATABASE "{db}"')
    try:
        run(db)
    finally:
        admin.cursor().execute(f'DROP DATABASE "{db}"')
        admin.close()
    if failures:
        print("\n".join(failures))
        print(f"check_transform_stats: {len(failures)} mismatches")
        return 1
    print("check_transform_stats: statistics, categories and features agree with scikit-learn")
    return 0


def run(db):
    con = psycopg2.connect(dbname=db)
    con.autocommit = True
    cur = con.cursor()
    cur.execute("CREATE EXTENSION madlib_dl")
    with open(os.path.join(ROOT, "test/data/census.sql"), encoding="utf-8") as f:
        cur.execute(f.read())
    cur.execute("CREATE TABLE census_train AS SELECT * FROM census WHERE id % 5 <> 0 ORDER BY id")
    cur.execute("CREATE TABLE census_test AS SELECT * FROM census WHERE id % 5 = 0 ORDER BY id")
    cur.execute("UPDATE census_test SET city = 'Madrid' WHERE id = 5")
    cur.execute("SET client_min_messages = warning")
    cur.execute("SELECT madlib_dl.training_preprocessor_dl('census_train', 'packed', 'income_class', NULL,"
                " transform => %s)", (SPEC,))
    cur.execute("SELECT transform::text FROM packed_summary")
    items = json.loads(cur.fetchone()[0])["items"]

    def rows(table):
        cur.execute(f"SELECT age, income::float8, hours_per_week, city, education, married FROM {table} ORDER BY id")
        r = cur.fetchall()
        return {
            "age": np.array([[x[0]] for x in r], dtype=np.float64),
            "income": np.array([[np.nan if x[1] is None else x[1]] for x in r], dtype=np.float64),
            "hours": np.array([[x[2]] for x in r], dtype=np.float64),
            "city": np.array([[x[3]] for x in r], dtype=object),
            "education": np.array([[x[4]] for x in r], dtype=object),
            "married": np.array([[1.0 if x[5] else 0.0] for x in r]),
        }

    tr = rows("census_train")
    te = rows("census_test")

    # the statistics
    age = StandardScaler().fit(tr["age"])
    close("age mean", items[0]["mean"], age.mean_[0], 1e-12)
    close("age std", items[0]["std"], age.scale_[0], 1e-12)
    log_inc = np.log(tr["income"])
    imp = SimpleImputer(strategy="median").fit(log_inc)
    close("log(income) median", items[1]["impute_value"], imp.statistics_[0], 1e-12)
    inc = StandardScaler().fit(imp.transform(log_inc))
    close("log(income) mean", items[1]["mean"], inc.mean_[0], 1e-12)
    close("log(income) std", items[1]["std"], inc.scale_[0], 1e-12)
    hours = MinMaxScaler().fit(tr["hours"])
    close("hours min", items[2]["min"], hours.data_min_[0], 0)
    close("hours max", items[2]["max"], hours.data_max_[0], 0)
    city = OneHotEncoder(handle_unknown="ignore").fit(tr["city"])
    if items[3]["categories"] != list(city.categories_[0]):
        failures.append(f"city categories: {items[3]['categories']} vs {list(city.categories_[0])}")
    edu = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1).fit(tr["education"])
    if items[4]["categories"] != list(edu.categories_[0]):
        failures.append(f"education categories: {items[4]['categories']} vs {list(edu.categories_[0])}")
    imp_mean = SimpleImputer(strategy="mean").fit(tr["income"])
    close("income mean (impute)", items[7]["impute_value"], imp_mean.statistics_[0], 1e-12)
    imp7 = SimpleImputer(strategy="constant", fill_value=7.0).fit(log_inc)
    mm7 = MinMaxScaler().fit(imp7.transform(log_inc))
    close("impute(7, log(income)) min", items[8]["min"], mm7.data_min_[0], 1e-12)
    close("impute(7, log(income)) max", items[8]["max"], mm7.data_max_[0], 1e-12)

    # the features of every test row
    oh = city.transform(te["city"]).toarray()
    want = np.hstack([
        age.transform(te["age"]),
        inc.transform(imp.transform(np.log(te["income"]))),
        hours.transform(te["hours"]),
        oh, 1.0 - oh.sum(axis=1, keepdims=True),
        edu.transform(te["education"]),
        te["married"],
        np.clip(te["hours"], 20, 60),
        imp_mean.transform(te["income"]),
        mm7.transform(imp7.transform(np.log(te["income"]))),
    ])
    cur.execute("SELECT madlib_dl._transform_apply(s.transform, " +
                ", ".join(f"t.{c}" for c in COLS) +
                ") FROM packed_summary s, census_test t ORDER BY t.id")
    got = np.array([r[0] for r in cur.fetchall()], dtype=np.float64)
    if got.shape != want.shape:
        failures.append(f"features: shape {got.shape} vs {want.shape}")
    else:
        bad = np.abs(got - want) > 1e-6 * np.maximum(1.0, np.abs(want))
        for i, j in zip(*np.nonzero(bad)):
            failures.append(f"feature {j} of test row {i}: {got[i, j]} vs {want[i, j]}")
        print(f"compared {got.shape[0]} rows x {got.shape[1]} features; "
              f"max abs difference {np.max(np.abs(got - want)):.3g}")
    con.close()


if __name__ == "__main__":
    sys.exit(main())
