/*-------------------------------------------------------------------------
 *
 * model_grid.h
 *	  The model selection grids as the engine reads them: Python values
 *	  parsed from MADlib's grid syntax (model_grid.c) into an arena, for
 *	  the searches of model_select.c.  Internal to the engine.
 *
 * IDENTIFICATION
 *	  src/engine/model_grid.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_MODEL_GRID_H
#define DL_MODEL_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_model_select.h"
#include "madlib_dl/dl_strbuf.h"

/* Bytes of a buffer for dl_grid_show_val. */
#define MS_SHOW_BUF 128

#define GRID_HINT "Write the grid as a Python dict of lists, for example " \
	"{'batch_size': [64, 128], 'epochs': [10]}."
#define TOO_MANY_HINT "Narrow the grid, or use search_type => 'random' with num_configs."

/* Blocks from the caller's allocator, freed at once. */
typedef struct DlMsArena MsArena;

typedef enum PyKind
{
	PY_NONE,
	PY_BOOL,
	PY_INT,
	PY_FLOAT,
	PY_STR,
	PY_LIST,
	PY_TUPLE,
	PY_DICT
} PyKind;

typedef struct PyVal
{
	PyKind		kind;
	size_t		pos;			/* 1-based byte offset in the grid text */
	bool		b;				/* PY_BOOL */
	int64_t		i;				/* PY_INT */
	double		f;				/* PY_FLOAT, finite */
	char	   *s;				/* PY_STR, NUL-terminated, no NUL inside */
	int			n;				/* PY_LIST, PY_TUPLE, PY_DICT: item count */
	int			cap;			/* allocated items (and keys) */
	struct PyVal **items;		/* (n) values */
	struct PyVal **keys;		/* (n) keys of a PY_DICT, else NULL */
} PyVal;

/* The arena */
MsArena    *dl_grid_arena_create(const DlAllocator *alloc, DlError *err);
void		dl_grid_arena_free(MsArena *a);
void	   *dl_grid_arena_alloc(MsArena *a, size_t n, DlError *err);
char	   *dl_grid_arena_strndup(MsArena *a, const char *s, size_t n, DlError *err);
/* The arena's copy of the caller's allocator (lives as long as the arena). */
const DlAllocator *dl_grid_arena_allocator(const MsArena *a);

/* The text of a grid (named what in messages) as one value in arena. */
DlStatus	dl_grid_parse(const char *text, const char *what, MsArena *arena, PyVal **out, DlError *err);

/* Python's repr and str of a value; a repr for a message; a text's bytes to quote. */
const char *dl_grid_kind_name(PyKind k);
void		dl_grid_append_repr(DlStrBuf *buf, const PyVal *v);
void		dl_grid_append_str(DlStrBuf *buf, const PyVal *v);
const char *dl_grid_show_val(const PyVal *v, char *out);
int			dl_grid_show_text(const char *s);

#endif							/* DL_MODEL_GRID_H */
