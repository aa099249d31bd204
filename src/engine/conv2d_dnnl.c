/*-------------------------------------------------------------------------
 *
 * conv2d_dnnl.c
 *	  2-D convolution (Keras Conv2D, NHWC) through oneDNN (dl_backend.h
 *	  says when).
 *
 * The engine's tensors stay as they are: activations NHWC ("acdb" in
 * oneDNN's logical N,C,H,W order), the kernel in Keras layout
 * (KH,KW,C,OC), "hwio".  oneDNN's fast convolutions want the kernel in a
 * blocked layout of their own, so each call reorders the kernel (18k
 * floats for the bench CNN's second layer: microseconds) into a scratch
 * buffer and, for the weight gradient, reorders back and adds.  Per call:
 *	 forward:  y = act(conv(x, K) + b), ReLU fused as a post-op
 *	 backward: dK += dK', db += db' (backward-weights primitive);
 *	           dx = backward-data (dx NULL: skipped)
 *
 * Primitives are created and destroyed inside each call, so nothing of
 * oneDNN outlives a call but its engine and stream (created once per
 * process) and its own primitive cache (bounded, default 1024 entries):
 * after the first batch a creation is a cache hit of a few microseconds.
 * All scratch memory (reordered kernels, oneDNN's scratchpad, in
 * user-scratchpad mode) comes from the caller's DlScratch, which grows to
 * what a call needs, so that a steady training loop allocates nothing.
 *
 * Signals are blocked while oneDNN runs (backend.c says why), and the
 * caller's allocator must not run then (an ERROR from palloc would leave
 * them blocked).  So a call runs in attempts: an attempt, in the signal
 * window, creates the primitives and lays out every buffer it needs in
 * the scratch before it executes anything; when the scratch is too small
 * it executes nothing, releases what it created and closes the window,
 * the scratch grows through the allocator, and a second attempt (the
 * same sizes: the same geometry, and primitive creation is a cache hit)
 * runs.  Between two primitive executions the window opens for an
 * instant, so that a pending signal waits for one execution at most.
 *
 * The scratch never grows past its limit (the budget the model's memory
 * estimate counted, dl_conv2d_dnnl_scratch_budget): an attempt that lays
 * out more is refused before anything is written.
 *
 * A geometry oneDNN refuses, or one whose scratch is over the limit,
 * gives DL_ERR_UNSUPPORTED before anything is written: the caller then
 * uses im2col.  Every other failure is an error.
 *
 * Determinism: oneDNN's CPU convolutions are deterministic for a given
 * thread count and instruction set; the thread count is
 * dl_backend_set_threads (default 1).
 *
 * IDENTIFICATION
 *	  src/engine/conv2d_dnnl.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_backend.h"
#include "dl_kernels.h"

#ifdef DL_HAVE_DNNL

#include <oneapi/dnnl/dnnl.h>

/* libgomp: oneDNN's runtime in Debian's build */
extern void omp_set_num_threads(int n);

/* created on first use, kept for the life of the process */
static dnnl_engine_t dnnl_eng = NULL;
static dnnl_stream_t dnnl_strm = NULL;

#define CALL_MAX 16

/* Everything one attempt creates, released by call_release. */
typedef struct DnnlCall
{
	DlScratch  *scratch;		/* the caller's, reused from call to call */
	size_t		used;			/* bytes of it this attempt has laid out */
	bool		short_scratch;	/* a buffer did not fit: execute nothing */
	DlSignalMask *window;		/* the signal window the attempt runs in */
	DlError    *err;
	dnnl_primitive_desc_t pd[CALL_MAX];
	int			n_pd;
	dnnl_primitive_t prim[CALL_MAX];
	int			n_prim;
	dnnl_memory_t mem[CALL_MAX];
	int			n_mem;
} DnnlCall;

/* Destroy what the attempt created (oneDNN objects only: in the window). */
static void
call_release(DnnlCall *c)
{
	for (int i = 0; i < c->n_mem; i++)
		dnnl_memory_destroy(c->mem[i]);
	for (int i = 0; i < c->n_prim; i++)
		dnnl_primitive_destroy(c->prim[i]);
	for (int i = 0; i < c->n_pd; i++)
		dnnl_primitive_desc_destroy(c->pd[i]);
	c->n_mem = c->n_prim = c->n_pd = 0;
}

