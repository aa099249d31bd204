/*-------------------------------------------------------------------------
 *
 * hopper.c
 *	  The model hopper of fit_multiple (dl_hopper.h): the visit order,
 *	  the rotation, and which model a free segment takes next.
 *
 * The order of segments of the model at place p needs no table: its j-th
 * visit of an iteration is segment (p - j) mod N: p mod N, then down,
 * wrapping at 0.  (For p < N that is MADlib's rotation: p, p-1, ..., 0,
 * then N-1, ..., p+1.)  Each segment keeps a list of the models due on
 * it, so a free segment finds its next model without a scan of all.
 *
 * IDENTIFICATION
 *	  src/engine/hopper.c
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "madlib_dl/dl_hopper.h"
#include "madlib_dl/dl_rng.h"

typedef struct HopModel
{
	double		cost;
	int			place;			/* its place, 0..M-1 */
	bool		live;			/* neither dropped nor diverged */
	bool		busy;			/* on a segment now */
	int64_t		cur;			/* the iteration it is in */
	int			pos;			/* segments visited in that iteration */
	int			due_seg;		/* the segment whose due list holds it, -1: none */
	int			due_prev;		/* its neighbours there (-1: none) */
	int			due_next;
} HopModel;

struct DlHopper
{
	DlAllocator alloc;			/* a copy: the caller's may go out of scope */
	int			n_segments;		/* N */
	int			n_models;		/* models so far */
	int			cap_models;		/* room in models[] */
	int			n_places;		/* M */
	int			cap_places;		/* room in place[] */
	HopModel   *models;			/* (cap_models) */
	int		   *place;			/* (cap_places) model at each place, -1 empty */
	int64_t		first;			/* the round: iterations first..last */
	int64_t		last;
	int		   *due_head;		/* (n_segments) the first model due on each segment, -1: none */
};

