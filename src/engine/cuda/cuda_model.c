/*-------------------------------------------------------------------------
 *
 * cuda_model.c
 *	  The CUDA backend's model: device state, workspace, forward/backward,
 *	  the training loop, evaluation and the device queries.
 *
 * Device memory of a DlCudaModel, three cudaMalloc blocks:
 *	 state      params (P), grads (P), slots (n_slots * P): the host
 *	            block's layout, so load/store are single copies
 *	 workspace  for batches of up to ws_cap samples: every layer's output
 *	            (Flatten, linear Activation and rate-0 Dropout alias their
 *	            input), MaxPooling2D argmax (int32), Dropout masks, two
 *	            gradient buffers of the largest layer, two im2col buffers
 *	            of the largest convolution, the gathered batch x and y, a
 *	            vector of ones (bias gradients by gemv), per-sample loss
 *	            and accuracy (double), the epoch's sums and a flag
 *	 data       x (N, input size), y (N, y width), perm (N)
 * dl_cuda_model_bytes computes the total: the per-segment bound.
 *
 * One training step mirrors train.c: zero grads, forward (training),
 * loss (fused softmax-crossentropy gradient or MSE), backward,
 * regularization, optimizer step.  Differences from the CPU, documented
 * in docs/gpu.md: reductions run in another order (sgemm, sums), so
 * weights agree within a tolerance, not bit for bit; Dropout masks come
 * from a counter-based generator keyed by one draw of the model rng per
 * layer and batch; the divergence check is read once per epoch (a device
 * flag stops all later updates at the first non-finite loss or weight).
 *
 * Host pointers given to dl_cuda_model_set_data are borrowed until the
 * next set_data or free (evaluation scores outputs against the host y).
 *
 * IDENTIFICATION
 *	  src/engine/cuda/cuda_model.c
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <cublas_v2.h>

#include "madlib_dl/dl_cuda.h"
#include "dl_kernels.h"
#include "model_impl.h"
#include "cuda_ops.h"

/* Sub-buffers start on 256-byte boundaries. */
#define CU_ALIGN 256

typedef struct DlCuLayer
{
	float	   *buf;			/* (ws_cap, out size) or NULL (aliasing layer) */
	const float *out;			/* (B, out size) of the last forward */
	int32_t    *argmax;			/* (ws_cap, out size), MaxPooling2D */
	float	   *mask;			/* (ws_cap, size), Dropout with rate > 0 */
} DlCuLayer;

struct DlCudaModel
{
	const DlModelSpec *spec;	/* borrowed */
	DlAllocator alloc;
	int			device;
	DlOptimConfig optim;
	int			n_slots;
	size_t		P;
	int64_t		iterations;		/* optimizer updates applied */
	double		m_schedule;
	DlRng		rng;
	DlParamRange *ranges;		/* (n_ranges) */
	int			n_ranges;
	int			first_trainable;
	cudaStream_t stream;
	cublasHandle_t blas;
	bool		tf32;
	int64_t		ones_n;			/* length of ones */

	float	   *d_state;		/* params, grads, slots */
	float	   *d_params;		/* (P) */
	float	   *d_grads;		/* (P) */
	float	   *d_slots;		/* (n_slots, P) */

	DlCuLayer  *lw;				/* (n_layers) */
	int64_t		ws_cap;
	void	   *d_ws;
	float	   *grad_a;			/* (ws_cap, largest layer size) */
	float	   *grad_b;
	float	   *col;			/* im2col, largest convolution */
	float	   *dcol;
	float	   *batch_x;		/* (ws_cap, input size) */
	float	   *batch_y;		/* (ws_cap, y width <= K) */
	float	   *ones;			/* (largest activation rows) */
	double	   *loss;			/* (ws_cap) */
	double	   *correct;		/* (ws_cap) */
	double	   *acc;			/* (2): loss sum, metric sum */
	int		   *flag;			/* (1): 1 loss, 2 weight not finite */

	void	   *d_data;
	float	   *d_x;			/* (N, input size) */
	float	   *d_y;			/* (N, y_width) */
	int64_t    *d_perm;			/* (N) */
	const float *h_x;			/* borrowed host copies */
	const float *h_y;
	int64_t		N;
	int64_t		y_width;
	int64_t    *h_perm;			/* (N), host */
	float	   *h_out;			/* (ws_cap, K), host, evaluation */
	int64_t		h_out_cap;
};

/* ---------------------------------------------------------------------
 * Errors
 * --------------------------------------------------------------------- */

static DlStatus
cuda_fail(DlError *err, cudaError_t ce, const char *what)
{
	cudaGetLastError();			/* clear the sticky-free error state */
	if (ce == cudaErrorMemoryAllocation)
	{
		dl_error_set(err, DL_ERR_NO_MEMORY, "out of GPU memory: %s", what);
		return dl_error_hint(err, "Use a smaller batch_size, fewer segments per GPU, or a smaller model.");
	}
	if (ce == cudaErrorNoDevice || ce == cudaErrorInsufficientDriver)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "no usable GPU: %s", cudaGetErrorString(ce));
		return dl_error_hint(err, "Train with use_gpus => false, or check the NVIDIA driver with nvidia-smi.");
	}
	return dl_error_set(err, DL_ERR_INTERNAL, "cuda error in %s: %s", what, cudaGetErrorString(ce));
}

static DlStatus
blas_fail(DlError *err, cublasStatus_t bs, const char *what)
{
	if (bs == CUBLAS_STATUS_ALLOC_FAILED)
		return cuda_fail(err, cudaErrorMemoryAllocation, what);
	return dl_error_set(err, DL_ERR_INTERNAL, "cublas error %d in %s", (int) bs, what);
}

#define CU_TRY(call, what) \
	do { cudaError_t ce_ = (call); \
		 if (ce_ != cudaSuccess) return cuda_fail(err, ce_, (what)); } while (0)
#define BLAS_TRY(call, what) \
	do { cublasStatus_t bs_ = (call); \
		 if (bs_ != CUBLAS_STATUS_SUCCESS) return blas_fail(err, bs_, (what)); } while (0)

/* ---------------------------------------------------------------------
 * Devices
 * --------------------------------------------------------------------- */

bool
dl_cuda_built(void)
{
	return true;
}

int
dl_cuda_device_count(void)
{
	int			n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess)
	{
		cudaGetLastError();
		return 0;
	}
	return n;
}

