/*-------------------------------------------------------------------------
 *
 * dl_backend.h
 *	  Process-wide choice of the convolution kernels: oneDNN or the
 *	  engine's own im2col + sgemm.
 *
 * The engine convolves with oneDNN (Debian's libdnnl) when it was built
 * with it (DL_HAVE_DNNL, detected by the Makefiles) and the choice is
 * DL_CONV_AUTO or DL_CONV_ONEDNN; otherwise, and for geometries oneDNN
 * refuses, with im2col + OpenBLAS sgemm.  Both compute the same
 * convolution; their results differ in the last bits, so a training run
 * is byte-reproducible for a given choice, thread count and machine (as
 * with OpenBLAS's kernel choice).
 *
 * The setting is per process (a PostgreSQL backend or worker): the
 * extension sets it from the GUC madlib_dl.conv_backend before each
 * training or prediction call.  Not thread-safe; the engine is run by
 * one thread per process.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_backend.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_BACKEND_H
#define DL_BACKEND_H

#include <stdbool.h>

typedef enum DlConvBackend
{
	DL_CONV_AUTO = 0,			/* oneDNN when built in, else im2col */
	DL_CONV_IM2COL,				/* always im2col + sgemm */
	DL_CONV_ONEDNN				/* oneDNN; the same as AUTO when built in */
} DlConvBackend;

/* Whether this build links oneDNN. */
bool		dl_backend_onednn_available(void);

/*
 * Choose the convolution kernels.  DL_CONV_ONEDNN without oneDNN built
 * in behaves as DL_CONV_IM2COL (callers that care check
 * dl_backend_onednn_available first).
 */
void		dl_backend_set_conv(DlConvBackend b);

/* Whether convolutions go to oneDNN now. */
bool		dl_backend_conv_uses_onednn(void);

/*
 * Threads oneDNN may use (its OpenMP runtime), default 1: the engine
 * runs one process per core.  Values below 1 count as 1.
 */
void		dl_backend_set_threads(int n);

/* The oneDNN version as "major.minor.patch", or "none". */
const char *dl_backend_onednn_version(void);

#endif							/* DL_BACKEND_H */