/*
 * Grow the scratch to what the last attempt laid out (c->used), through
 * the allocator: outside the signal window only.
 */
static DlStatus
call_grow_scratch(DnnlCall *c)
{
	DlScratch  *scratch = c->scratch;
	DlError		e;
	size_t		need;
	void	   *p;

	/* nothing has been written: over the budget, the caller uses im2col */
	if (c->used > scratch->limit)
		return dl_error_set(c->err, DL_ERR_UNSUPPORTED,
							"oneDNN wants %zu bytes of scratch for this convolution, more than its budget of %zu",
							c->used, scratch->limit);
	/* + 64: room to align the start (call_buf checked the sum) */
	need = c->used + 64;
	if (scratch->p != NULL && need <= scratch->cap)
		return DL_OK;
	dl_free(scratch->alloc, scratch->p);
	scratch->p = NULL;
	scratch->cap = 0;
	p = dl_alloc(scratch->alloc, need, &e);
	if (p == NULL)
		return dl_error_set(c->err, e.code, "%s", e.msg);
	scratch->p = p;
	scratch->cap = need;
	return DL_OK;
}

/*
 * The status for oneDNN's failure s in what.  While creating primitives
 * (creating true) a refusal of the geometry is DL_ERR_UNSUPPORTED, which
 * sends the caller to im2col.
 */
static DlStatus
call_fail(DnnlCall *c, dnnl_status_t s, const char *what, bool creating)
{
	if (s == dnnl_out_of_memory)
		return dl_error_set(c->err, DL_ERR_NO_MEMORY, "oneDNN ran out of memory in %s", what);
	if (creating && (s == dnnl_unimplemented || s == dnnl_invalid_arguments))
		return dl_error_set(c->err, DL_ERR_UNSUPPORTED, "oneDNN has no %s for this convolution",
							what);
	return dl_error_set(c->err, DL_ERR_INTERNAL, "oneDNN %s failed with status %d", what,
						(int) s);
}

static DlStatus
engine_ready(DnnlCall *c)
{
	dnnl_status_t s;

	if (dnnl_eng == NULL)
	{
		s = dnnl_engine_create(&dnnl_eng, dnnl_cpu, 0);
		if (s != dnnl_success)
		{
			dnnl_eng = NULL;
			return call_fail(c, s, "engine creation", false);
		}
	}
	if (dnnl_strm == NULL)
	{
		s = dnnl_stream_create(&dnnl_strm, dnnl_eng, dnnl_stream_default_flags);
		if (s != dnnl_success)
		{
			dnnl_strm = NULL;
			return call_fail(c, s, "stream creation", false);
		}
	}
	return DL_OK;
}

/*
 * A buffer of size bytes (64-byte aligned): the next piece of the
 * caller's scratch.  When the scratch is too small, *out is NULL and the
 * attempt is marked short: it may go on creating (memories over NULL
 * have no data yet) to count what it needs, but executes nothing.
 */
static DlStatus
call_buf(DnnlCall *c, size_t size, void **out)
{
	size_t		start,
				end;

	*out = NULL;
	if (size == 0)
		return DL_OK;
	/* room for aligning the scratch's start too */
	if (!dl_size_add(c->used, 63, &start) || !dl_size_add(start & ~(size_t) 63, size, &end) ||
		!dl_size_add(end, 64, &end))
		return dl_error_set(c->err, DL_ERR_LIMIT, "oneDNN scratch of %zu bytes is too large", size);
	start &= ~(size_t) 63;
	c->used = end - 64;
	if (c->scratch->p != NULL && end <= c->scratch->cap)
	{
		uintptr_t	base = ((uintptr_t) c->scratch->p + 63) & ~(uintptr_t) 63;

		*out = (void *) (base + start);
		return DL_OK;
	}
	c->short_scratch = true;
	return DL_OK;
}