DlStatus
dl_cuda_device_info(int device, DlCudaDeviceInfo *info, DlError *err)
{
	struct cudaDeviceProp p;
	int			n = dl_cuda_device_count();

	memset(info, 0, sizeof(*info));
	if (device < 0 || device >= n)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "GPU %d does not exist (%d GPUs)", device, n);
		return dl_error_hint(err, "Pass a device number below the count of dl_cuda_device_count().");
	}
	CU_TRY(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
	{
		size_t		len = strnlen(p.name, sizeof(p.name));

		if (len >= sizeof(info->name))
			len = sizeof(info->name) - 1;
		memcpy(info->name, p.name, len);
	}
	info->total_mem = p.totalGlobalMem;
	info->cc_major = p.major;
	info->cc_minor = p.minor;
	info->pci_domain = p.pciDomainID;
	info->pci_bus = p.pciBusID;
	info->pci_device = p.pciDeviceID;
	memcpy(info->uuid, p.uuid.bytes, sizeof(info->uuid));
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Create and free
 * --------------------------------------------------------------------- */

static DlStatus
unsupported(DlError *err, const char *what, const char *name)
{
	dl_error_set(err, DL_ERR_UNSUPPORTED, "%s \"%s\" is not supported on the GPU", what, name);
	return dl_error_hint(err, "Train this model with use_gpus => false, or see docs/gpu.md for what the GPU backend supports.");
}

static DlStatus
check_supported(const DlModelSpec *spec, const DlOptimConfig *o, DlError *err)
{
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];

		if (l->kind == DL_LAYER_BATCHNORM)
			return unsupported(err, "layer", l->name[0] ? l->name : dl_layer_kind_name(l->kind));
		if ((l->kind == DL_LAYER_DENSE && l->in_shape.rank != 1) ||
			((l->kind == DL_LAYER_ACTIVATION || l->kind == DL_LAYER_DENSE ||
			  l->kind == DL_LAYER_CONV2D) && l->activation == DL_ACT_SOFTMAX &&
			 l->out_shape.rank != 1))
			return unsupported(err, "layer shape of", l->name);
	}
	if (o->kind != DL_OPTIM_SGD && o->kind != DL_OPTIM_ADAM)
		return unsupported(err, "optimizer", dl_optim_kind_name(o->kind));
	if (o->clipnorm > 0.0)
		return unsupported(err, "optimizer option", "clipnorm");
	return DL_OK;
}

DlStatus
dl_cuda_model_create(const DlModelSpec *spec, const DlOptimConfig *optim, int device,
					 const DlAllocator *alloc, DlCudaModel **out, DlError *err)
{
	DlCudaModel *cm;
	DlStatus	st;
	size_t		n_floats;
	int			n = dl_cuda_device_count();

	*out = NULL;
	if (optim == NULL)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "a GPU model needs an optimizer");
	if (spec->n_layers < 1 || spec->output_shape.rank < 1)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "model spec is not finalized");
	if ((st = dl_optim_config_validate(optim, err)) != DL_OK ||
		(st = check_supported(spec, optim, err)) != DL_OK)
		return st;
	if (n == 0)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "no GPU is available on this host");
		return dl_error_hint(err, "Train with use_gpus => false, or run on a host with an NVIDIA GPU and driver.");
	}
	if (device < 0 || device >= n)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "GPU %d does not exist (%d GPUs)", device, n);

	cm = dl_alloc(alloc, sizeof(DlCudaModel), err);
	if (cm == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	cm->spec = spec;
	cm->alloc = *alloc;
	cm->device = device;
	cm->optim = *optim;
	cm->n_slots = dl_optim_n_slots(optim);
	cm->P = spec->n_params;
	cm->m_schedule = 1.0;
	cm->first_trainable = spec->n_layers;
	dl_rng_seed(&cm->rng, 0);

	cm->lw = dl_alloc_array(alloc, (size_t) spec->n_layers, sizeof(DlCuLayer), err);
	cm->ranges = dl_alloc_array(alloc, (size_t) spec->n_layers, sizeof(DlParamRange), err);
	if (cm->lw == NULL || cm->ranges == NULL)
		goto fail;
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];

		if (l->n_trainable == 0)
			continue;
		if (cm->n_ranges == 0)
			cm->first_trainable = i;
		/* adjacent ranges merge: one optimizer launch per run of layers */
		if (cm->n_ranges > 0 && cm->ranges[cm->n_ranges - 1].end == l->param_offset)
		{
			cm->ranges[cm->n_ranges - 1].end = l->param_offset + l->n_trainable;
			continue;
		}
		cm->ranges[cm->n_ranges].begin = l->param_offset;
		cm->ranges[cm->n_ranges].end = l->param_offset + l->n_trainable;
		cm->n_ranges++;
	}

	if (!dl_size_mul(cm->P, (size_t) (2 + cm->n_slots), &n_floats) ||
		!dl_size_mul(n_floats, sizeof(float), &n_floats))
	{
		dl_error_set(err, DL_ERR_LIMIT, "model with %zu parameters is too large", cm->P);
		goto fail;
	}
	{
		cudaError_t ce;
		cublasStatus_t bs;

		if ((ce = cudaSetDevice(device)) != cudaSuccess ||
			(ce = cudaStreamCreateWithFlags(&cm->stream, cudaStreamNonBlocking)) != cudaSuccess)
		{
			cuda_fail(err, ce, "creating the stream");
			goto fail;
		}
		if ((bs = cublasCreate(&cm->blas)) != CUBLAS_STATUS_SUCCESS ||
			(bs = cublasSetStream(cm->blas, cm->stream)) != CUBLAS_STATUS_SUCCESS ||
			(bs = cublasSetMathMode(cm->blas, CUBLAS_DEFAULT_MATH)) != CUBLAS_STATUS_SUCCESS)
		{
			blas_fail(err, bs, "creating the cuBLAS handle");
			goto fail;
		}
		if ((ce = cudaMalloc((void **) &cm->d_state, n_floats > 0 ? n_floats : 1)) != cudaSuccess ||
			(ce = cudaMemsetAsync(cm->d_state, 0, n_floats, cm->stream)) != cudaSuccess ||
			(ce = cudaStreamSynchronize(cm->stream)) != cudaSuccess)
		{
			cuda_fail(err, ce, "model state");
			goto fail;
		}
	}
	cm->d_params = cm->d_state;
	cm->d_grads = cm->d_state + cm->P;
	cm->d_slots = cm->d_state + 2 * cm->P;
	*out = cm;
	return DL_OK;

