/*-------------------------------------------------------------------------
 *
 * params_scan.h
 *	  Internal to the parameter-string parsers (params.c, params_scan.c,
 *	  lr_schedule.c): the parse context, the scanner over the string's
 *	  pieces, and the canonical writers' number formatting.
 *
 * Not part of the public API (that is include/madlib_dl/dl_params.h).
 *
 * IDENTIFICATION
 *	  src/engine/params_scan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_PARAMS_SCAN_H
#define DL_PARAMS_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_params.h"
#include "madlib_dl/dl_pylit.h"
#include "madlib_dl/dl_strbuf.h"

#define DL_PARAMS_MAX_NESTING 32			/* deepest bracket nesting accepted */
#define DL_PARAMS_NAME_MAX 128		/* longest name looked up (buffer size) */
#define DL_PARAMS_SHOW_MAX 120			/* longest piece quoted in a message */

/* The string being parsed, and what to call it in messages. */
typedef struct DlParamsCtx
{
	const char *s;
	size_t		len;
	const char *what;			/* "compile_params" or "fit_params" */
	DlError    *err;
} DlParamsCtx;

/* Scanner (params_scan.c). */
extern void dl_params_trim(const char *s, size_t *b, size_t *e);
extern int dl_params_show_len(const char *s, size_t b, size_t e);
extern bool dl_params_piece_eq(const char *s, size_t b, size_t e, const char *word);
extern bool dl_params_single_token(const char *s, size_t b, size_t e, DlPylitToken *tok);
extern DlStatus dl_params_check_balanced(DlParamsCtx *c, size_t b, size_t e);
extern size_t dl_params_scan_to(const char *s, size_t i, size_t e, char target);
extern int dl_params_next_item(DlParamsCtx *c, size_t *pos, size_t e, size_t *ib, size_t *ie);
typedef DlStatus (*DlParamsItemFn) (DlParamsCtx *c, size_t kb, size_t ke, size_t vb, size_t ve, void *arg);
extern DlStatus dl_params_parse_items(const char *s, const char *what, const char *example, DlParamsItemFn fn, void *arg, DlError *err);
extern DlStatus dl_params_each_item(DlParamsCtx *c, size_t b, size_t e, const char *example, DlParamsItemFn fn, void *arg);
extern DlStatus dl_params_split_key_value(DlParamsCtx *c, size_t ib, size_t ie, size_t *kb, size_t *ke, size_t *vb, size_t *ve, const char *example);
extern bool dl_params_unquote(const char *s, size_t *b, size_t *e);
extern bool dl_params_copy_name(char *buf, const char *s, size_t b, size_t e);
extern bool dl_params_parse_double(const char *s, size_t b, size_t e, double *out);
extern bool dl_params_parse_int64(const char *s, size_t b, size_t e, int64_t *out);
extern bool dl_params_parse_bool(const char *s, size_t b, size_t e, bool *out);
extern DlStatus dl_params_unsupported_key(DlParamsCtx *c, DlStatus code, const char *kind, size_t kb, size_t ke, const char *hint);
extern DlStatus dl_params_bad_value(DlParamsCtx *c, const char *kind, size_t kb, size_t ke, size_t vb, size_t ve, const char *takes);

/* Canonical writers' numbers (params_scan.c). */
extern void dl_params_sb_double(DlStrBuf *sb, double v);
extern void dl_params_sb_float(DlStrBuf *sb, float v);
extern DlStatus dl_params_sb_finish(DlStrBuf *sb, DlError *err);

/* Learning-rate schedules (lr_schedule.c). */
extern DlStatus dl_params_parse_lr_schedule(DlParamsCtx *c, size_t vb, size_t ve, DlOptimConfig *cfg, bool *is);
extern void dl_params_sb_schedule(DlStrBuf *sb, const DlLrSchedule *sch);

#endif							/* DL_PARAMS_SCAN_H */
