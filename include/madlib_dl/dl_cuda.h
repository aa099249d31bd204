/*-------------------------------------------------------------------------
 *
 * dl_cuda.h
 *	  The optional CUDA backend: a DlModel's training and evaluation on a GPU.
 *
 * A DlCudaModel mirrors a DlModel built from the same spec and optimizer:
 * parameters, gradients and optimizer slots live in one device block laid
 * out exactly as the host block, so the blob format does not change.  A
 * segment's visit (a "hop") is:
 *	 dl_cuda_model_create    allocate device state, cuBLAS handle, stream
 *	 dl_cuda_model_load      params, optimizer state and rng from the host model
 *	 dl_cuda_model_set_data  the partition, copied to the device once
 *	 dl_cuda_model_train_epoch (times epochs), dl_cuda_model_evaluate
 *	 dl_cuda_model_store     params, optimizer state and rng back to the host
 *	 dl_cuda_model_free      every byte of device memory released
 * Nothing is copied per mini-batch except the step scalars (kernel
 * arguments); the host synchronises once per epoch.
 *
 * Supported on the GPU: Dense, Conv2D, MaxPooling2D, AveragePooling2D,
 * GlobalAveragePooling2D, Flatten, Dropout, Activation; losses
 * (sparse_)categorical_crossentropy after softmax and mean_squared_error
 * for training (evaluation supports every loss and metric: outputs are
 * scored on the host); optimizers SGD (momentum, nesterov) and Adam
 * (amsgrad), with decay and clipvalue.  Anything else gives
 * DL_ERR_UNSUPPORTED naming it.  docs/gpu.md has the details, the
 * tolerances against the CPU engine and the memory bound.
 *
 * In a build without CUDA (the default) every function exists and returns
 * DL_ERR_UNSUPPORTED ("madlib_dl was built without CUDA"), and
 * dl_cuda_device_count returns 0.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_cuda.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_CUDA_H
#define DL_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_model.h"

typedef struct DlCudaModel DlCudaModel;

/* One GPU, as gpu_configuration lists it. */
typedef struct DlCudaDeviceInfo
{
	char		name[256];		/* e.g. "NVIDIA H200" */
	size_t		total_mem;		/* bytes */
	int			cc_major;		/* compute capability */
	int			cc_minor;
	int			pci_domain;		/* PCI location */
	int			pci_bus;
	int			pci_device;
	unsigned char uuid[16];		/* as nvidia-smi -L prints it */
} DlCudaDeviceInfo;

/* True when this build has the CUDA backend. */
bool		dl_cuda_built(void);

/* Number of usable GPUs: 0 without CUDA, without a driver or without devices. */
int			dl_cuda_device_count(void);

/* Describe device (0 <= device < dl_cuda_device_count()). */
DlStatus	dl_cuda_device_info(int device, DlCudaDeviceInfo *info, DlError *err);

/*
 * Build a GPU model for spec on device with optimizer optim (not NULL).
 * The allocator (host memory) is copied; spec is borrowed.  Checks that
 * every layer, the optimizer and its settings are supported.
 */
DlStatus	dl_cuda_model_create(const DlModelSpec *spec, const DlOptimConfig *optim,
								 int device, const DlAllocator *alloc, DlCudaModel **out,
								 DlError *err);

/* Release all device memory, the cuBLAS handle and the stream.  cm may be NULL. */
void		dl_cuda_model_free(DlCudaModel *cm);

/*
 * TF32 tensor cores for the sgemms (off by default: fp32 throughout).
 * Faster on Ampere and later, with ~1e-3 relative error per product
 * (10-bit mantissa inputs); see docs/gpu.md.
 */
void		dl_cuda_model_set_tf32(DlCudaModel *cm, bool on);

/*
 * Copy host's parameters, optimizer state (slots, iterations, Nadam
 * schedule) and rng to the GPU model.  host must have been built from the
 * same spec and optimizer config.
 */
DlStatus	dl_cuda_model_load(DlCudaModel *cm, const DlModel *host, DlError *err);

/* Copy them back into host (waits for the GPU). */
DlStatus	dl_cuda_model_store(DlCudaModel *cm, DlModel *host, DlError *err);

/*
 * Upload N samples (replacing the previous data).
 *	 x (N, input size)  y (N, y_width)
 * y_width is dl_loss_y_width(loss, K) of the loss used with this data.
 */
DlStatus	dl_cuda_model_set_data(DlCudaModel *cm, const float *x, const float *y, int64_t N,
								   int64_t y_width, DlError *err);

/*
 * One pass over the uploaded data, as dl_model_train_epoch: shuffled on the
 * host with the model rng (the same permutation the CPU would use), in
 * mini-batches of cfg->batch_size.  Labels are checked on the host at
 * set_data time by the caller (dl_loss_check_labels).  Adds to stats.
 * DL_ERR_DIVERGED when the loss or a weight became non-finite; the GPU
 * stops updating at that batch.
 */
DlStatus	dl_cuda_model_train_epoch(DlCudaModel *cm, const DlTrainConfig *cfg,
									  DlBatchStats *stats, DlError *err);

/* Loss and metric of the uploaded data in inference mode, added to stats. */
DlStatus	dl_cuda_model_evaluate(DlCudaModel *cm, const DlTrainConfig *cfg,
								   DlBatchStats *stats, DlError *err);

/*
 * Model outputs for the uploaded data in inference mode.
 *	 out (N, K), host memory
 */
DlStatus	dl_cuda_model_predict(DlCudaModel *cm, float *out, int64_t batch_size, DlError *err);

/*
 * Device bytes a model of spec with optim would hold for batch_size and
 * N samples (state + workspace + data): the per-segment memory bound.
 */
DlStatus	dl_cuda_model_bytes(const DlModelSpec *spec, const DlOptimConfig *optim,
								int64_t batch_size, int64_t N, size_t *out, DlError *err);

#endif							/* DL_CUDA_H */