fail:
	st = err ? err->code : DL_ERR_NO_MEMORY;
	dl_cuda_model_free(cm);
	return st;
}

void
dl_cuda_model_free(DlCudaModel *cm)
{
	DlAllocator a;

	if (cm == NULL)
		return;
	a = cm->alloc;
	cudaSetDevice(cm->device);
	if (cm->stream != NULL)
		cudaStreamSynchronize(cm->stream);
	cudaFree(cm->d_state);
	cudaFree(cm->d_ws);
	cudaFree(cm->d_data);
	if (cm->blas != NULL)
		cublasDestroy(cm->blas);
	if (cm->stream != NULL)
		cudaStreamDestroy(cm->stream);
	cudaGetLastError();
	dl_free(&a, cm->h_perm);
	dl_free(&a, cm->h_out);
	dl_free(&a, cm->lw);
	dl_free(&a, cm->ranges);
	dl_free(&a, cm);
}

void
dl_cuda_model_set_tf32(DlCudaModel *cm, bool on)
{
	cm->tf32 = on;
	cublasSetMathMode(cm->blas, on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
}

/* ---------------------------------------------------------------------
 * Host <-> device state
 * --------------------------------------------------------------------- */

static DlStatus
check_host(const DlCudaModel *cm, const DlModel *host, DlError *err)
{
	if (host->n_params != cm->P || !host->has_optim || host->optim.n_slots != cm->n_slots ||
		host->optim.cfg.kind != cm->optim.kind)
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"host model (%zu parameters, %d slots) does not match the GPU model (%zu, %d)",
							host->n_params, host->has_optim ? host->optim.n_slots : 0,
							cm->P, cm->n_slots);
	return DL_OK;
}

DlStatus
dl_cuda_model_load(DlCudaModel *cm, const DlModel *host, DlError *err)
{
	DlStatus	st;

	if ((st = check_host(cm, host, err)) != DL_OK)
		return st;
	CU_TRY(cudaSetDevice(cm->device), "cudaSetDevice");
	/* on the model's stream (ordered with its kernels), then waited for */
	if (cm->P > 0)
		CU_TRY(cudaMemcpyAsync(cm->d_params, host->params, cm->P * sizeof(float),
							   cudaMemcpyHostToDevice, cm->stream), "copying the parameters in");
	if (cm->P > 0 && cm->n_slots > 0)
		CU_TRY(cudaMemcpyAsync(cm->d_slots, host->optim.slots,
							   cm->P * (size_t) cm->n_slots * sizeof(float),
							   cudaMemcpyHostToDevice, cm->stream), "copying the optimizer state in");
	CU_TRY(cudaStreamSynchronize(cm->stream), "copying the model in");
	cm->iterations = host->optim.iterations;
	cm->m_schedule = host->optim.m_schedule;
	cm->rng = host->rng;
	return DL_OK;
}