/* A memory object over ptr (NULL: no data yet), freed with c. */
static DlStatus
call_mem(DnnlCall *c, const dnnl_memory_desc_t *md, const void *ptr, dnnl_memory_t *out)
{
	dnnl_status_t s;

	if (c->n_mem == CALL_MAX)
		return dl_error_set(c->err, DL_ERR_INTERNAL, "too many oneDNN memories in one call");
	s = dnnl_memory_create(out, md, dnnl_eng, (void *) ptr);
	if (s != dnnl_success)
		return call_fail(c, s, "memory creation", false);
	c->mem[c->n_mem++] = *out;
	return DL_OK;
}

/* Keep pd for release with c (pd may be NULL: nothing to keep). */
static DlStatus
call_keep_pd(DnnlCall *c, dnnl_primitive_desc_t pd)
{
	if (c->n_pd == CALL_MAX)
	{
		dnnl_primitive_desc_destroy(pd);
		return dl_error_set(c->err, DL_ERR_INTERNAL, "too many oneDNN descriptors in one call");
	}
	c->pd[c->n_pd++] = pd;
	return DL_OK;
}

static DlStatus
call_prim(DnnlCall *c, const_dnnl_primitive_desc_t pd, const char *what, dnnl_primitive_t *out)
{
	dnnl_status_t s;

	if (c->n_prim == CALL_MAX)
		return dl_error_set(c->err, DL_ERR_INTERNAL, "too many oneDNN primitives in one call");
	s = dnnl_primitive_create(out, pd);
	if (s != dnnl_success)
		return call_fail(c, s, what, true);
	c->prim[c->n_prim++] = *out;
	return DL_OK;
}

/* The most arguments one execution takes (call_exec). */
#define EXEC_MAX_ARGS 8

/*
 * Execute p with args, those whose memory is NULL (an optional bias or
 * scratchpad not there) left out, to its end.  Never in a short attempt (callers check first;
 * this is the guard).  Afterwards the signal window opens and closes
 * again: a signal that arrived during the execution is handled now, not
 * after the next one (nothing of oneDNN runs in between; the objects the
 * attempt holds are as safe as the engine and stream between calls).
 */
static DlStatus
call_exec(DnnlCall *c, dnnl_primitive_t p, int nargs, const dnnl_exec_arg_t *args,
		  const char *what)
{
	dnnl_exec_arg_t given[EXEC_MAX_ARGS];
	int			n = 0;
	dnnl_status_t s;

	if (c->short_scratch)
		return dl_error_set(c->err, DL_ERR_INTERNAL, "oneDNN %s without its scratch", what);
	if (nargs > EXEC_MAX_ARGS)
		return dl_error_set(c->err, DL_ERR_INTERNAL, "oneDNN %s with %d arguments", what, nargs);
	for (int i = 0; i < nargs; i++)
		if (args[i].memory != NULL)
			given[n++] = args[i];
	omp_set_num_threads(dl_backend_threads());
	s = dnnl_primitive_execute(p, dnnl_strm, n, given);
	if (s == dnnl_success)
		s = dnnl_stream_wait(dnnl_strm);
	dl_backend_restore_signals(c->window);
	dl_backend_block_signals(c->window);
	if (s != dnnl_success)
		return call_fail(c, s, what, false);
	return DL_OK;
}

/* The scratchpad pd asks for, from the scratch; *mem NULL when none. */
static DlStatus
call_scratchpad(DnnlCall *c, const_dnnl_primitive_desc_t pd, dnnl_memory_t *mem)
{
	const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
	size_t		size = md != NULL ? dnnl_memory_desc_get_size(md) : 0;
	void	   *p;
	DlStatus	st;

	*mem = NULL;
	if (size == 0)
		return DL_OK;
	if ((st = call_buf(c, size, &p)) != DL_OK)
		return st;
	return call_mem(c, md, p, mem);
}

/* A copy from one memory into another of another layout, to run later. */
typedef struct DnnlReorder
{
	dnnl_primitive_t prim;		/* NULL: nothing to copy */
	dnnl_memory_t from;
	dnnl_memory_t to;
} DnnlReorder;

/*
 * Create the reorder from (layout from_md) -> to (layout to_md).  Called
 * before anything is executed, so a refusal is DL_ERR_UNSUPPORTED.
 */
