/*-------------------------------------------------------------------------
 *
 * status.c
 *	  Recording errors in a DlError.
 *
 * IDENTIFICATION
 *	  src/engine/status.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "madlib_dl/dl_status.h"

DlStatus
dl_error_set(DlError *err, DlStatus code, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return code;
	err->code = code;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

DlStatus
dl_error_hint(DlError *err, const char *fmt,...)
{
	va_list		ap;

	if (err == NULL)
		return DL_ERR_INTERNAL; /* the caller's code is unknown: never report success */
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	return err->code;
}

void
dl_error_clear(DlError *err)
{
	if (err == NULL)
		return;
	err->code = DL_OK;
	err->msg[0] = '\0';
	err->hint[0] = '\0';
}

void
dl_error_prefix(DlError *err, const char *fmt,...)
{
	char		prefix[DL_ERROR_MSG_MAX];
	char		old[DL_ERROR_MSG_MAX];
	va_list		ap;

	if (err == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%.200s: %.300s", prefix, old);
}

const char *
dl_status_name(DlStatus status)
{
	switch (status)
	{
		case DL_OK:
			return "DL_OK";
		case DL_ERR_INVALID_ARGUMENT:
			return "DL_ERR_INVALID_ARGUMENT";
		case DL_ERR_PARSE:
			return "DL_ERR_PARSE";
		case DL_ERR_UNSUPPORTED:
			return "DL_ERR_UNSUPPORTED";
		case DL_ERR_SHAPE:
			return "DL_ERR_SHAPE";
		case DL_ERR_DATA:
			return "DL_ERR_DATA";
		case DL_ERR_DIVERGED:
			return "DL_ERR_DIVERGED";
		case DL_ERR_CORRUPT:
			return "DL_ERR_CORRUPT";
		case DL_ERR_NO_MEMORY:
			return "DL_ERR_NO_MEMORY";
		case DL_ERR_LIMIT:
			return "DL_ERR_LIMIT";
		case DL_ERR_INTERNAL:
			return "DL_ERR_INTERNAL";
	}
	return "DL_ERR_UNKNOWN";
}