DlStatus
dl_cuda_model_store(DlCudaModel *cm, DlModel *host, DlError *err)
{
	DlStatus	st;

	if ((st = check_host(cm, host, err)) != DL_OK)
		return st;
	CU_TRY(cudaSetDevice(cm->device), "cudaSetDevice");
	CU_TRY(cudaStreamSynchronize(cm->stream), "waiting for the GPU");
	if (cm->P > 0)
		CU_TRY(cudaMemcpyAsync(host->params, cm->d_params, cm->P * sizeof(float),
							   cudaMemcpyDeviceToHost, cm->stream), "copying the parameters out");
	if (cm->P > 0 && cm->n_slots > 0)
		CU_TRY(cudaMemcpyAsync(host->optim.slots, cm->d_slots,
							   cm->P * (size_t) cm->n_slots * sizeof(float),
							   cudaMemcpyDeviceToHost, cm->stream), "copying the optimizer state out");
	CU_TRY(cudaStreamSynchronize(cm->stream), "copying the model out");
	host->optim.iterations = cm->iterations;
	host->optim.m_schedule = cm->m_schedule;
	host->rng = cm->rng;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Workspace
 * --------------------------------------------------------------------- */

/* Reserve bytes at *total (256-byte aligned); false on overflow. */
static bool
take(size_t *total, size_t count, size_t elem, size_t *offset)
{
	size_t		n;

	if (!dl_size_mul(count, elem, &n) || !dl_size_add(n, CU_ALIGN - 1, &n))
		return false;
	n -= n % CU_ALIGN;
	*offset = *total;
	return dl_size_add(*total, n, total);
}

static void
conv_geom(DlCuGeom *g, const DlLayer *l, int64_t B)
{
	DlConvGeom	c;

	dl_conv_geom_init(&c, B, l->in_shape.dims[0], l->in_shape.dims[1], l->in_shape.dims[2],
					  l->filters, l->kernel_size[0], l->kernel_size[1], l->strides[0],
					  l->strides[1], l->padding);
	g->B = c.B; g->H = c.H; g->W = c.W; g->C = c.C;
	g->OH = c.OH; g->OW = c.OW; g->OC = c.OC;
	g->KH = c.KH; g->KW = c.KW; g->SH = c.SH; g->SW = c.SW;
	g->pad_top = c.pad_top; g->pad_left = c.pad_left;
}

static void
pool_geom(DlCuGeom *g, const DlLayer *l, int64_t B)
{
	DlPoolGeom	p;

	dl_pool_geom_init(&p, B, l->in_shape.dims[0], l->in_shape.dims[1], l->in_shape.dims[2],
					  l->pool_size[0], l->pool_size[1], l->strides[0], l->strides[1],
					  l->padding);
	g->B = p.B; g->H = p.H; g->W = p.W; g->C = p.C;
	g->OH = p.OH; g->OW = p.OW; g->OC = p.C;
	g->KH = p.PH; g->KW = p.PW; g->SH = p.SH; g->SW = p.SW;
	g->pad_top = p.pad_top; g->pad_left = p.pad_left;
}

static bool
layer_has_buf(const DlLayer *l)
{
	return l->kind != DL_LAYER_FLATTEN &&
		!(l->kind == DL_LAYER_ACTIVATION && l->activation == DL_ACT_LINEAR) &&
		!(l->kind == DL_LAYER_DROPOUT && !(l->rate > 0.0));
}

/*
 * Lay out the workspace for B samples; with base NULL only *bytes is
 * computed (cm and lw may then be NULL).  *ones_n gets the largest
 * activation row count (length of the ones vector).  False on overflow.
 */
static bool
ws_layout(DlCudaModel *cm, const DlModelSpec *spec, DlCuLayer *lw, int64_t B, char *base,
		  size_t *bytes, int64_t *ones_n)
{
	size_t		t = 0,
				off;
	int64_t		largest = dl_shape_size(&spec->input_shape);
	int64_t		max_rows = B;
	int64_t		col = 0;
	int64_t		K = dl_shape_size(&spec->output_shape);

#define PTR(T, o) (base != NULL ? (T *) (base + (o)) : NULL)
	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		int64_t		size = dl_shape_size(&l->out_shape);
		int64_t		rows = B * (size / dl_shape_last(&l->out_shape));
		DlCuLayer	dummy;
		DlCuLayer  *w = lw != NULL ? &lw[i] : &dummy;

		memset(w, 0, sizeof(*w));
		if (size > largest)
			largest = size;
		if (rows > max_rows)
			max_rows = rows;
		if (layer_has_buf(l))
		{
			if (!take(&t, (size_t) B * (size_t) size, sizeof(float), &off))
				return false;
			w->buf = PTR(float, off);
		}
		if (l->kind == DL_LAYER_MAXPOOL2D)
		{
			if (!take(&t, (size_t) B * (size_t) size, sizeof(int32_t), &off))
				return false;
			w->argmax = PTR(int32_t, off);
		}
		if (l->kind == DL_LAYER_DROPOUT && l->rate > 0.0)
		{
			if (!take(&t, (size_t) B * (size_t) size, sizeof(float), &off))
				return false;
			w->mask = PTR(float, off);
		}
		if (l->kind == DL_LAYER_CONV2D)
		{
			DlCuGeom	g;

			conv_geom(&g, l, B);
			if (dl_cu_conv_col_floats(&g) > col)
				col = dl_cu_conv_col_floats(&g);
			if (g.B * g.OH * g.OW > max_rows)
				max_rows = g.B * g.OH * g.OW;
		}
	}
	if (!take(&t, (size_t) B * (size_t) largest, sizeof(float), &off))
		return false;
	if (cm != NULL) cm->grad_a = PTR(float, off);
	if (!take(&t, (size_t) B * (size_t) largest, sizeof(float), &off))
		return false;
	if (cm != NULL) cm->grad_b = PTR(float, off);
	if (!take(&t, (size_t) col, sizeof(float), &off))
		return false;
	if (cm != NULL) cm->col = col > 0 ? PTR(float, off) : NULL;
	if (!take(&t, (size_t) col, sizeof(float), &off))
		return false;
	if (cm != NULL) cm->dcol = col > 0 ? PTR(float, off) : NULL;
	if (!take(&t, (size_t) B * (size_t) dl_shape_size(&spec->input_shape), sizeof(float), &off))
		return false;
	if (cm != NULL) cm->batch_x = PTR(float, off);
	if (!take(&t, (size_t) B * (size_t) K, sizeof(float), &off))
		return false;
	if (cm != NULL) cm->batch_y = PTR(float, off);
	if (!take(&t, (size_t) max_rows, sizeof(float), &off))
		return false;
	if (cm != NULL) cm->ones = PTR(float, off);
	if (!take(&t, (size_t) B, sizeof(double), &off))
		return false;
	if (cm != NULL) cm->loss = PTR(double, off);
	if (!take(&t, (size_t) B, sizeof(double), &off))
		return false;
	if (cm != NULL) cm->correct = PTR(double, off);
	if (!take(&t, 2, sizeof(double), &off))
		return false;
	if (cm != NULL) cm->acc = PTR(double, off);
	if (!take(&t, 1, sizeof(int), &off))
		return false;
	if (cm != NULL) cm->flag = PTR(int, off);
#undef PTR
	*bytes = t;
	if (ones_n != NULL)
		*ones_n = max_rows;
	return true;
}

