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

size_t
dl_text_clip(const char *s, size_t n, size_t max)
{
	if (n <= max)
		return n;
	/* back off to the first byte of the character the cap cuts */
	while (max > 0 && ((unsigned char) s[max] & 0xC0) == 0x80)
		max--;
	return max;
}

/*
 * After vsnprintf wrote n (what it wanted) into buf of size bytes: when
 * it cut the text, drop the UTF-8 character the cut split.
 */
static void
drop_cut_character(char *buf, int n, size_t size)
{
	size_t		len,
				lead;
	unsigned char c;

	if (n < 0 || (size_t) n < size)
		return;
	len = strlen(buf);
	lead = len;
	while (lead > 0 && ((unsigned char) buf[lead - 1] & 0xC0) == 0x80)
		lead--;
	if (lead == 0)
		return;
	lead--;						/* the last character's first byte */
	c = (unsigned char) buf[lead];
	if (len - lead < (size_t) (c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1))
		buf[lead] = '\0';
}

DlStatus
dl_error_set(DlError *err, DlStatus code, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (err == NULL)
		return code;
	err->code = code;
	err->hint[0] = '\0';
	va_start(ap, fmt);
	n = vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	drop_cut_character(err->msg, n, sizeof(err->msg));
	return code;
}

DlStatus
dl_error_hint(DlError *err, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (err == NULL)
		return DL_ERR_INTERNAL; /* the caller's code is unknown: never report success */
	va_start(ap, fmt);
	n = vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
	drop_cut_character(err->hint, n, sizeof(err->hint));
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
	snprintf(err->msg, sizeof(err->msg), "%.*s: %.*s",
			 (int) dl_text_clip(prefix, strlen(prefix), 200), prefix,
			 (int) dl_text_clip(old, strlen(old), 300), old);
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
		case DL_ERR_CANCELLED:
			return "DL_ERR_CANCELLED";
	}
	return "DL_ERR_UNKNOWN";
}