void
dl_hopper_visit_order(int *order, const double *cost, int K, uint64_t seed)
{
	uint64_t	x = seed;

	for (int i = 0; i < K; i++)
		order[i] = i;
	for (int i = K - 1; i > 0; i--)
	{
		int			j = (int) (dl_splitmix64_next(&x) % (uint64_t) (i + 1));
		int			t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	/* stable insertion sort by cost, largest first (K is bounded) */
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

DlStatus
dl_hopper_create(const DlHopperConfig *cfg, const DlAllocator *alloc, DlHopper **out,
				 DlError *err)
{
	DlHopper   *h;
	int			K = cfg->n_models;
	int		   *order;

	*out = NULL;
	if (K < 1 || K > DL_HOPPER_MAX_MODELS || cfg->n_segments < 1 ||
		cfg->n_segments > DL_HOPPER_MAX_SEGMENTS || cfg->cost == NULL)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"a model hopper takes 1 to %d models and 1 to %d segments, got %d and %d",
							DL_HOPPER_MAX_MODELS, DL_HOPPER_MAX_SEGMENTS, K, cfg->n_segments);
	h = dl_alloc(alloc, sizeof(DlHopper), err);
	if (h == NULL)
		return DL_ERR_NO_MEMORY;
	h->alloc = *alloc;
	h->n_segments = cfg->n_segments;
	h->n_models = h->cap_models = K;
	h->n_places = h->cap_places = K > cfg->n_segments ? K : cfg->n_segments;
	h->models = dl_alloc_array(alloc, (size_t) K, sizeof(HopModel), err);
	h->place = dl_alloc_array(alloc, (size_t) h->n_places, sizeof(int), err);
	h->due_head = dl_alloc_array(alloc, (size_t) cfg->n_segments, sizeof(int), err);
	order = dl_alloc_array(alloc, (size_t) K, sizeof(int), err);
	if (h->models == NULL || h->place == NULL || h->due_head == NULL || order == NULL)
	{
		dl_free(alloc, order);
		dl_hopper_free(h);
		return DL_ERR_NO_MEMORY;
	}
	dl_hopper_visit_order(order, cfg->cost, K, cfg->seed);
	for (int p = 0; p < h->n_places; p++)
		h->place[p] = p < K ? order[p] : -1;
	for (int k = 0; k < K; k++)
	{
		h->models[k].cost = cfg->cost[k];
		h->models[k].live = true;
		h->models[k].due_seg = -1;
	}
	for (int sg = 0; sg < cfg->n_segments; sg++)
		h->due_head[sg] = -1;
	for (int p = 0; p < K; p++)
		h->models[order[p]].place = p;
	dl_free(alloc, order);
	h->first = h->last = 0;
	*out = h;
	return DL_OK;
}

void
dl_hopper_free(DlHopper *h)
{
	DlAllocator alloc;

	if (h == NULL)
		return;
	alloc = h->alloc;
	dl_free(&alloc, h->models);
	dl_free(&alloc, h->place);
	dl_free(&alloc, h->due_head);
	dl_free(&alloc, h);
}

int
dl_hopper_n_places(const DlHopper *h)
{
	return h->n_places;
}

int
dl_hopper_place(const DlHopper *h, int p)
{
	return p >= 0 && p < h->n_places ? h->place[p] : -1;
}

int
dl_hopper_n_models(const DlHopper *h)
{
	return h->n_models;
}

bool
dl_hopper_is_live(const DlHopper *h, int k)
{
	return k >= 0 && k < h->n_models && h->models[k].live;
}

/* The segment model m visits next: (place - pos) mod N. */
static int
next_segment(const DlHopper *h, const HopModel *m)
{
	int			N = h->n_segments;

	return ((m->place % N - m->pos) % N + N) % N;
}

/* Take model k off its segment's due list (if it is on one). */
static void
due_remove(DlHopper *h, int k)
{
	HopModel   *m = &h->models[k];

	if (m->due_seg < 0)
		return;
	if (m->due_prev >= 0)
		h->models[m->due_prev].due_next = m->due_next;
	else
		h->due_head[m->due_seg] = m->due_next;
	if (m->due_next >= 0)
		h->models[m->due_next].due_prev = m->due_prev;
	m->due_seg = -1;
}

/* Put model k on the due list of the segment it visits next, if it is due at all. */
static void
due_insert(DlHopper *h, int k)
{
	HopModel   *m = &h->models[k];
	int			sg;

	if (!m->live || m->busy || m->cur > h->last || m->due_seg >= 0)
		return;
	sg = next_segment(h, m);
	m->due_seg = sg;
	m->due_prev = -1;
	m->due_next = h->due_head[sg];
	if (m->due_next >= 0)
		h->models[m->due_next].due_prev = k;
	h->due_head[sg] = k;
}

void
dl_hopper_begin_round(DlHopper *h, int64_t first, int64_t last)
{
	h->first = first;
	h->last = last;
	for (int sg = 0; sg < h->n_segments; sg++)
		h->due_head[sg] = -1;
	for (int k = h->n_models - 1; k >= 0; k--)
	{
		h->models[k].cur = first;
		h->models[k].pos = 0;
		h->models[k].busy = false;
		h->models[k].due_seg = -1;
		due_insert(h, k);
	}
}

int
dl_hopper_next(DlHopper *h, int s, int64_t *iteration)
{
	int			pick = -1;

	if (s < 0 || s >= h->n_segments)
		return -1;
	/* the least advanced model due on s: lowest iteration, fewest visits, then place */
	for (int k = h->due_head[s]; k >= 0; k = h->models[k].due_next)
	{
		const HopModel *m = &h->models[k];
		const HopModel *b = pick >= 0 ? &h->models[pick] : NULL;

		if (b == NULL || m->cur < b->cur || (m->cur == b->cur && m->pos < b->pos) ||
			(m->cur == b->cur && m->pos == b->pos && m->place < b->place))
			pick = k;
	}
	if (pick >= 0)
	{
		due_remove(h, pick);
		h->models[pick].busy = true;
		*iteration = h->models[pick].cur;
	}
	return pick;
}

int64_t
dl_hopper_iteration(const DlHopper *h, int k)
{
	return k >= 0 && k < h->n_models ? h->models[k].cur : 0;
}

void
dl_hopper_done(DlHopper *h, int k, bool diverged)
{
	HopModel   *m;

	if (k < 0 || k >= h->n_models)
		return;
	m = &h->models[k];
	due_remove(h, k);
	m->busy = false;
	if (diverged)
	{
		m->live = false;
		return;
	}
	if (++m->pos == h->n_segments)
	{
		m->pos = 0;
		m->cur++;
	}
	due_insert(h, k);
}

int64_t
dl_hopper_finished_through(const DlHopper *h)
{
	int64_t		done = h->last;

	for (int k = 0; k < h->n_models; k++)
		if (h->models[k].live && h->models[k].cur - 1 < done)
			done = h->models[k].cur - 1;
	return done;
}

bool
dl_hopper_round_done(const DlHopper *h)
{
	return dl_hopper_finished_through(h) >= h->last;
}

/* Make room for n entries of elem bytes in *arr (capacity *cap), keeping its contents. */
static bool
grow(const DlAllocator *alloc, void **arr, int *cap, int n, size_t elem, DlError *err)
{
	void	   *p;

	if (n <= *cap)
		return true;
	p = dl_alloc_array(alloc, (size_t) n * 2, elem, err);
	if (p == NULL)
		return false;
	memcpy(p, *arr, (size_t) *cap * elem);
	dl_free(alloc, *arr);
	*arr = p;
	*cap = n * 2;
	return true;
}

int
dl_hopper_add_model(DlHopper *h, double cost, DlError *err)
{
	int			k = h->n_models;
	int			p;
	HopModel   *m;

	if (k >= DL_HOPPER_MAX_MODELS)
	{
		dl_error_set(err, DL_ERR_LIMIT, "a model hopper holds at most %d models", DL_HOPPER_MAX_MODELS);
		return -1;
	}
	for (p = 0; p < h->n_places && h->place[p] >= 0; p++)
		;
	if (!grow(&h->alloc, (void **) &h->models, &h->cap_models, k + 1, sizeof(HopModel), err) ||
		(p == h->n_places &&
		 !grow(&h->alloc, (void **) &h->place, &h->cap_places, p + 1, sizeof(int), err)))
		return -1;
	if (p == h->n_places)
		h->n_places++;
	h->place[p] = k;
	m = &h->models[k];
	memset(m, 0, sizeof(*m));
	m->cost = cost;
	m->place = p;
	m->live = true;
	m->due_seg = -1;
	m->cur = h->last + 1;		/* due from the next round on */
	h->n_models++;
	return k;
}

void
dl_hopper_drop_model(DlHopper *h, int k)
{
	if (k < 0 || k >= h->n_models)
		return;
	due_remove(h, k);
	h->models[k].live = false;
	h->place[h->models[k].place] = -1;
}