static DlStatus
call_reorder(DnnlCall *c, const dnnl_memory_desc_t *from_md, dnnl_memory_t from,
			 const dnnl_memory_desc_t *to_md, dnnl_memory_t to, DnnlReorder *r)
{
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_status_t s;
	DlStatus	st;

	r->prim = NULL;
	r->from = from;
	r->to = to;
	s = dnnl_reorder_primitive_desc_create(&rpd, from_md, dnnl_eng, to_md, dnnl_eng, NULL);
	if (s != dnnl_success)
		return call_fail(c, s, "reorder", true);
	if ((st = call_keep_pd(c, rpd)) != DL_OK)
		return st;
	return call_prim(c, rpd, "reorder", &r->prim);
}

static DlStatus
call_run_reorder(DnnlCall *c, const DnnlReorder *r)
{
	dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, r->from}, {DNNL_ARG_TO, r->to}};

	if (r->prim == NULL)
		return DL_OK;
	return call_exec(c, r->prim, 2, args, "reorder");
}

/*
 * *out = a memory in the layout want for the plain tensor (md plain, data
 * src): src itself when the layouts agree, else a buffer from the scratch
 * that the reorder *r fills (call_run_reorder).
 */
static DlStatus
call_as_layout(DnnlCall *c, const dnnl_memory_desc_t *plain, const float *src,
			   const dnnl_memory_desc_t *want, dnnl_memory_t *out, DnnlReorder *r)
{
	dnnl_memory_t from;
	void	   *p;
	DlStatus	st;

	r->prim = NULL;
	if (dnnl_memory_desc_equal(plain, want))
		return call_mem(c, plain, src, out);
	if ((st = call_buf(c, dnnl_memory_desc_get_size(want), &p)) != DL_OK ||
		(st = call_mem(c, want, p, out)) != DL_OK ||
		(st = call_mem(c, plain, src, &from)) != DL_OK)
		return st;
	return call_reorder(c, plain, from, want, *out, r);
}

/* The descriptors of one convolution geometry. */
typedef struct DnnlConvMds
{
	dnnl_memory_desc_t src;		/* (B,C,H,W) logical, NHWC in memory */
	dnnl_memory_desc_t dst;		/* (B,OC,OH,OW), NHWC */
	dnnl_memory_desc_t wei;		/* (OC,C,KH,KW), Keras (KH,KW,C,OC) */
	dnnl_memory_desc_t wei_any; /* the same dims, layout of oneDNN's choice */
	dnnl_memory_desc_t bias;	/* (OC) */
	dnnl_dims_t strides;
	dnnl_dims_t dilates;		/* oneDNN counts the gaps: D - 1 */
	dnnl_dims_t pad_l;
	dnnl_dims_t pad_r;
} DnnlConvMds;

static DlStatus
conv_mds(DnnlCall *c, const DlConvGeom *g, DnnlConvMds *d)
{
	dnnl_dims_t src = {g->B, g->C, g->H, g->W};
	dnnl_dims_t dst = {g->B, g->OC, g->OH, g->OW};
	dnnl_dims_t wei = {g->OC, g->C, g->KH, g->KW};
	dnnl_dims_t bias = {g->OC};
	/*
	 * right/bottom padding, from the dilated kernel's extent; a valid
	 * convolution's unused rows give < 0
	 */
	int64_t		pr_h = (g->OH - 1) * g->SH + (g->KH - 1) * g->DH + 1 - g->H - g->pad_top;
	int64_t		pr_w = (g->OW - 1) * g->SW + (g->KW - 1) * g->DW + 1 - g->W - g->pad_left;
	dnnl_status_t s = dnnl_success;

	if (g->B <= 0 || g->C <= 0 || g->OH <= 0 || g->OW <= 0 || g->OC <= 0)
		return dl_error_set(c->err, DL_ERR_UNSUPPORTED, "empty convolution");
	d->strides[0] = g->SH;
	d->strides[1] = g->SW;
	d->dilates[0] = g->DH - 1;
	d->dilates[1] = g->DW - 1;
	d->pad_l[0] = g->pad_top;
	d->pad_l[1] = g->pad_left;
	d->pad_r[0] = pr_h > 0 ? pr_h : 0;
	d->pad_r[1] = pr_w > 0 ? pr_w : 0;
	if (s == dnnl_success)
		s = dnnl_memory_desc_init_by_tag(&d->src, 4, src, dnnl_f32, dnnl_nhwc);
	if (s == dnnl_success)
		s = dnnl_memory_desc_init_by_tag(&d->dst, 4, dst, dnnl_f32, dnnl_nhwc);
	if (s == dnnl_success)
		s = dnnl_memory_desc_init_by_tag(&d->wei, 4, wei, dnnl_f32, dnnl_hwio);
	if (s == dnnl_success)
		s = dnnl_memory_desc_init_by_tag(&d->wei_any, 4, wei, dnnl_f32, dnnl_format_tag_any);
	if (s == dnnl_success)
		s = dnnl_memory_desc_init_by_tag(&d->bias, 1, bias, dnnl_f32, dnnl_x);
	if (s != dnnl_success)
		return call_fail(c, s, "memory descriptors", true);
	return DL_OK;
}

