#!/usr/bin/env bash
# epochs_tradeoff.sh: the epochs x num_iterations table of docs/design.md.
#
#   docs/examples/epochs_tradeoff.sh [ROWS [PASSES]]
#
# Against the server the PG* variables name (after scripts/demo.sh:
# eval "$(scripts/pg_local.sh env)"), with madlib_dl installed.  Loads the
# first ROWS Fashion-MNIST training images (default 20000) and the 10,000
# test images into tradeoff_train / tradeoff_test, then trains the MLP
# 784-256-128-10 (Adam lr 0.001, batch 128, seed 42) for PASSES passes
# over the data in all (default 8), split as epochs x num_iterations =
# 1 x PASSES, 2 x PASSES/2, ..., PASSES x 1, once with fit (model
# averaging after every iteration) and once with fit_multiple (one
# configuration hopping over the segments), on the default segments (one
# per core).  Prints one Markdown table row per run: validation (test)
# accuracy and loss after the last iteration, and the seconds fit or
# fit_multiple took.  SEGMENTS=N preprocesses into N segments instead
# (distribution_rules); FUNCTIONS="fit" or "fit_multiple" runs only one.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROWS="${1:-20000}"
PASSES="${2:-8}"
psqlc() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }

FASHION_TRAIN_TABLE=tradeoff_train FASHION_TEST_TABLE=tradeoff_test \
  scripts/load_fashion_mnist.sh --replace "dbname=$(psqlc -Atc 'SELECT current_database()')" "$ROWS" >/dev/null 2>&1
psqlc -v segments="${SEGMENTS:-}" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS tradeoff_packed, tradeoff_packed_summary, tradeoff_val, tradeoff_val_summary,
    tradeoff_arch;
SELECT madlib_dl.training_preprocessor_dl('tradeoff_train', 'tradeoff_packed', 'y', 'x', NULL, 255.0,
                                          distribution_rules => nullif(:'segments', ''));
SELECT madlib_dl.validation_preprocessor_dl('tradeoff_test', 'tradeoff_val', 'y', 'x', 'tradeoff_packed');
SELECT madlib_dl.load_keras_model('tradeoff_arch',
 '{"class_name": "Sequential", "config": {"name": "mlp", "layers": [
   {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 784]}},
   {"class_name": "Dense", "config": {"name": "dense", "units": 256, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "dense_1", "units": 128, "activation": "relu"}},
   {"class_name": "Dense", "config": {"name": "out", "units": 10, "activation": "softmax"}}]}}');
SQL
nseg=$(psqlc -Atc "SELECT num_segments FROM tradeoff_packed_summary")
echo "| function | segments | epochs | num_iterations | passes | validation accuracy | validation loss | seconds |"
echo "|---|---|---|---|---|---|---|---|"
for fn in ${FUNCTIONS:-fit fit_multiple}; do
  epochs=1
  while [ "$epochs" -le "$PASSES" ]; do
    if [ $(( PASSES % epochs )) -eq 0 ]; then
      iters=$(( PASSES / epochs ))
      compile="loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']"
      fitp="batch_size=128, epochs=$epochs, seed=42"
      if [ "$fn" = fit ]; then
        psqlc -v compile="$compile" -v fitp="$fitp" -v iters="$iters" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS tradeoff_model, tradeoff_model_summary;
SELECT madlib_dl.fit('tradeoff_packed', 'tradeoff_model', 'tradeoff_arch', 1, :'compile', :'fitp',
                     :iters, validation_table => 'tradeoff_val');
SQL
        row=$(psqlc -Atc "SELECT round(validation_metrics_final::numeric, 4), round(validation_loss_final::numeric, 4),
                                 round(extract(epoch FROM end_training_time - start_training_time)::numeric, 1)
                          FROM tradeoff_model_summary" | tr '|' ' ')
      else
        psqlc -v compile="$compile" -v fitp="$fitp" -v iters="$iters" >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS tradeoff_mst, tradeoff_mst_summary, tradeoff_models, tradeoff_models_info,
    tradeoff_models_summary;
SELECT madlib_dl.load_model_selection_table('tradeoff_arch', 'tradeoff_mst', ARRAY[1],
                                            ARRAY[:'compile'], ARRAY[:'fitp']);
SELECT madlib_dl.fit_multiple('tradeoff_packed', 'tradeoff_models', 'tradeoff_mst', :iters,
                              validation_table => 'tradeoff_val');
SQL
        row=$(psqlc -Atc "SELECT round(i.validation_metrics_final::numeric, 4), round(i.validation_loss_final::numeric, 4),
                                 round(extract(epoch FROM s.end_training_time - s.start_training_time)::numeric, 1)
                          FROM tradeoff_models_info i, tradeoff_models_summary s" | tr '|' ' ')
      fi
      set -- $row
      echo "| $fn | $nseg | $epochs | $iters | $PASSES | $1 | $2 | $3 |"
    fi
    epochs=$(( epochs * 2 ))
  done
done