/* Set ones (n) to 1.0f; one host copy per workspace reservation. */
static DlStatus
fill_ones(DlCudaModel *cm, int64_t n, DlError *err)
{
	float	   *h = dl_alloc_array(&cm->alloc, (size_t) n, sizeof(float), err);
	cudaError_t ce;

	if (h == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	for (int64_t i = 0; i < n; i++)
		h[i] = 1.0f;
	ce = cudaMemcpyAsync(cm->ones, h, (size_t) n * sizeof(float), cudaMemcpyHostToDevice,
						 cm->stream);
	if (ce == cudaSuccess)
		ce = cudaStreamSynchronize(cm->stream);
	dl_free(&cm->alloc, h);
	if (ce != cudaSuccess)
		return cuda_fail(err, ce, "workspace");
	return DL_OK;
}

/* Make the workspace hold batches of B samples (grown, never shrunk). */
static DlStatus
ws_reserve(DlCudaModel *cm, int64_t B, DlError *err)
{
	size_t		bytes;
	int64_t		ones_n;
	cudaError_t ce;
	char	   *base;

	if (B <= cm->ws_cap)
		return DL_OK;
	for (int i = 0; i < cm->spec->n_layers; i++)
	{
		const DlLayer *l = &cm->spec->layers[i];

		/* argmax indices are int32 */
		if (l->kind == DL_LAYER_MAXPOOL2D && dl_shape_size(&l->in_shape) > INT32_MAX / B)
			return dl_error_set(err, DL_ERR_LIMIT, "layer \"%s\": a batch of %lld samples is too large for the GPU",
								l->name, (long long) B);
	}
	if (!ws_layout(NULL, cm->spec, NULL, B, NULL, &bytes, &ones_n))
		return dl_error_set(err, DL_ERR_LIMIT, "GPU workspace for a batch of %lld samples overflows",
							(long long) B);
	CU_TRY(cudaStreamSynchronize(cm->stream), "waiting for the GPU");
	cudaFree(cm->d_ws);
	cm->d_ws = NULL;
	cm->ws_cap = 0;
	ce = cudaMalloc(&cm->d_ws, bytes);
	if (ce != cudaSuccess)
	{
		cm->d_ws = NULL;
		return cuda_fail(err, ce, "workspace");
	}
	base = cm->d_ws;
	(void) ws_layout(cm, cm->spec, cm->lw, B, base, &bytes, &ones_n);
	CU_TRY(cudaMemsetAsync(cm->acc, 0, 2 * sizeof(double), cm->stream), "workspace");
	CU_TRY(cudaMemsetAsync(cm->flag, 0, sizeof(int), cm->stream), "workspace");
	cm->ones_n = ones_n;
	cm->ws_cap = B;
	return fill_ones(cm, ones_n, err);
}

DlStatus
dl_cuda_model_bytes(const DlModelSpec *spec, const DlOptimConfig *optim, int64_t batch_size,
					int64_t N, size_t *out, DlError *err)
{
	size_t		ws,
				state,
				data,
				total;
	int64_t		ones_n;
	int64_t		in = dl_shape_size(&spec->input_shape);
	int64_t		K = dl_shape_size(&spec->output_shape);

	*out = 0;
	if (batch_size < 1 || N < 0 ||
		!ws_layout(NULL, spec, NULL, batch_size < N || N == 0 ? batch_size : N, NULL, &ws, &ones_n) ||
		!dl_size_mul(spec->n_params, (size_t) (2 + dl_optim_n_slots(optim)) * sizeof(float), &state) ||
		!dl_size_mul((size_t) N, (size_t) (in + K) * sizeof(float) + sizeof(int64_t), &data) ||
		!dl_size_add(ws, state, &total) || !dl_size_add(total, data, &total))
		return dl_error_set(err, DL_ERR_LIMIT, "GPU memory for batch_size %lld and %lld samples overflows",
							(long long) batch_size, (long long) N);
	*out = total;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Data
 * --------------------------------------------------------------------- */

DlStatus
dl_cuda_model_set_data(DlCudaModel *cm, const float *x, const float *y, int64_t N,
					   int64_t y_width, DlError *err)
{
	int64_t		in = dl_shape_size(&cm->spec->input_shape);
	size_t		nx,
				ny,
				bytes,
				off_y,
				off_p;
	cudaError_t ce;

	if (N < 0 || y_width < 1 || y_width > dl_shape_size(&cm->spec->output_shape))
		return dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
							"bad data for the GPU: %lld samples of y width %lld",
							(long long) N, (long long) y_width);
	CU_TRY(cudaSetDevice(cm->device), "cudaSetDevice");
	CU_TRY(cudaStreamSynchronize(cm->stream), "waiting for the GPU");
	cudaFree(cm->d_data);
	cm->d_data = NULL;
	cm->N = 0;
	dl_free(&cm->alloc, cm->h_perm);
	cm->h_perm = NULL;
	bytes = 0;
	if (!take(&bytes, (size_t) N, (size_t) in * sizeof(float), &nx) ||
		!take(&bytes, (size_t) N, (size_t) y_width * sizeof(float), &off_y) ||
		!take(&bytes, (size_t) N, sizeof(int64_t), &off_p))
		return dl_error_set(err, DL_ERR_LIMIT, "%lld samples overflow the GPU data block",
							(long long) N);
	cm->h_perm = dl_alloc_array(&cm->alloc, N > 0 ? (size_t) N : 1, sizeof(int64_t), err);
	if (cm->h_perm == NULL)
		return err ? err->code : DL_ERR_NO_MEMORY;
	ce = cudaMalloc(&cm->d_data, bytes > 0 ? bytes : 1);
	if (ce != cudaSuccess)
	{
		cm->d_data = NULL;
		return cuda_fail(err, ce, "the training data");
	}
	cm->d_x = (float *) cm->d_data;
	cm->d_y = (float *) ((char *) cm->d_data + off_y);
	cm->d_perm = (int64_t *) ((char *) cm->d_data + off_p);
	nx = (size_t) N * (size_t) in * sizeof(float);
	ny = (size_t) N * (size_t) y_width * sizeof(float);
	if (N > 0)
	{
		CU_TRY(cudaMemcpyAsync(cm->d_x, x, nx, cudaMemcpyHostToDevice, cm->stream),
			   "copying the data in");
		CU_TRY(cudaMemcpyAsync(cm->d_y, y, ny, cudaMemcpyHostToDevice, cm->stream),
			   "copying the labels in");
		CU_TRY(cudaStreamSynchronize(cm->stream), "copying the data in");
	}
	cm->h_x = x;
	cm->h_y = y;
	cm->N = N;
	cm->y_width = y_width;
	return DL_OK;
}

/* ---------------------------------------------------------------------
 * Forward and backward
 * --------------------------------------------------------------------- */

/*
 * Forward over B samples of x (device, (B, input size)); returns the
 * output (B, K) on the device, or NULL with err set.
 */
static const float *
forward(DlCudaModel *cm, const float *x, int64_t B, bool training, DlError *err)
{
	const DlModelSpec *spec = cm->spec;
	const float *in = x;
	cudaStream_t s = cm->stream;

	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		DlCuLayer  *w = &cm->lw[i];
		const float *p = cm->d_params + l->param_offset;
		int64_t		in_size = dl_shape_size(&l->in_shape);
		int64_t		out_size = dl_shape_size(&l->out_shape);
		int64_t		cin = dl_shape_last(&l->in_shape);
		int64_t		cout = dl_shape_last(&l->out_shape);
		cublasStatus_t bs = CUBLAS_STATUS_SUCCESS;
		DlCuGeom	g;

		w->out = w->buf;
		switch (l->kind)
		{
			case DL_LAYER_DENSE:
				bs = dl_cu_dense_forward(cm->blas, w->buf, in, p,
										 l->use_bias ? p + cin * l->units : NULL,
										 l->activation, B, cin, l->units, s);
				break;
			case DL_LAYER_CONV2D:
				conv_geom(&g, l, B);
				bs = dl_cu_conv2d_forward(cm->blas, w->buf, cm->col, in, p,
										  l->use_bias ? p + g.KH * g.KW * g.C * g.OC : NULL,
										  l->activation, &g, s);
				break;
			case DL_LAYER_MAXPOOL2D:
				pool_geom(&g, l, B);
				dl_cu_maxpool_forward(w->buf, w->argmax, in, &g, s);
				break;
			case DL_LAYER_AVGPOOL2D:
				pool_geom(&g, l, B);
				dl_cu_avgpool_forward(w->buf, in, &g, s);
				break;
			case DL_LAYER_GLOBALAVGPOOL2D:
				dl_cu_global_avgpool_forward(w->buf, in, B, in_size / cin, cin, s);
				break;
			case DL_LAYER_FLATTEN:
				w->out = in;
				break;
			case DL_LAYER_DROPOUT:
				if (training && w->mask != NULL)
					dl_cu_dropout_forward(w->buf, w->mask, in, B * in_size, l->rate,
										  dl_rng_next(&cm->rng), s);
				else
					w->out = in;
				break;
			case DL_LAYER_ACTIVATION:
				if (l->activation == DL_ACT_LINEAR)
					w->out = in;
				else
				{
					cudaError_t ce = cudaMemcpyAsync(w->buf, in, (size_t) (B * in_size) * sizeof(float),
													 cudaMemcpyDeviceToDevice, s);

					if (ce != cudaSuccess)
					{
						cuda_fail(err, ce, "activation");
						return NULL;
					}
					dl_cu_bias_act(w->buf, NULL, l->activation, B * (out_size / cout), cout, s);
				}
				break;
			case DL_LAYER_BATCHNORM:
				break;			/* rejected by dl_cuda_model_create */
		}
		if (bs != CUBLAS_STATUS_SUCCESS)
		{
			blas_fail(err, bs, "forward");
			return NULL;
		}
		in = w->out;
	}
	return in;
}

