/*-------------------------------------------------------------------------
 *
 * dl_caps.h
 *	  Size caps on every text the engine parses, checked before parsing.
 *
 * A role can hand madlib_dl any text: an architecture, compile or fit
 * parameters, a model selection grid, AutoML parameters.  Each kind has
 * a cap on its length, checked before any parser sees it, so the memory
 * a parser uses is bounded by a small multiple of the cap.  json-c
 * allocates with malloc, outside PostgreSQL's memory contexts, up to
 * about 800 bytes for an empty object "{}" (three bytes of text): an
 * architecture is therefore also pre-scanned (dl_json_heap_estimate)
 * and refused when json-c would need more than DL_ARCH_JSON_MAX_HEAP.
 * Refusals are DL_ERR_LIMIT (54000 in SQL) with the cap in the hint.
 * docs/security.md ("Size caps") lists them.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_caps.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_CAPS_H
#define DL_CAPS_H

#include <stddef.h>

#include "madlib_dl/dl_status.h"

/* A Keras architecture (model.to_json()): 16 MiB of text. */
#define DL_ARCH_JSON_MAX_BYTES ((size_t) 16 << 20)

/* ... and what json-c may allocate for it, by the pre-scan's estimate: 160 MiB. */
#define DL_ARCH_JSON_MAX_HEAP ((size_t) 160 << 20)

/* compile_params, fit_params, AutoML parameters: 64 KiB each. */
#define DL_PARAMS_MAX_BYTES ((size_t) 64 << 10)

/* A model selection grid (compile_params_grid, fit_params_grid): 1 MiB. */
#define DL_GRID_MAX_BYTES ((size_t) 1 << 20)

/*
 * DL_OK when len <= cap, else DL_ERR_LIMIT: "<what> of <len> bytes is
 * longer than the limit of <cap> bytes", with a hint naming the cap.
 */
DlStatus	dl_text_check_cap(const char *what, size_t len, size_t cap, DlError *err);

/*
 * Bytes json-c 0.16 allocates, at most, to parse the len bytes of json
 * (an upper bound measured per value: objects, arrays, members, strings,
 * scalars), computed in one pass without allocating.  The scan stops as
 * soon as the estimate passes limit and returns a value above it.  It
 * does not validate: json-c does.
 */
size_t		dl_json_heap_estimate(const char *json, size_t len, size_t limit);

#endif							/* DL_CAPS_H */
