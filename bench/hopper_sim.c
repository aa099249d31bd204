/*-------------------------------------------------------------------------
 *
 * hopper_sim.c
 *	  A discrete-event simulator that drives the engine's model hopper
 *	  (dl_hopper.h, the scheduler fit_multiple runs) with synthetic step
 *	  costs, and reports the makespan against its lower bound (issue 31,
 *	  item 3).
 *
 *	  out/hopper_sim [-n SEGMENTS] [-k MODELS] [-i ITERATIONS] [-f METRICS_EVERY]
 *	                 [-r SPREAD] [-e EVAL_FRACTION] [-s SEED] [-c COST,COST,...]
 *
 * What is simulated is what src/pg/api/fit_multiple.c does with the
 * hopper: the iterations between two metrics points are a round
 * (dl_hopper_begin_round); whenever a segment is free, every free segment
 * in segment order asks dl_hopper_next for a model (fm_offer) and trains
 * it for one sub-epoch on its partition; a finished step is
 * dl_hopper_done.  At a metrics point every segment evaluates every live
 * model on its partition (dl_fm_evaluate), and the next round starts when
 * all are done.
 *
 * Costs: model k's step on one segment's partition takes c_k time units
 * on every segment (equal partitions and equal cores); c_k is drawn
 * log-uniformly from [1, SPREAD] with splitmix64 from SEED, or given with
 * -c.  An evaluation of model k on one partition takes EVAL_FRACTION x
 * c_k (a forward pass against a forward and backward one).  The work of
 * model k is W_k = c_k (I N + P N e) over I iterations and P metrics
 * points; the lower bound of any schedule is
 *
 *	   LB = max(sum_k W_k / N, max_k c_k (I N + P e))
 *
 * (all the work spread evenly, or the longest model's steps, which run
 * one after another, and its evaluations, which may run side by side).
 * It prints the makespan, LB, their ratio and the segments' utilisation
 * (sum W_k / (N x makespan)), with the time lost in rounds' tails (free
 * segments with no model due) and in metrics points.
 *
 * IDENTIFICATION
 *	  bench/hopper_sim.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "madlib_dl/dl_hopper.h"
#include "madlib_dl/dl_rng.h"

typedef struct SimConfig
{
	int			n_segments;
	int			n_models;
	int			iterations;
	int			metrics_every;	/* a metrics point every F iterations, and at the last */
	double		spread;			/* costs in [1, spread] */
	double		eval_fraction;
	uint64_t	seed;
	double	   *cost;			/* (n_models) */
} SimConfig;

typedef struct SimResult
{
	double		makespan;
	double		train_span;		/* time in rounds */
	double		eval_span;		/* time in metrics points */
	double		work;			/* sum of W_k */
	double		bound;
	double		idle_in_rounds; /* segment-time free inside rounds */
	long		steps;
} SimResult;

static void *
sim_alloc(void *ctx, size_t size)
{
	(void) ctx;
	return calloc(1, size);
}

static void
sim_free(void *ctx, void *ptr)
{
	(void) ctx;
	free(ptr);
}

/* A min-heap of (time, segment): the segments that are training. */
typedef struct Busy
{
	double		t;
	int			s;
} Busy;

static int
busy_less(const Busy *a, const Busy *b)
{
	return a->t < b->t || (a->t == b->t && a->s < b->s);
}

