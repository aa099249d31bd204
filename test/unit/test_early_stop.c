/*-------------------------------------------------------------------------
 *
 * test_early_stop.c
 *	  Unit tests: the early_stopping option string and Keras'
 *	  EarlyStopping rule (dl_early_stop.h).
 *
 * The rule's expected stops are worked out by hand from Keras'
 * on_epoch_end (keras/src/callbacks/early_stopping.py): a value improves
 * when monitor_op(value - delta, best), wait counts the epochs since the
 * last improvement, and training stops once wait >= patience (never at
 * the first epoch).
 *
 * IDENTIFICATION
 *	  test/unit/test_early_stop.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "unit_util.h"
#include "madlib_dl/dl_early_stop.h"

static DlEarlyStopConfig
parse_ok(const char *s)
{
	DlEarlyStopConfig p;
	DlError		err;
	DlStatus	rc;

	memset(&p, 0xab, sizeof(p));
	dl_error_clear(&err);
	rc = dl_early_stop_parse(s, &p, &err);
	if (rc != DL_OK)
		fail_msg("early_stopping \"%s\" failed: %s (%s)", s, err.msg, dl_status_name(rc));
	return p;
}

static void
parse_bad(const char *s, DlStatus code, const char *piece)
{
	DlEarlyStopConfig p;
	DlError		err;
	DlStatus	rc;

	dl_error_clear(&err);
	rc = dl_early_stop_parse(s, &p, &err);
	if (rc != code)
		fail_msg("early_stopping \"%s\": got %s, want %s (%s)", s, dl_status_name(rc),
				 dl_status_name(code), err.msg);
	if (strstr(err.msg, piece) == NULL)
		fail_msg("early_stopping \"%s\": message \"%s\" does not name \"%s\"", s, err.msg, piece);
	assert_true(err.hint[0] != '\0');
}

static void
test_parse(void **state)
{
	DlEarlyStopConfig p;
	char		buf[256];
	DlError		err;

	(void) state;
	p = parse_ok(NULL);
	assert_false(p.enabled);
	p = parse_ok("   ");
	assert_false(p.enabled);

	p = parse_ok("monitor=validation_loss, patience=3, min_delta=0.001, restore_best=true");
	assert_true(p.enabled);
	assert_true(p.validation);
	assert_true(p.monitor_loss);
	assert_int_equal(p.patience, 3);
	assert_true(p.min_delta == 0.001);
	assert_true(p.restore_best);
	assert_int_equal(p.mode, DL_EARLY_STOP_AUTO);
	assert_false(p.has_baseline);

	/* Keras' defaults: val_loss, patience 0 */
	p = parse_ok("patience=0");
	assert_true(p.validation && p.monitor_loss);

	p = parse_ok("monitor='val_accuracy', mode='max', baseline=0.5, restore_best_weights=True, "
				 "min_delta=-0.01, start_from_epoch=2, verbose=1");
	assert_true(p.validation);
	assert_false(p.monitor_loss);
	assert_string_equal(p.metric, "accuracy");
	assert_int_equal(p.mode, DL_EARLY_STOP_MAX);
	assert_true(p.has_baseline && p.baseline == 0.5);
	assert_true(p.min_delta == 0.01);	/* Keras: abs(min_delta) */
	assert_int_equal(p.start_from, 2);

	p = parse_ok("monitor=loss");
	assert_false(p.validation);
	assert_true(p.monitor_loss);
	p = parse_ok("monitor=training_top_3_accuracy, baseline=None");
	assert_false(p.validation);
	assert_string_equal(p.metric, "top_3_accuracy");
	assert_false(p.has_baseline);
	p = parse_ok("monitor=mae");
	assert_string_equal(p.metric, "mae");

	/* the canonical form parses back to the same configuration */
	p = parse_ok("monitor=val_mae, patience=2, min_delta=0.1, baseline=3, restore_best=True");
	dl_error_clear(&err);
	assert_int_equal(dl_early_stop_format(&p, buf, sizeof(buf), &err), DL_OK);
	assert_string_equal(buf, "monitor=validation_mae, patience=2, min_delta=0.1, mode=auto, "
						"baseline=3, restore_best=True, start_from_epoch=0");
	{
		DlEarlyStopConfig q = parse_ok(buf);

		assert_memory_equal(&p, &q, sizeof(p));
	}
	assert_int_equal(dl_early_stop_format(&p, buf, 10, &err), DL_ERR_LIMIT);
}

