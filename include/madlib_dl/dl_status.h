/*-------------------------------------------------------------------------
 *
 * dl_status.h
 *	  Status codes and error reports returned by every engine call.
 *
 * The engine never prints, exits or aborts.  A function that can fail
 * returns a DlStatus and, when the caller passed a DlError, fills it with a
 * lowercase message (no trailing period) that names the offending value,
 * and optionally a hint: a full sentence saying what to do.  The PostgreSQL
 * glue (src/pg/pg_error.c) is the only place that maps a DlStatus to a
 * SQLSTATE.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_status.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_STATUS_H
#define DL_STATUS_H

#include <stdarg.h>
#include <stddef.h>

typedef enum DlStatus
{
	DL_OK = 0,
	DL_ERR_INVALID_ARGUMENT,	/* bad parameter value -> INVALID_PARAMETER_VALUE */
	DL_ERR_PARSE,				/* malformed JSON or parameter string -> INVALID_PARAMETER_VALUE */
	DL_ERR_UNSUPPORTED,			/* unsupported layer or attribute -> FEATURE_NOT_SUPPORTED */
	DL_ERR_SHAPE,				/* shapes do not fit together -> DATA_EXCEPTION */
	DL_ERR_DATA,				/* NaN, infinity, bad label -> DATA_EXCEPTION */
	DL_ERR_DIVERGED,			/* training produced NaN or infinity -> DATA_EXCEPTION */
	DL_ERR_CORRUPT,				/* corrupt, truncated or foreign blob -> DATA_CORRUPTED */
	DL_ERR_NO_MEMORY,			/* allocator returned NULL -> OUT_OF_MEMORY */
	DL_ERR_LIMIT,				/* size overflow or limit exceeded -> PROGRAM_LIMIT_EXCEEDED */
	DL_ERR_INTERNAL,			/* cannot happen -> elog(ERROR) */
	DL_ERR_CANCELLED			/* the caller's cancel check asked to stop
								 * (dl_model_set_cancel) -> QUERY_CANCELED */
} DlStatus;

#define DL_ERROR_MSG_MAX 512

typedef struct DlError
{
	DlStatus	code;
	char		msg[DL_ERROR_MSG_MAX];	/* lowercase, no trailing period */
	char		hint[DL_ERROR_MSG_MAX]; /* full sentence, or empty */
} DlError;

#if defined(__GNUC__)
#define DL_PRINTF_FMT(a, b) __attribute__((format(printf, a, b)))
#else
#define DL_PRINTF_FMT(a, b)
#endif

/*
 * Record an error.  err may be NULL, in which case only the code is
 * returned.  Clears any previous hint.  A message or hint longer than the
 * buffer is cut at the start of a UTF-8 character, so that it stays valid
 * UTF-8 for the client.  Returns code, so callers can write
 * "return dl_error_set(err, DL_ERR_SHAPE, ...);".
 */
DlStatus	dl_error_set(DlError *err, DlStatus code, const char *fmt,...) DL_PRINTF_FMT(3, 4);

/*
 * Attach a hint to the error already recorded; returns err->code.  With a
 * NULL err the recorded code is unknown, so DL_ERR_INTERNAL is returned
 * (never DL_OK): callers that may fail should always pass a DlError.
 */
DlStatus	dl_error_hint(DlError *err, const char *fmt,...) DL_PRINTF_FMT(2, 3);

/* Reset err to DL_OK with empty message and hint.  err may be NULL. */
void		dl_error_clear(DlError *err);

/*
 * Prefix the message already recorded with "prefix: " (used to add
 * context such as "layer \"dense_1\"").  No-op when err is NULL.
 */
void		dl_error_prefix(DlError *err, const char *fmt,...) DL_PRINTF_FMT(2, 3);

/*
 * How many of the n bytes of s to quote in a message of at most max
 * bytes: n when it fits, else max or less, backed off to the start of a
 * UTF-8 character.
 */
size_t		dl_text_clip(const char *s, size_t n, size_t max);

/* Static name of a status, e.g. "DL_ERR_SHAPE". */
const char *dl_status_name(DlStatus status);

#endif							/* DL_STATUS_H */
