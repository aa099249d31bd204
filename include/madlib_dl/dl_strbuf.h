/*-------------------------------------------------------------------------
 *
 * dl_strbuf.h
 *	  A string builder: in a caller's fixed buffer, or growing through a
 *	  DlAllocator.
 *
 * Appending never fails on the spot: a fixed buffer that is full keeps
 * what fits (always NUL-terminated) and remembers the overflow; a growing
 * one whose allocator returns NULL stops growing and remembers that.  The
 * caller checks failed once at the end.  Used by the canonical parameter
 * writers (params.c) and the model selection rows and messages
 * (model_select.c).
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_strbuf.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_STRBUF_H
#define DL_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"

typedef struct DlStrBuf
{
	char	   *data;			/* NUL-terminated when cap > 0 */
	size_t		len;			/* bytes written, without the NUL */
	size_t		cap;			/* bytes of data */
	const DlAllocator *alloc;	/* grows through it; NULL: fixed buffer */
	bool		failed;			/* fixed: text was cut; growing: no memory */
} DlStrBuf;

/* A builder writing into buf (cap bytes, may be 0). */
void		dl_strbuf_init_fixed(DlStrBuf *sb, char *buf, size_t cap);

/* An empty builder growing through alloc (borrowed); free with dl_strbuf_free. */
void		dl_strbuf_init(DlStrBuf *sb, const DlAllocator *alloc);

/* Empty the text, keeping the memory. */
void		dl_strbuf_reset(DlStrBuf *sb);

void		dl_strbuf_append(DlStrBuf *sb, const char *s, size_t n);
void		dl_strbuf_puts(DlStrBuf *sb, const char *s);
void		dl_strbuf_putc(DlStrBuf *sb, char c);
void		dl_strbuf_printf(DlStrBuf *sb, const char *fmt,...) DL_PRINTF_FMT(2, 3);

/* Free a growing builder's memory (no-op for a fixed one). */
void		dl_strbuf_free(DlStrBuf *sb);

#endif							/* DL_STRBUF_H */