/*
 * Backward after a training forward over x: grad_a holds dL/d(output),
 * or dL/d(pre-softmax) when fused_last.  Adds into d_grads.
 */
static DlStatus
backward(DlCudaModel *cm, const float *x, int64_t B, bool fused_last, DlError *err)
{
	const DlModelSpec *spec = cm->spec;
	float	   *dy = cm->grad_a;
	float	   *other = cm->grad_b;
	cudaStream_t s = cm->stream;

	for (int i = spec->n_layers - 1; i >= cm->first_trainable; i--)
	{
		const DlLayer *l = &spec->layers[i];
		DlCuLayer  *w = &cm->lw[i];
		const float *in = i > 0 ? cm->lw[i - 1].out : x;
		const float *p = cm->d_params + l->param_offset;
		float	   *g = cm->d_grads + l->param_offset;
		float	   *dx = i > cm->first_trainable ? other : NULL;
		bool		do_act = l->activation != DL_ACT_LINEAR &&
			!(fused_last && i == spec->n_layers - 1);
		int64_t		in_size = dl_shape_size(&l->in_shape);
		int64_t		out_size = dl_shape_size(&l->out_shape);
		int64_t		cin = dl_shape_last(&l->in_shape);
		int64_t		cout = dl_shape_last(&l->out_shape);
		int64_t		rows = B * (out_size / cout);
		bool		swap = true;
		cublasStatus_t bs = CUBLAS_STATUS_SUCCESS;
		DlCuGeom	geo;

		switch (l->kind)
		{
			case DL_LAYER_DENSE:
				if (do_act)
					dl_cu_act_backward(l->activation, dy, dy, w->out, rows, cout, s);
				bs = dl_cu_dense_backward(cm->blas, dx, g, l->use_bias ? g + cin * l->units : NULL,
										  dy, in, p, cm->ones, B, cin, l->units);
				break;
			case DL_LAYER_CONV2D:
				if (do_act)
					dl_cu_act_backward(l->activation, dy, dy, w->out, rows, cout, s);
				conv_geom(&geo, l, B);
				bs = dl_cu_conv2d_backward(cm->blas, dx, g,
										   l->use_bias ? g + geo.KH * geo.KW * geo.C * geo.OC : NULL,
										   cm->col, cm->dcol, dy, in, p, cm->ones, &geo, s);
				break;
			case DL_LAYER_MAXPOOL2D:
				pool_geom(&geo, l, B);
				if (dx != NULL)
					dl_cu_maxpool_backward(dx, dy, w->argmax, &geo, s);
				break;
			case DL_LAYER_AVGPOOL2D:
				pool_geom(&geo, l, B);
				if (dx != NULL)
					dl_cu_avgpool_backward(dx, dy, &geo, s);
				break;
			case DL_LAYER_GLOBALAVGPOOL2D:
				if (dx != NULL)
					dl_cu_global_avgpool_backward(dx, dy, B, in_size / cin, cin, s);
				break;
			case DL_LAYER_FLATTEN:
				swap = false;
				break;
			case DL_LAYER_DROPOUT:
				if (w->out == in)
					swap = false;
				else if (dx != NULL)
					dl_cu_mul(dx, dy, w->mask, B * in_size, s);
				break;
			case DL_LAYER_ACTIVATION:
				if (do_act)
					dl_cu_act_backward(l->activation, dy, dy, w->out, rows, cout, s);
				swap = false;
				break;
			case DL_LAYER_BATCHNORM:
				break;
		}
		if (bs != CUBLAS_STATUS_SUCCESS)
			return blas_fail(err, bs, "backward");
		if (swap)
		{
			float	   *t = dy;

			dy = other;
			other = t;
		}
	}
	return DL_OK;
}

/* The regularizers of trainable Dense and Conv2D layers (train.c). */
static void
regularize(DlCudaModel *cm)
{
	const DlModelSpec *spec = cm->spec;

	for (int i = 0; i < spec->n_layers; i++)
	{
		const DlLayer *l = &spec->layers[i];
		int64_t		c = dl_shape_last(&l->in_shape);
		int64_t		out;
		int64_t		nk;

		if (l->n_trainable == 0 || (l->kind != DL_LAYER_DENSE && l->kind != DL_LAYER_CONV2D))
			continue;
		out = l->kind == DL_LAYER_DENSE ? l->units : l->filters;
		nk = (l->kind == DL_LAYER_DENSE ? 1 : (int64_t) l->kernel_size[0] * l->kernel_size[1]) * c * out;
		dl_cu_regularize(cm->d_grads + l->param_offset, cm->d_params + l->param_offset, nk,
						 l->kernel_reg.l1, l->kernel_reg.l2, cm->stream);
		if (l->use_bias)
			dl_cu_regularize(cm->d_grads + l->param_offset + nk,
							 cm->d_params + l->param_offset + nk, out,
							 l->bias_reg.l1, l->bias_reg.l2, cm->stream);
	}
}

