/*-------------------------------------------------------------------------
 *
 * pg_util.c
 *	  Small helpers shared by the SQL-callable C functions (fit.c,
 *	  fit_multiple.c, evaluate.c, predict.c, gp_agg.c).
 *
 * IDENTIFICATION
 *	  src/pg/pg_util.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_util.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/lsyscache.h"

char *
dl_pg_text_arg(FunctionCallInfo fcinfo, int i)
{
	return PG_ARGISNULL(i) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(i));
}

ArrayType *
dl_pg_float8_array(const double *v, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Float8GetDatum(v[i]);
	return construct_array(d, n, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

ArrayType *
dl_pg_int4_array(const int32 *v, const bool *nulls, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};

	for (int i = 0; i < n; i++)
		d[i] = Int32GetDatum(v[i]);
	return construct_md_array(d, (bool *) nulls, 1, dims, lbs, INT4OID, sizeof(int32), true,
							  TYPALIGN_INT);
}

double
dl_pg_ratio(double sum, int64 n)
{
	return n > 0 ? sum / (double) n : get_float8_nan();
}

double
dl_pg_seconds_since(instr_time start)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_DOUBLE(now);
}

char *
dl_pg_relation_sql_name(Oid relid)
{
	char	   *rel = get_rel_name(relid);
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));

	if (rel == NULL || nsp == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return quote_qualified_identifier(nsp, rel);
}

Portal
dl_pg_spi_open_cursor(const char *query)
{
	SPIPlanPtr	plan;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(query, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", query,
			 SPI_result_code_string(SPI_result));
	return SPI_cursor_open(NULL, plan, NULL, NULL, true);
}

/* splitmix64 step: advances *x and returns the next value. */
static uint64
splitmix64_next(uint64 *x)
{
	uint64		z = (*x += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

void
dl_pg_visit_order(int *order, const double *cost, int K, uint64 seed)
{
	uint64		x = seed;

	for (int i = 0; i < K; i++)
		order[i] = i;
	for (int i = K - 1; i > 0; i--)
	{
		int			j = (int) (splitmix64_next(&x) % (uint64) (i + 1));
		int			t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 1; i < K; i++)
	{
		int			v = order[i];
		int			j = i - 1;

		while (j >= 0 && cost[order[j]] < cost[v])
		{
			order[j + 1] = order[j];
			j--;
		}
		order[j + 1] = v;
	}
}
