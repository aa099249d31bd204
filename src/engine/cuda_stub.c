/*-------------------------------------------------------------------------
 *
 * cuda_stub.c
 *	  The CUDA backend's API in a build without CUDA: every call reports
 *	  DL_ERR_UNSUPPORTED and no GPU is ever seen.
 *
 * Compiled in every build (the Makefile compiles every src/engine C file); empty
 * when DL_USE_CUDA is defined, where src/engine/cuda/ provides the real
 * functions.
 *
 * IDENTIFICATION
 *	  src/engine/cuda_stub.c
 *
 *-------------------------------------------------------------------------
 */
#include "madlib_dl/dl_cuda.h"

#ifndef DL_USE_CUDA

static DlStatus
no_cuda(DlError *err)
{
	dl_error_set(err, DL_ERR_UNSUPPORTED, "madlib_dl was built without CUDA");
	return dl_error_hint(err, "Rebuild madlib_dl with make USE_CUDA=1 on a host with the CUDA toolkit, or train with use_gpus => false.");
}

bool
dl_cuda_built(void)
{
	return false;
}

int
dl_cuda_device_count(void)
{
	return 0;
}

DlStatus
dl_cuda_device_info(int device, DlCudaDeviceInfo *info, DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_create(const DlModelSpec *spec, const DlOptimConfig *optim, int device,
					 const DlAllocator *alloc, DlCudaModel **out, DlError *err)
{
	*out = NULL;
	return no_cuda(err);
}

void
dl_cuda_model_free(DlCudaModel *cm)
{
}

void
dl_cuda_model_set_tf32(DlCudaModel *cm, bool on)
{
}

DlStatus
dl_cuda_model_load(DlCudaModel *cm, const DlModel *host, DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_store(DlCudaModel *cm, DlModel *host, DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_set_data(DlCudaModel *cm, const float *x, const float *y, int64_t N,
					   int64_t y_width, DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_train_epoch(DlCudaModel *cm, const DlTrainConfig *cfg, DlBatchStats *stats,
						  DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_evaluate(DlCudaModel *cm, const DlTrainConfig *cfg, DlBatchStats *stats,
					   DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_predict(DlCudaModel *cm, float *out, int64_t batch_size, DlError *err)
{
	return no_cuda(err);
}

DlStatus
dl_cuda_model_bytes(const DlModelSpec *spec, const DlOptimConfig *optim, int64_t batch_size,
					int64_t N, size_t *out, DlError *err)
{
	*out = 0;
	return no_cuda(err);
}

#else							/* DL_USE_CUDA */

/* ISO C forbids an empty translation unit. */
typedef int dl_cuda_stub_unused;

#endif							/* DL_USE_CUDA */
