/*-------------------------------------------------------------------------
 *
 * strbuf.c
 *	  A string builder in a fixed buffer or growing through a DlAllocator
 *	  (see dl_strbuf.h).
 *
 * IDENTIFICATION
 *	  src/engine/strbuf.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "madlib_dl/dl_strbuf.h"

void
dl_strbuf_init_fixed(DlStrBuf *sb, char *buf, size_t cap)
{
	sb->data = buf;
	sb->len = 0;
	sb->cap = cap;
	sb->alloc = NULL;
	sb->failed = false;
	if (cap > 0)
		buf[0] = '\0';
}

void
dl_strbuf_init(DlStrBuf *sb, const DlAllocator *alloc)
{
	sb->data = NULL;
	sb->len = 0;
	sb->cap = 0;
	sb->alloc = alloc;
	sb->failed = false;
}

void
dl_strbuf_reset(DlStrBuf *sb)
{
	sb->len = 0;
	if (sb->cap > 0)
		sb->data[0] = '\0';
}

/*
 * Make room for n more bytes and the NUL; false when there is none (a
 * fixed buffer then takes what fits).
 */
static bool
reserve(DlStrBuf *sb, size_t n)
{
	size_t		need,
				cap;
	char	   *p;

	if (sb->failed)
		return false;
	if (!dl_size_add(sb->len, n, &need) || !dl_size_add(need, 1, &need))
	{
		sb->failed = true;
		return false;
	}
	if (need <= sb->cap)
		return true;
	if (sb->alloc == NULL)
	{
		sb->failed = true;
		return false;
	}
	cap = sb->cap < 64 ? 64 : sb->cap;
	while (cap < need)
	{
		if (!dl_size_mul(cap, 2, &cap))
		{
			cap = need;
			break;
		}
	}
	p = dl_alloc(sb->alloc, cap, NULL);
	if (p == NULL)
	{
		sb->failed = true;
		return false;
	}
	if (sb->len > 0)
		memcpy(p, sb->data, sb->len);
	p[sb->len] = '\0';
	dl_free(sb->alloc, sb->data);
	sb->data = p;
	sb->cap = cap;
	return true;
}

void
dl_strbuf_append(DlStrBuf *sb, const char *s, size_t n)
{
	if (!reserve(sb, n))
	{
		/* a fixed buffer keeps what fits */
		if (sb->alloc == NULL && sb->cap > 0 && sb->len + 1 < sb->cap)
		{
			size_t		k = sb->cap - 1 - sb->len;

			memcpy(sb->data + sb->len, s, k < n ? k : n);
			sb->len += k < n ? k : n;
			sb->data[sb->len] = '\0';
		}
		return;
	}
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

void
dl_strbuf_puts(DlStrBuf *sb, const char *s)
{
	dl_strbuf_append(sb, s, strlen(s));
}

void
dl_strbuf_putc(DlStrBuf *sb, char c)
{
	dl_strbuf_append(sb, &c, 1);
}

void
dl_strbuf_printf(DlStrBuf *sb, const char *fmt,...)
{
	char		tmp[256];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
	{
		sb->failed = true;
		return;
	}
	if ((size_t) n < sizeof(tmp))
	{
		dl_strbuf_append(sb, tmp, (size_t) n);
		return;
	}
	/* longer than tmp: format straight into the buffer */
	if (!reserve(sb, (size_t) n))
	{
		dl_strbuf_append(sb, tmp, sizeof(tmp) - 1);	/* a fixed buffer takes what fits */
		return;
	}
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, sb->cap - sb->len, fmt, ap);
	va_end(ap);
	sb->len += (size_t) n;
}

void
dl_strbuf_free(DlStrBuf *sb)
{
	if (sb->alloc != NULL)
		dl_free(sb->alloc, sb->data);
	sb->data = NULL;
	sb->len = 0;
	sb->cap = 0;
}