/* An attribute with user scratchpad (and a ReLU post-op when relu). */
static DlStatus
conv_attr(DnnlCall *c, bool relu, dnnl_primitive_attr_t *attr)
{
	dnnl_post_ops_t po = NULL;
	dnnl_status_t s;

	s = dnnl_primitive_attr_create(attr);
	if (s != dnnl_success)
		return call_fail(c, s, "attribute", false);
	s = dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
	if (s == dnnl_success && relu)
	{
		s = dnnl_post_ops_create(&po);
		if (s == dnnl_success)
			s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
		if (s == dnnl_success)
			s = dnnl_primitive_attr_set_post_ops(*attr, po);
		if (po != NULL)
			dnnl_post_ops_destroy(po);
	}
	if (s != dnnl_success)
	{
		dnnl_primitive_attr_destroy(*attr);
		*attr = NULL;
		return call_fail(c, s, "attribute", false);
	}
	return DL_OK;
}

/*
 * The primitive descriptor of op_desc (a convolution descriptor; hint:
 * the forward one, for the backward passes) with user scratchpad and a
 * fused ReLU when relu, kept in c; and, when prim is not NULL, its
 * primitive.  A refusal is DL_ERR_UNSUPPORTED (what names the pass).
 */
static DlStatus
call_conv_prim(DnnlCall *c, const_dnnl_op_desc_t op_desc, bool relu,
			   const_dnnl_primitive_desc_t hint, const char *what,
			   dnnl_primitive_desc_t *pd, dnnl_primitive_t *prim)
{
	dnnl_primitive_attr_t attr = NULL;
	dnnl_status_t s;
	DlStatus	st;

	if ((st = conv_attr(c, relu, &attr)) != DL_OK)
		return st;
	s = dnnl_primitive_desc_create(pd, op_desc, attr, dnnl_eng, hint);
	dnnl_primitive_attr_destroy(attr);
	if (s != dnnl_success)
		return call_fail(c, s, what, true);
	if ((st = call_keep_pd(c, *pd)) != DL_OK)
		return st;
	return prim != NULL ? call_prim(c, *pd, what, prim) : DL_OK;
}

/* The forward primitive descriptor (kept in c), and its primitive if prim. */
static DlStatus
conv_forward_pd(DnnlCall *c, const DnnlConvMds *d, bool has_bias, bool relu,
				dnnl_primitive_desc_t *pd, dnnl_primitive_t *prim)
{
	dnnl_convolution_desc_t desc;
	dnnl_status_t s;

	/* dilates 0 is oneDNN's undilated convolution, the same descriptor */
	s = dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_training,
												   dnnl_convolution_direct, &d->src, &d->wei_any,
												   has_bias ? &d->bias : NULL, &d->dst,
												   d->strides, d->dilates, d->pad_l, d->pad_r);
	if (s != dnnl_success)
		return call_fail(c, s, "forward convolution", true);
	return call_conv_prim(c, &desc, relu, NULL, "forward convolution", pd, prim);
}

/* The arguments of one call, for its attempts. */
typedef struct DnnlConvArgs
{
	float	   *y;				/* forward */
	float	   *dx;				/* backward: dx, dK, db */
	float	   *dK;
	float	   *db;
	const float *dy;
	const float *x;
	const float *K;
	const float *b;				/* forward bias */
	DlActivation act;
	const DlConvGeom *g;
} DnnlConvArgs;