/* One optimizer update over the ranges (optim.c's dl_optim_step). */
static void
optim_step(DlCudaModel *cm)
{
	const DlOptimConfig *c = &cm->optim;
	double		t = (double) cm->iterations + 1.0;
	DlCuOptimStep k;
	size_t		P = cm->P;

	memset(&k, 0, sizeof(k));
	k.kind = c->kind == DL_OPTIM_SGD ? 0 : 1;
	k.lr_t = c->lr / (1.0 + c->decay * (double) cm->iterations);
	k.adam_lr = k.lr_t * sqrt(1.0 - pow(c->beta_2, t)) / (1.0 - pow(c->beta_1, t));
	k.momentum = c->momentum;
	k.nesterov = c->nesterov;
	k.beta_1 = c->beta_1;
	k.beta_2 = c->beta_2;
	k.epsilon = c->epsilon;
	k.amsgrad = c->amsgrad;
	k.clipvalue = c->clipvalue;
	for (int r = 0; r < cm->n_ranges; r++)
		dl_cu_optim_step(cm->d_params, cm->d_grads, cm->d_slots,
						 cm->n_slots > 1 ? cm->d_slots + P : NULL,
						 cm->n_slots > 2 ? cm->d_slots + 2 * P : NULL, cm->flag, &k,
						 (int64_t) cm->ranges[r].begin, (int64_t) cm->ranges[r].end, cm->stream);
	cm->iterations++;
}

/* ---------------------------------------------------------------------
 * Training, evaluation, prediction
 * --------------------------------------------------------------------- */

static DlStatus
check_batch(int64_t bs, DlError *err)
{
	if (bs < 1)
	{
		dl_error_set(err, DL_ERR_INVALID_ARGUMENT, "batch_size must be at least 1, got %lld",
					 (long long) bs);
		return dl_error_hint(err, "Pass a positive batch_size in fit_params, for example batch_size=32.");
	}
	return DL_OK;
}

/* The device loss for cfg and the model's last layer; false when unsupported. */
static bool
device_loss(const DlCudaModel *cm, DlLossKind loss, DlCuLoss *out, bool *fused)
{
	const DlLayer *l = &cm->spec->layers[cm->spec->n_layers - 1];
	bool		softmax = (l->kind == DL_LAYER_DENSE || l->kind == DL_LAYER_CONV2D ||
						   l->kind == DL_LAYER_ACTIVATION) &&
		l->activation == DL_ACT_SOFTMAX && cm->spec->output_shape.rank == 1;

	*fused = false;
	if (loss == DL_LOSS_MEAN_SQUARED_ERROR)
	{
		*out = DL_CU_LOSS_MSE;
		return true;
	}
	if (!softmax)
		return false;
	*fused = true;
	if (loss == DL_LOSS_CATEGORICAL_CROSSENTROPY)
		*out = DL_CU_LOSS_CCE;
	else if (loss == DL_LOSS_SPARSE_CATEGORICAL_CROSSENTROPY)
		*out = DL_CU_LOSS_SPARSE_CCE;
	else
		return false;
	return true;
}

DlStatus
dl_cuda_model_train_epoch(DlCudaModel *cm, const DlTrainConfig *cfg, DlBatchStats *stats,
						  DlError *err)
{
	int64_t		in_size = dl_shape_size(&cm->spec->input_shape);
	int64_t		K = dl_shape_size(&cm->spec->output_shape);
	int64_t		yw = cm->y_width;
	int64_t		bs = cfg->batch_size;
	int64_t		N = cm->N;
	int64_t		it0 = cm->iterations;
	DlMetricKind mk = dl_metric_resolve(cfg->metric, cfg->loss, K);
	DlCuLoss	lk;
	bool		fused;
	double		acc[2];
	int			flag;
	DlStatus	st;

	if ((st = check_batch(bs, err)) != DL_OK)
		return st;
	if (!device_loss(cm, cfg->loss, &lk, &fused))
		return unsupported(err, "loss", dl_loss_name(cfg->loss));
	if (mk != DL_METRIC_NONE && mk != DL_METRIC_CATEGORICAL_ACCURACY &&
		mk != DL_METRIC_SPARSE_CATEGORICAL_ACCURACY)
		return unsupported(err, "training metric", dl_metric_name(mk));
	if (yw != dl_loss_y_width(cfg->loss, K))
		return dl_error_set(err, DL_ERR_SHAPE, "uploaded labels have width %lld, loss %s needs %lld",
							(long long) yw, dl_loss_name(cfg->loss),
							(long long) dl_loss_y_width(cfg->loss, K));
	if (N <= 0)
		return DL_OK;
	if ((st = dl_loss_check_labels(cfg->loss, cm->h_y, N, K, err)) != DL_OK)
		return st;
	CU_TRY(cudaSetDevice(cm->device), "cudaSetDevice");
	if ((st = ws_reserve(cm, bs < N ? bs : N, err)) != DL_OK)
		return st;
	CU_TRY(cudaMemsetAsync(cm->acc, 0, 2 * sizeof(double), cm->stream), "workspace");
	CU_TRY(cudaMemsetAsync(cm->flag, 0, sizeof(int), cm->stream), "workspace");
	if (cfg->shuffle)
	{
		/* the CPU's permutation, from the same rng draws */
		for (int64_t i = 0; i < N; i++)
			cm->h_perm[i] = i;
		dl_rng_shuffle_i64(&cm->rng, cm->h_perm, N);
		CU_TRY(cudaMemcpyAsync(cm->d_perm, cm->h_perm, (size_t) N * sizeof(int64_t),
							   cudaMemcpyHostToDevice, cm->stream), "copying the order in");
		/* h_perm is reused next epoch: wait for the copy (once per epoch) */
		CU_TRY(cudaStreamSynchronize(cm->stream), "waiting for the GPU");
	}

	for (int64_t start = 0; start < N; start += bs)
	{
		int64_t		B = N - start < bs ? N - start : bs;
		const float *xb = cm->d_x + start * in_size;
		const float *yb = cm->d_y + start * yw;
		const float *p;

		if (start > 0 && cfg->between_batches != NULL)
			cfg->between_batches(cfg->between_batches_arg);
		if (cfg->shuffle)
		{
			dl_cu_gather_rows(cm->batch_x, cm->d_x, cm->d_perm, start, B, in_size, cm->stream);
			dl_cu_gather_rows(cm->batch_y, cm->d_y, cm->d_perm, start, B, yw, cm->stream);
			xb = cm->batch_x;
			yb = cm->batch_y;
		}
		CU_TRY(cudaMemsetAsync(cm->d_grads, 0, cm->P * sizeof(float), cm->stream), "zeroing gradients");
		if ((p = forward(cm, xb, B, true, err)) == NULL)
			return err ? err->code : DL_ERR_INTERNAL;
		dl_cu_loss(cm->grad_a, cm->loss, mk != DL_METRIC_NONE ? cm->correct : NULL, p, yb, lk, B, K,
				   1.0 / (double) B, cm->stream);
		dl_cu_sum_into(cm->acc, cm->flag, cm->loss, mk != DL_METRIC_NONE ? cm->correct : NULL, B,
					   cm->stream);
		if ((st = backward(cm, xb, B, fused, err)) != DL_OK)
			return st;
		regularize(cm);
		optim_step(cm);
	}
	CU_TRY(cudaMemcpyAsync(acc, cm->acc, sizeof(acc), cudaMemcpyDeviceToHost, cm->stream), "reading the loss");
	CU_TRY(cudaMemcpyAsync(&flag, cm->flag, sizeof(int), cudaMemcpyDeviceToHost, cm->stream), "reading the loss");
	CU_TRY(cudaStreamSynchronize(cm->stream), "training on the GPU");
	if (flag != 0)
	{
		dl_error_set(err, DL_ERR_DIVERGED,
					 "training diverged: %s is not finite within optimizer iterations %lld to %lld",
					 flag == 1 ? "the loss" : "a weight", (long long) it0, (long long) cm->iterations);
		return dl_error_hint(err, "Lower the learning rate (for example by a factor of 10), scale the input features, or set clipnorm in the optimizer.");
	}
	if (stats != NULL)
	{
		stats->loss_sum += acc[0];
		stats->metric_sum += mk != DL_METRIC_NONE ? acc[1] : 0.0;
		stats->n += N;
	}
	return DL_OK;
}

