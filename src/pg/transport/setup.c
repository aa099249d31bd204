/*-------------------------------------------------------------------------
 *
 * setup.c
 *	  The variables a job's setup carries (DlSegVars, segments.h): their
 *	  check and their copy, for the transports that keep a setup and for
 *	  the runtime's table checks.  Calls nothing of madlib_dl.
 *
 * IDENTIFICATION
 *	  src/pg/transport/setup.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "segments.h"

bool
dl_seg_vars_valid(const DlSegVars *vars)
{
	if (vars->n_x < 1 || vars->n_x > DL_MAX_IO || vars->n_y < 1 || vars->n_y > DL_MAX_IO)
		return false;
	for (int i = 0; i < vars->n_x; i++)
		if (vars->x[i] == NULL)
			return false;
	for (int i = 0; i < vars->n_y; i++)
		if (vars->y[i] == NULL)
			return false;
	return true;
}

void
dl_seg_vars_copy(DlSegVars *dst, const DlSegVars *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->n_x = src->n_x;
	dst->n_y = src->n_y;
	for (int i = 0; i < src->n_x; i++)
		dst->x[i] = pstrdup(src->x[i]);
	for (int i = 0; i < src->n_y; i++)
		dst->y[i] = pstrdup(src->y[i]);
}