/* A short attempt stops here, before executing anything. */
static DlStatus
call_ready_to_run(DnnlCall *c)
{
	if (c->short_scratch)
		return dl_error_set(c->err, DL_ERR_NO_MEMORY, "oneDNN scratch too small");
	return DL_OK;
}

static DlStatus
conv_forward(DnnlCall *c, const DnnlConvArgs *a)
{
	const DlConvGeom *g = a->g;
	DnnlConvMds d;
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t prim;
	DnnlReorder wre;
	dnnl_memory_t msrc,
				mwei,
				mbias = NULL,
				mdst,
				mpad;
	bool		relu = a->act == DL_ACT_RELU;
	DlStatus	st;

	if ((st = engine_ready(c)) != DL_OK ||
		(st = conv_mds(c, g, &d)) != DL_OK ||
		(st = conv_forward_pd(c, &d, a->b != NULL, relu, &pd, &prim)) != DL_OK ||
		(st = call_as_layout(c, &d.wei, a->K,
							 dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
							 &mwei, &wre)) != DL_OK ||
		(st = call_mem(c, &d.src, a->x, &msrc)) != DL_OK ||
		(st = call_mem(c, &d.dst, a->y, &mdst)) != DL_OK ||
		(a->b != NULL && (st = call_mem(c, &d.bias, a->b, &mbias)) != DL_OK) ||
		(st = call_scratchpad(c, pd, &mpad)) != DL_OK ||
		(st = call_ready_to_run(c)) != DL_OK)
		return st;

	/* from here on a failure is an error, not a refusal */
	if ((st = call_run_reorder(c, &wre)) != DL_OK)
		return st;
	{
		dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, msrc}, {DNNL_ARG_WEIGHTS, mwei}, {DNNL_ARG_DST, mdst},
		{DNNL_ARG_BIAS, mbias}, {DNNL_ARG_SCRATCHPAD, mpad}};

		if ((st = call_exec(c, prim, 5, args, "forward convolution")) != DL_OK)
			return st;
	}
	if (!relu && a->act != DL_ACT_LINEAR)
		dl_bias_act_forward(a->y, NULL, a->act, g->B * g->OH * g->OW, g->OC);
	return DL_OK;
}