/* Run inference over the uploaded data; each batch's output (B, K) is copied to h_out and passed to fn. */
static DlStatus
infer(DlCudaModel *cm, int64_t bs, void (*fn) (void *arg, const float *p, int64_t start, int64_t B),
	  void *arg, DlError *err)
{
	int64_t		in_size = dl_shape_size(&cm->spec->input_shape);
	int64_t		K = dl_shape_size(&cm->spec->output_shape);
	int64_t		N = cm->N;
	DlStatus	st;

	if ((st = check_batch(bs, err)) != DL_OK)
		return st;
	if (N <= 0)
		return DL_OK;
	CU_TRY(cudaSetDevice(cm->device), "cudaSetDevice");
	if ((st = ws_reserve(cm, bs < N ? bs : N, err)) != DL_OK)
		return st;
	if (cm->h_out_cap < cm->ws_cap)
	{
		dl_free(&cm->alloc, cm->h_out);
		cm->h_out_cap = 0;
		cm->h_out = dl_alloc_array(&cm->alloc, (size_t) (cm->ws_cap * K), sizeof(float), err);
		if (cm->h_out == NULL)
			return err ? err->code : DL_ERR_NO_MEMORY;
		cm->h_out_cap = cm->ws_cap;
	}
	for (int64_t start = 0; start < N; start += bs)
	{
		int64_t		B = N - start < bs ? N - start : bs;
		const float *p = forward(cm, cm->d_x + start * in_size, B, false, err);

		if (p == NULL)
			return err ? err->code : DL_ERR_INTERNAL;
		CU_TRY(cudaMemcpyAsync(cm->h_out, p, (size_t) (B * K) * sizeof(float),
							   cudaMemcpyDeviceToHost, cm->stream), "reading outputs");
		CU_TRY(cudaStreamSynchronize(cm->stream), "inference on the GPU");
		fn(arg, cm->h_out, start, B);
	}
	return DL_OK;
}

typedef struct EvalArg
{
	DlCudaModel *cm;
	const DlTrainConfig *cfg;
	DlBatchStats *stats;
} EvalArg;

static void
eval_batch(void *arg, const float *p, int64_t start, int64_t B)
{
	EvalArg    *a = arg;
	int64_t		K = dl_shape_size(&a->cm->spec->output_shape);
	const float *yb = a->cm->h_y + start * a->cm->y_width;
	DlMetricKind mk = dl_metric_resolve(a->cfg->metric, a->cfg->loss, K);

	if (a->stats == NULL)
		return;
	a->stats->loss_sum += dl_loss_compute(a->cfg->loss, NULL, p, yb, B, K, 1.0);
	if (mk != DL_METRIC_NONE)
		a->stats->metric_sum += dl_metric_sum(mk, a->cfg->top_k, p, yb, B, K);
	a->stats->n += B;
}

DlStatus
dl_cuda_model_evaluate(DlCudaModel *cm, const DlTrainConfig *cfg, DlBatchStats *stats,
					   DlError *err)
{
	EvalArg		a = {cm, cfg, stats};
	int64_t		K = dl_shape_size(&cm->spec->output_shape);
	DlStatus	st;

	if (cm->y_width != dl_loss_y_width(cfg->loss, K))
		return dl_error_set(err, DL_ERR_SHAPE, "uploaded labels have width %lld, loss %s needs %lld",
							(long long) cm->y_width, dl_loss_name(cfg->loss),
							(long long) dl_loss_y_width(cfg->loss, K));
	if (cm->N > 0 && (st = dl_loss_check_labels(cfg->loss, cm->h_y, cm->N, K, err)) != DL_OK)
		return st;
	return infer(cm, cfg->batch_size, eval_batch, &a, err);
}

typedef struct PredArg
{
	float	   *out;
	int64_t		K;
} PredArg;

static void
pred_batch(void *arg, const float *p, int64_t start, int64_t B)
{
	PredArg    *a = arg;

	memcpy(a->out + start * a->K, p, (size_t) (B * a->K) * sizeof(float));
}

DlStatus
dl_cuda_model_predict(DlCudaModel *cm, float *out, int64_t batch_size, DlError *err)
{
	PredArg		a = {out, dl_shape_size(&cm->spec->output_shape)};

	return infer(cm, batch_size, pred_batch, &a, err);
}