static void
heap_push(Busy *heap, int *n, Busy v)
{
	int			i = (*n)++;

	heap[i] = v;
	while (i > 0 && busy_less(&heap[i], &heap[(i - 1) / 2]))
	{
		Busy		t = heap[i];

		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static Busy
heap_pop(Busy *heap, int *n)
{
	Busy		top = heap[0];
	int			i = 0;

	heap[0] = heap[--(*n)];
	for (;;)
	{
		int			l = 2 * i + 1,
					r = l + 1,
					m = i;
		Busy		t;

		if (l < *n && busy_less(&heap[l], &heap[m]))
			m = l;
		if (r < *n && busy_less(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			break;
		t = heap[i];
		heap[i] = heap[m];
		heap[m] = t;
		i = m;
	}
	return top;
}

/* One round, iterations first..last, from time t; returns its end. */
static double
sim_round(const SimConfig *c, DlHopper *h, int first, int last, double t, int *model_on,
		  Busy *heap, SimResult *res)
{
	int			N = c->n_segments;
	int			nb = 0;
	Busy		done;
	double		busy_time = 0;
	double		start = t;

	dl_hopper_begin_round(h, first, last);
	for (;;)
	{
		for (int s = 0; s < N; s++)
		{
			int64_t		it;
			int			k;

			if (model_on[s] >= 0)
				continue;
			k = dl_hopper_next(h, s, &it);
			if (k < 0)
				continue;
			model_on[s] = k;
			heap_push(heap, &nb, (Busy) {t + c->cost[k], s});
			busy_time += c->cost[k];
			res->steps++;
		}
		if (nb == 0)
			break;
		done = heap_pop(heap, &nb);
		t = done.t;
		dl_hopper_done(h, model_on[done.s], false);
		model_on[done.s] = -1;
	}
	res->idle_in_rounds += (t - start) * N - busy_time;
	return t;
}

static int
simulate(const SimConfig *c, SimResult *res)
{
	DlAllocator alloc = {sim_alloc, sim_free, NULL};
	DlHopperConfig hc = {c->n_models, c->n_segments, c->cost, c->seed};
	DlHopper   *h;
	DlError		err;
	int		   *model_on = malloc(sizeof(int) * c->n_segments);
	Busy	   *heap = malloc(sizeof(Busy) * c->n_segments);
	double		t = 0,
				eval_all = 0,
				longest = 0;
	int			points = 0;

	memset(res, 0, sizeof(*res));
	dl_error_clear(&err);
	if (model_on == NULL || heap == NULL ||
		dl_hopper_create(&hc, &alloc, &h, &err) != DL_OK)
	{
		fprintf(stderr, "hopper_sim: %s\n", model_on == NULL || heap == NULL ? "out of memory" : err.msg);
		free(model_on);
		free(heap);
		return 1;
	}
	for (int s = 0; s < c->n_segments; s++)
		model_on[s] = -1;
	for (int k = 0; k < c->n_models; k++)
		eval_all += c->eval_fraction * c->cost[k];
	for (int first = 1; first <= c->iterations; first += c->metrics_every)
	{
		int			last = first + c->metrics_every - 1;
		double		t0;

		if (last > c->iterations)
			last = c->iterations;
		t0 = t;
		t = sim_round(c, h, first, last, t, model_on, heap, res);
		res->train_span += t - t0;
		/* the metrics point: each segment evaluates every model on its partition */
		t += eval_all;
		res->eval_span += eval_all;
		points++;
	}
	dl_hopper_free(h);
	free(model_on);
	free(heap);
	for (int k = 0; k < c->n_models; k++)
	{
		double		wk = c->cost[k] * ((double) c->iterations * c->n_segments +
									   (double) points * c->n_segments * c->eval_fraction);
		double		path = c->cost[k] * ((double) c->iterations * c->n_segments +
										 (double) points * c->eval_fraction);

		res->work += wk;
		if (path > longest)
			longest = path;
	}
	res->makespan = t;
	res->bound = fmax(res->work / c->n_segments, longest);
	return 0;
}

/* Costs log-uniform in [1, spread], from seed (a stream apart from the hopper's). */
static void
draw_costs(SimConfig *c)
{
	uint64_t	x = c->seed ^ 0x9e3779b97f4a7c15ULL;

	for (int k = 0; k < c->n_models; k++)
	{
		double		u = (double) (dl_splitmix64_next(&x) >> 11) / 9007199254740992.0;

		c->cost[k] = exp(u * log(c->spread));
	}
}

static int
parse_costs(SimConfig *c, const char *list)
{
	const char *p = list;
	int			n = 1;

	for (const char *q = list; *q; q++)
		n += *q == ',';
	c->n_models = n;
	c->cost = calloc((size_t) n, sizeof(double));
	if (c->cost == NULL)
		return 1;
	for (int k = 0; k < n; k++)
	{
		char	   *end;

		c->cost[k] = strtod(p, &end);
		if (end == p || !(c->cost[k] > 0) || (*end != ',' && *end != '\0'))
		{
			fprintf(stderr, "hopper_sim: cost %d of -c is not a positive number: \"%s\"\n", k + 1, p);
			return 1;
		}
		p = end + (*end == ',');
	}
	return 0;
}

int
main(int argc, char **argv)
{
	SimConfig	c = {256, 1000, 10, 1, 30.0, 0.33, 42, NULL};
	const char *costs = NULL;
	SimResult	r;
	double		lo = INFINITY,
				hi = 0;
	int			opt;

	while ((opt = getopt(argc, argv, "n:k:i:f:r:e:s:c:")) != -1)
	{
		switch (opt)
		{
			case 'n': c.n_segments = atoi(optarg); break;
			case 'k': c.n_models = atoi(optarg); break;
			case 'i': c.iterations = atoi(optarg); break;
			case 'f': c.metrics_every = atoi(optarg); break;
			case 'r': c.spread = atof(optarg); break;
			case 'e': c.eval_fraction = atof(optarg); break;
			case 's': c.seed = strtoull(optarg, NULL, 10); break;
			case 'c': costs = optarg; break;
			default:
				fprintf(stderr, "usage: %s [-n segments] [-k models] [-i iterations] [-f metrics_every]"
						" [-r spread] [-e eval_fraction] [-s seed] [-c cost,cost,...]\n", argv[0]);
				return 2;
		}
	}
	if (costs != NULL ? parse_costs(&c, costs) != 0 : (c.cost = calloc((size_t) (c.n_models > 0 ? c.n_models : 1), sizeof(double))) == NULL)
		return 2;
	if (c.n_segments < 1 || c.n_models < 1 || c.iterations < 1 || c.metrics_every < 1 ||
		!(c.spread >= 1) || !(c.eval_fraction >= 0))
	{
		fprintf(stderr, "hopper_sim: segments, models, iterations and metrics_every must be >= 1,"
				" spread >= 1, eval_fraction >= 0\n");
		return 2;
	}
	if (costs == NULL)
		draw_costs(&c);
	for (int k = 0; k < c.n_models; k++)
	{
		lo = fmin(lo, c.cost[k]);
		hi = fmax(hi, c.cost[k]);
	}
	if (simulate(&c, &r) != 0)
		return 1;
	printf("segments %d, models %d (costs %.3g..%.3g, %.1fx), iterations %d, metrics every %d, eval fraction %.2f\n",
		   c.n_segments, c.n_models, lo, hi, hi / lo, c.iterations, c.metrics_every, c.eval_fraction);
	printf("steps %ld; makespan %.1f (rounds %.1f, metrics points %.1f); lower bound %.1f\n",
		   r.steps, r.makespan, r.train_span, r.eval_span, r.bound);
	printf("makespan / bound %.4f; utilisation %.1f%%; free segment-time in rounds %.1f%% of all\n",
		   r.makespan / r.bound, 100.0 * r.work / (c.n_segments * r.makespan),
		   100.0 * r.idle_in_rounds / (c.n_segments * r.makespan));
	free(c.cost);
	return 0;
}