static DlStatus
conv_backward(DnnlCall *c, const DnnlConvArgs *a)
{
	const DlConvGeom *g = a->g;
	float	   *dx = a->dx,
			   *dK = a->dK,
			   *db = a->db;
	DnnlConvMds d;
	dnnl_primitive_desc_t fpd,
				wpd = NULL,
				dpd = NULL;
	dnnl_primitive_t wprim = NULL,
				dprim = NULL;
	dnnl_status_t s;
	DlStatus	st;
	dnnl_memory_t mdy,
				msrc;

	/* the weight gradient: diff weights in oneDNN's layout, back to Keras */
	const dnnl_memory_desc_t *dwmd = NULL;
	void	   *dw_buf = NULL,
			   *db_buf = NULL,
			   *plain_buf = NULL;
	dnnl_memory_t mdw = NULL,
				mdb = NULL,
				mwpad = NULL;
	DnnlReorder dwre = {NULL, NULL, NULL};

	/* the input gradient */
	dnnl_memory_t mwei = NULL,
				mdx = NULL,
				mdpad = NULL;
	DnnlReorder wre = {NULL, NULL, NULL};

	if ((st = engine_ready(c)) != DL_OK ||
		(st = conv_mds(c, g, &d)) != DL_OK ||
		(st = conv_forward_pd(c, &d, db != NULL, false, &fpd, NULL)) != DL_OK)
		return st;

	/*
	 * Create every primitive and lay out every buffer first, so that a
	 * refusal writes nothing and a short attempt executes nothing.
	 */
	if (dK != NULL)
	{
		dnnl_convolution_desc_t desc;

		s = dnnl_dilated_convolution_backward_weights_desc_init(&desc, dnnl_convolution_direct,
																&d.src, &d.wei_any,
																db != NULL ? &d.bias : NULL,
																&d.dst, d.strides, d.dilates,
																d.pad_l, d.pad_r);
		if (s != dnnl_success)
			return call_fail(c, s, "weight gradient", true);
		if ((st = call_conv_prim(c, &desc, false, fpd, "weight gradient", &wpd, &wprim)) != DL_OK)
			return st;
	}
	if (dx != NULL)
	{
		dnnl_convolution_desc_t desc;

		s = dnnl_dilated_convolution_backward_data_desc_init(&desc, dnnl_convolution_direct,
															 &d.src, &d.wei_any, &d.dst,
															 d.strides, d.dilates, d.pad_l,
															 d.pad_r);
		if (s != dnnl_success)
			return call_fail(c, s, "input gradient", true);
		if ((st = call_conv_prim(c, &desc, false, fpd, "input gradient", &dpd, &dprim)) != DL_OK)
			return st;
	}
	if ((st = call_mem(c, &d.dst, a->dy, &mdy)) != DL_OK ||
		(st = call_mem(c, &d.src, a->x, &msrc)) != DL_OK)
		return st;
	if (wprim != NULL)
	{
		dwmd = dnnl_primitive_desc_query_md(wpd, dnnl_query_diff_weights_md, 0);
		if ((st = call_buf(c, dnnl_memory_desc_get_size(dwmd), &dw_buf)) != DL_OK ||
			(st = call_mem(c, dwmd, dw_buf, &mdw)) != DL_OK ||
			(db != NULL && (st = call_buf(c, (size_t) g->OC * sizeof(float), &db_buf)) != DL_OK) ||
			(db != NULL && (st = call_mem(c, &d.bias, db_buf, &mdb)) != DL_OK) ||
			(st = call_scratchpad(c, wpd, &mwpad)) != DL_OK)
			return st;
		if (!dnnl_memory_desc_equal(dwmd, &d.wei))
		{
			dnnl_memory_t mplain;
			size_t		nk = (size_t) (g->KH * g->KW * g->C * g->OC);

			if ((st = call_buf(c, nk * sizeof(float), &plain_buf)) != DL_OK ||
				(st = call_mem(c, &d.wei, plain_buf, &mplain)) != DL_OK ||
				(st = call_reorder(c, dwmd, mdw, &d.wei, mplain, &dwre)) != DL_OK)
				return st;
		}
	}
	if (dprim != NULL)
	{
		if ((st = call_as_layout(c, &d.wei, a->K,
								 dnnl_primitive_desc_query_md(dpd, dnnl_query_weights_md, 0),
								 &mwei, &wre)) != DL_OK ||
			(st = call_mem(c, &d.src, dx, &mdx)) != DL_OK ||
			(st = call_scratchpad(c, dpd, &mdpad)) != DL_OK)
			return st;
	}
	if ((st = call_ready_to_run(c)) != DL_OK)
		return st;

	/* from here on a failure is an error, not a refusal */
	if (wprim != NULL)
	{
		size_t		nk = (size_t) (g->KH * g->KW * g->C * g->OC);
		dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, msrc}, {DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_DIFF_WEIGHTS, mdw},
		{DNNL_ARG_DIFF_BIAS, mdb}, {DNNL_ARG_SCRATCHPAD, mwpad}};
		const float *plain = dwre.prim != NULL ? plain_buf : dw_buf;

		if ((st = call_exec(c, wprim, 5, args, "weight gradient")) != DL_OK ||
			(st = call_run_reorder(c, &dwre)) != DL_OK)
			return st;
		/* dK += dK', db += db' */
		for (size_t i = 0; i < nk; i++)
			dK[i] += plain[i];
		if (db != NULL)
		{
			const float *dbp = db_buf;

			for (int64_t j = 0; j < g->OC; j++)
				db[j] += dbp[j];
		}
	}
	else if (db != NULL)
	{
		/* bias gradient alone (a frozen kernel cannot happen today) */
		for (int64_t r = 0; r < g->B * g->OH * g->OW; r++)
			for (int64_t j = 0; j < g->OC; j++)
				db[j] += a->dy[r * g->OC + j];
	}
	if (dprim != NULL)
	{
		dnnl_exec_arg_t args[] = {{DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_WEIGHTS, mwei}, {DNNL_ARG_DIFF_SRC, mdx},
		{DNNL_ARG_SCRATCHPAD, mdpad}};

		if ((st = call_run_reorder(c, &wre)) != DL_OK ||
			(st = call_exec(c, dprim, 4, args, "input gradient")) != DL_OK)
			return st;
	}
	return DL_OK;
}

