/*-------------------------------------------------------------------------
 *
 * seg_stats.c
 *	  The metric sums block of a segment's statistics (DlSegStats,
 *	  segments.h): copied by its used size, and serialized as the float8[]
 *	  metric_sums column of a madlib_dl._step_result for the transports
 *	  that move statistics as SQL values (Greenplum, PL/Proxy).  One
 *	  mechanism: the workers' shared memory holds the block as it is.
 *
 * IDENTIFICATION
 *	  src/pg/transport/seg_stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/array.h"

#include "pg_util.h"
#include "segments.h"

DlSegStats *
dl_seg_stats_copy(const DlSegStats *st)
{
	Size		n = dl_seg_stats_size(st->n_msum);
	DlSegStats *c = palloc(n);

	memcpy(c, st, n);
	return c;
}

Datum
dl_seg_msum_datum(const DlSegStats *st, bool *isnull)
{
	*isnull = st->n_msum <= 0;
	return *isnull ? (Datum) 0 : PointerGetDatum(dl_pg_float8_array(st->msum, st->n_msum));
}

void
dl_seg_msum_read(Datum d, bool isnull, bool val, DlSegStats *st)
{
	ArrayType  *a;
	Datum	   *v;
	bool	   *nulls;
	int			n;

	if (isnull)
		return;
	a = DatumGetArrayTypeP(d);
	if (ARR_ELEMTYPE(a) != FLOAT8OID || ARR_NDIM(a) > 1 || ARR_HASNULL(a))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("the metric sums of a step result must be a list of numbers"),
				 errhint("Run every node and segment with the same madlib_dl version.")));
	deconstruct_array(a, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &v, &nulls, &n);
	if (n < 1 || n > DL_METRIC_SUMS_MAX || (st->n_msum > 0 && n != st->n_msum))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("a step result gives %d metric sums, expected %d", n,
						st->n_msum > 0 ? st->n_msum : DL_METRIC_SUMS_MAX),
				 errhint("Run every node and segment with the same madlib_dl version.")));
	if (st->n_msum == 0)
		memset(st->msum, 0, sizeof(double) * 2 * (Size) n);
	st->n_msum = n;
	for (int i = 0; i < n; i++)
	{
		if (val)
			st->msum[n + i] += DatumGetFloat8(v[i]);
		else
			st->msum[i] = DatumGetFloat8(v[i]);
	}
}
