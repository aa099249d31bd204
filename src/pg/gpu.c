/*-------------------------------------------------------------------------
 *
 * gpu.c
 *	  SQL access to the GPUs of this host: madlib_dl._gpu_list, behind
 *	  gpu_configuration (src/sql/85_gpu.sql), and the device choice of a
 *	  segment that trains with use_gpus.
 *
 * In a build without CUDA (the default) dl_cuda_device_count() is 0, so
 * the list is empty and use_gpus fails with a clear error.
 *
 * IDENTIFICATION
 *	  src/pg/gpu.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <unistd.h>

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "madlib_dl/dl_cuda.h"

#include "pg_gpu.h"

PG_FUNCTION_INFO_V1(madlib_dl__gpu_list);
PG_FUNCTION_INFO_V1(madlib_dl__gpu_status);

/* One GPU as MADlib's gpu_configuration source writes it. */
static char *
gpu_descr(int device, const DlCudaDeviceInfo *d, bool nvidia)
{
	const unsigned char *u = d->uuid;

	if (nvidia)					/* nvidia-smi -L */
		return psprintf("GPU %d: %s (UUID: GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x)",
						device, d->name, u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
						u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
	/* TensorFlow's physical device description */
	return psprintf("device: %d, name: %s, pci bus id: %04x:%02x:%02x.0, compute capability: %d.%d",
					device, d->name, d->pci_domain, d->pci_bus, d->pci_device,
					d->cc_major, d->cc_minor);
}

/*
 * _gpu_list(source text) RETURNS TABLE (hostname text, gpu_descr text):
 * one row per GPU of this host; none without CUDA or without GPUs.
 * source is 'tensorflow' or 'nvidia' (checked by the SQL caller).
 */
Datum
madlib_dl__gpu_list(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *source = text_to_cstring(PG_GETARG_TEXT_PP(0));
	bool		nvidia = strcmp(source, "nvidia") == 0;
	char		host[256];
	int			n = dl_cuda_device_count();

	InitMaterializedSRF(fcinfo, 0);
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "localhost", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	for (int i = 0; i < n; i++)
	{
		DlCudaDeviceInfo info;
		DlError		err;
		Datum		values[2];
		bool		nulls[2] = {false, false};

		dl_error_clear(&err);
		dl_pg_check(dl_cuda_device_info(i, &info, &err), &err);
		values[0] = CStringGetTextDatum(host);
		values[1] = CStringGetTextDatum(gpu_descr(i, &info, nvidia));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/* The number of usable GPUs; ERROR 0A000 when use_gpus cannot work here. */
static int
gpu_require(void)
{
	int			n;

	if (!dl_cuda_built())
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("use_gpus is not supported: madlib_dl was built without CUDA"),
				 errhint("Call with use_gpus => false, or rebuild madlib_dl with make USE_CUDA=1 on a host with the CUDA toolkit (docs/gpu.md).")));
	n = dl_cuda_device_count();
	if (n < 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("use_gpus is true but this server has no usable GPU"),
				 errhint("Call with use_gpus => false, or check the NVIDIA driver with nvidia-smi; madlib_dl.gpu_configuration lists the GPUs it sees.")));
	return n;
}

/*
 * _gpu_status() RETURNS integer: the number of GPUs fit can use, after
 * raising the clear error of use_gpus => true when there is none.
 */
Datum
madlib_dl__gpu_status(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(gpu_require());
}

PG_FUNCTION_INFO_V1(madlib_dl__gpu_built);

/* _gpu_built() RETURNS boolean: was madlib_dl built with CUDA? */
Datum
madlib_dl__gpu_built(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(dl_cuda_built());
}

/* Frees a GPU model if an ERROR unwinds before dl_pg_gpu_train does. */
typedef struct GpuGuard
{
	MemoryContextCallback cb;
	DlCudaModel *cm;			/* NULL once freed */
} GpuGuard;

static void
gpu_guard_release(void *arg)
{
	GpuGuard   *g = arg;

	dl_cuda_model_free(g->cm);
	g->cm = NULL;
}

DlStatus
dl_pg_gpu_train(DlModel *model, const DlTrainConfig *cfg, const float *x, const float *y,
				int64 n, int epochs, int segment, DlBatchStats *bs, DlError *err)
{
	const DlModelSpec *spec = dl_model_spec(model);
	DlOptimState *os = dl_model_optim(model);
	int			ngpu = gpu_require();
	GpuGuard   *g;
	DlAllocator alloc;
	DlStatus	st;

	if (os == NULL)
		elog(ERROR, "madlib_dl: GPU training needs a compiled model");
	alloc = dl_pg_allocator(CurrentMemoryContext);
	g = palloc0(sizeof(GpuGuard));
	g->cb.func = gpu_guard_release;
	g->cb.arg = g;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &g->cb);

	/* segment i uses GPU i mod the number of GPUs */
	dl_pg_check(dl_cuda_model_create(spec, &os->cfg, segment % ngpu, &alloc, &g->cm, err), err);
	st = dl_cuda_model_load(g->cm, model, err);
	if (st == DL_OK)
		st = dl_cuda_model_set_data(g->cm, x, y, n,
									dl_loss_y_width(cfg->loss, dl_shape_size(&spec->output_shape)),
									err);
	for (int e = 0; st == DL_OK && e < epochs; e++)
		st = dl_cuda_model_train_epoch(g->cm, cfg, bs, err);
	if (st == DL_OK)
		st = dl_cuda_model_store(g->cm, model, err);
	gpu_guard_release(g);		/* GPU memory released at the end of every call */
	if (st != DL_OK && st != DL_ERR_DIVERGED)
		dl_pg_check(st, err);
	return st;
}