/*
 * Run pass in attempts (the file header says why): each in the signal
 * window, the scratch grown between them, outside it.
 */
static DlStatus
call_run(DlStatus (*pass) (DnnlCall *c, const DnnlConvArgs *a), const DnnlConvArgs *a,
		 DlScratch *scratch, DlError *err)
{
	for (int attempt = 0;; attempt++)
	{
		DnnlCall	c = {0};
		DlSignalMask mask;
		DlStatus	st;

		c.scratch = scratch;
		c.err = err;
		c.window = &mask;
		dl_backend_block_signals(&mask);
		/* before creating primitives: their scratchpads are sized for it */
		omp_set_num_threads(dl_backend_threads());
		st = pass(&c, a);
		call_release(&c);
		dl_backend_restore_signals(&mask);
		if (!c.short_scratch)
			return st;
		/* nothing was executed; the window is closed: grow the scratch */
		if (attempt > 0)
			return dl_error_set(err, DL_ERR_INTERNAL,
								"oneDNN needed more scratch memory in a second attempt");
		if ((st = call_grow_scratch(&c)) != DL_OK)
			return st;
	}
}

DlStatus
dl_conv2d_dnnl_forward(float *y, const float *x, const float *K, const float *b,
					   DlActivation act, const DlConvGeom *g, DlScratch *scratch,
					   DlError *err)
{
	DnnlConvArgs a = {.y = y, .x = x, .K = K, .b = b, .act = act, .g = g};

	if (!dl_backend_uses_onednn())
		return dl_error_set(err, DL_ERR_UNSUPPORTED, "oneDNN convolutions are switched off");
	return call_run(conv_forward, &a, scratch, err);
}

DlStatus
dl_conv2d_dnnl_backward(float *dx, float *dK, float *db, const float *dy, const float *x,
						const float *K, const DlConvGeom *g, DlScratch *scratch,
						DlError *err)
{
	DnnlConvArgs a = {.dx = dx, .dK = dK, .db = db, .dy = dy, .x = x, .K = K, .g = g};

	if (!dl_backend_uses_onednn())
		return dl_error_set(err, DL_ERR_UNSUPPORTED, "oneDNN convolutions are switched off");
	if (dx == NULL && dK == NULL && db == NULL)
		return DL_OK;
	return call_run(conv_backward, &a, scratch, err);
}

/* n rounded up to a multiple of 16, the widest channel block of oneDNN's f32 layouts */
static double
pad16(int64_t n)
{
	return ceil((double) n / 16.0) * 16.0;
}

double
dl_conv2d_dnnl_scratch_budget(const DlConvGeom *g, int threads)
{
	double		t = threads < 1 ? 1.0 : (double) threads;
	double		kernel = (double) g->KH * (double) g->KW * pad16(g->C) * pad16(g->OC) * sizeof(float);
	double		bias = pad16(g->OC) * sizeof(float);

	return (4.0 + t) * (kernel + bias) + (1.0 + t) * 65536.0;
}

#else							/* !DL_HAVE_DNNL */

double
dl_conv2d_dnnl_scratch_budget(const DlConvGeom *g, int threads)
{
	return 0.0;
}

DlStatus
dl_conv2d_dnnl_forward(float *y, const float *x, const float *K, const float *b,
					   DlActivation act, const DlConvGeom *g, DlScratch *scratch,
					   DlError *err)
{
	return dl_error_set(err, DL_ERR_UNSUPPORTED, "built without oneDNN");
}

DlStatus
dl_conv2d_dnnl_backward(float *dx, float *dK, float *db, const float *dy, const float *x,
						const float *K, const DlConvGeom *g, DlScratch *scratch,
						DlError *err)
{
	return dl_error_set(err, DL_ERR_UNSUPPORTED, "built without oneDNN");
}

#endif							/* DL_HAVE_DNNL */