static void
test_parse_errors(void **state)
{
	char		longer[DL_EARLY_STOP_MAX_LEN + 20];

	(void) state;
	parse_bad("monitor=val_f1", DL_ERR_INVALID_ARGUMENT, "val_f1");
	parse_bad("patience=-1", DL_ERR_INVALID_ARGUMENT, "-1");
	parse_bad("patience=2.5", DL_ERR_INVALID_ARGUMENT, "2.5");
	parse_bad("min_delta=nan", DL_ERR_INVALID_ARGUMENT, "nan");
	parse_bad("mode=up", DL_ERR_INVALID_ARGUMENT, "up");
	parse_bad("restore_best=yes", DL_ERR_INVALID_ARGUMENT, "yes");
	parse_bad("baseline=x", DL_ERR_INVALID_ARGUMENT, "x");
	parse_bad("callbacks=1", DL_ERR_INVALID_ARGUMENT, "callbacks");
	parse_bad("patience", DL_ERR_PARSE, "patience");
	parse_bad("patience=1,, monitor=loss", DL_ERR_PARSE, "comma");
	parse_bad("monitor='loss", DL_ERR_PARSE, "");
	memset(longer, ' ', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	memcpy(longer, "patience=1", 10);
	parse_bad(longer, DL_ERR_LIMIT, "1024");
}

/* A metrics list: any of its metrics may be monitored; metric_index says which. */
static void
test_begin_list(void **state)
{
	static const char *const names[3] = {"accuracy", "auc", "mse"};
	DlEarlyStopConfig p;
	DlEarlyStopState st;
	DlError		err;

	(void) state;
	dl_error_clear(&err);
	p = parse_ok("monitor=validation_auc");
	assert_int_equal(dl_early_stop_begin_list(&p, names, 3, true, &st, &err), DL_OK);
	assert_int_equal(st.metric_index, 1);
	assert_true(st.greater);
	p = parse_ok("monitor=mse");
	assert_int_equal(dl_early_stop_begin_list(&p, names, 3, false, &st, &err), DL_OK);
	assert_int_equal(st.metric_index, 2);
	assert_false(st.greater);
	p = parse_ok("monitor=val_precision");
	assert_int_equal(dl_early_stop_begin_list(&p, names, 3, true, &st, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "not among the 3 metrics"));
	p = parse_ok("monitor=val_loss");
	assert_int_equal(dl_early_stop_begin_list(&p, names, 3, true, &st, &err), DL_OK);
	assert_int_equal(st.metric_index, 0);
	/* precision and recall are better higher */
	assert_true(dl_early_stop_higher_is_better("precision"));
	assert_true(dl_early_stop_higher_is_better("recall"));
}

static void
test_begin(void **state)
{
	DlEarlyStopConfig p;
	DlEarlyStopState st;
	DlError		err;

	(void) state;
	dl_error_clear(&err);
	p = parse_ok("monitor=validation_loss");
	assert_int_equal(dl_early_stop_begin(&p, NULL, false, &st, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "validation table"));
	assert_int_equal(dl_early_stop_begin(&p, NULL, true, &st, &err), DL_OK);
	assert_false(st.greater);

	p = parse_ok("monitor=accuracy");
	assert_int_equal(dl_early_stop_begin(&p, NULL, true, &st, &err), DL_ERR_INVALID_ARGUMENT);
	assert_int_equal(dl_early_stop_begin(&p, "mae", true, &st, &err), DL_ERR_INVALID_ARGUMENT);
	assert_non_null(strstr(err.msg, "mae"));
	assert_int_equal(dl_early_stop_begin(&p, "acc", false, &st, &err), DL_OK);	/* an alias */
	assert_true(st.greater);
	p = parse_ok("monitor=val_top_3_accuracy");
	assert_int_equal(dl_early_stop_begin(&p, "top_3_accuracy", true, &st, &err), DL_OK);
	assert_true(st.greater);
	p = parse_ok("monitor=val_mse");
	assert_int_equal(dl_early_stop_begin(&p, "mse", true, &st, &err), DL_OK);
	assert_false(st.greater);
	p = parse_ok("monitor=val_mse, mode=max");
	assert_int_equal(dl_early_stop_begin(&p, "mse", true, &st, &err), DL_OK);
	assert_true(st.greater);
}

/* Run values[0..n-1] at iterations 1..n; returns the stop iteration (0: none). */
static int
run(const char *opts, const char *metric, const double *values, int n, int *best_it,
	int *saves)
{
	DlEarlyStopConfig p = parse_ok(opts);
	DlEarlyStopState st;
	DlError		err;

	dl_error_clear(&err);
	assert_int_equal(dl_early_stop_begin(&p, metric, true, &st, &err), DL_OK);
	*saves = 0;
	for (int i = 0; i < n; i++)
	{
		DlEarlyStopAction a = dl_early_stop_update(&p, &st, i + 1, values[i]);

		*saves += a.save_best;
		if (a.stop)
		{
			*best_it = st.best_iteration;
			assert_int_equal(st.stopped_iteration, i + 1);
			return i + 1;
		}
	}
	*best_it = st.best_iteration;
	return 0;
}

static void
test_rule(void **state)
{
	static const double plateau[] = {1.0, 0.5, 0.4, 0.3995, 0.41, 0.3999, 0.2, 0.1};
	static const double acc[] = {0.5, 0.6, 0.6, 0.7, 0.65, 0.66, 0.69, 0.9};
	static const double nan_first[] = {NAN, NAN, NAN, 1.0};
	int			best;
	int			saves;

	(void) state;
	/* min_delta 0.001: 0.3995 is not an improvement on 0.4; wait 1, 2, 3 at 4, 5, 6 */
	assert_int_equal(run("monitor=val_loss, patience=3, min_delta=0.001", NULL, plateau, 8,
						 &best, &saves), 6);
	assert_int_equal(best, 3);
	assert_int_equal(saves, 3);
	/* without min_delta 0.3995 improves; 0.41 and 0.3999 do not: wait 2 at 6 */
	assert_int_equal(run("monitor=val_loss, patience=2", NULL, plateau, 8, &best, &saves), 6);
	assert_int_equal(best, 4);
	/* patience 0: the first point without improvement stops */
	assert_int_equal(run("monitor=val_loss, patience=0", NULL, plateau, 8, &best, &saves), 5);
	assert_int_equal(best, 4);
	/* accuracy: mode auto is max; 0.6 does not improve on 0.6 */
	assert_int_equal(run("monitor=val_accuracy, patience=1", "accuracy", acc, 8, &best, &saves), 3);
	assert_int_equal(best, 2);
	assert_int_equal(run("monitor=val_accuracy, patience=3", "accuracy", acc, 8, &best, &saves), 7);
	assert_int_equal(best, 4);
	/* a baseline not beaten: improvements do not reset wait; stops after patience points */
	assert_int_equal(run("monitor=val_accuracy, patience=3, baseline=0.95", "accuracy", acc, 8,
						 &best, &saves), 3);
	assert_int_equal(best, 2);
	/* start_from_epoch 4: points 1..4 are not monitored; 0.3999 is not 0.05 below 0.41 */
	assert_int_equal(run("monitor=val_loss, patience=1, min_delta=0.05, start_from_epoch=4",
						 NULL, plateau, 8, &best, &saves), 6);
	assert_int_equal(best, 5);
	/* NaN never improves; the first point is kept as the best */
	assert_int_equal(run("monitor=val_loss, patience=2", NULL, nan_first, 4, &best, &saves), 2);
	assert_int_equal(best, 1);
	assert_int_equal(saves, 1);
	/* disabled: never stops, never saves */
	assert_int_equal(run("", NULL, plateau, 8, &best, &saves), 0);
	assert_int_equal(saves, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_begin),
		cmocka_unit_test(test_begin_list),
		cmocka_unit_test(test_rule),
	};

	return cmocka_run_group_tests_name("early_stop", tests, NULL, NULL);
}
