/*-------------------------------------------------------------------------
 *
 * dl_backend.h
 *	  Process-wide choice of the compute kernels: oneDNN, or OpenBLAS
 *	  with the engine's own im2col.
 *
 * The engine computes Conv2D layers with oneDNN's convolutions and the
 * matrix products of Dense layers with oneDNN's sgemm (Debian's libdnnl,
 * the library Debian's PyTorch uses for its CPU convolutions) when it was
 * built with it (DL_HAVE_DNNL, detected by the Makefiles) and the choice
 * is DL_BACKEND_AUTO or DL_BACKEND_ONEDNN; otherwise, and for convolution
 * geometries oneDNN refuses, with OpenBLAS sgemm (im2col for
 * convolutions).  Both compute the same functions; their results differ
 * in the last bits, so a training run is byte-reproducible for a given
 * choice, thread count and machine (as with OpenBLAS's kernel choice).
 * oneDNN picks its instruction set from the CPU (AVX-512 where there is
 * one); OpenBLAS from the CPU or OPENBLAS_CORETYPE.
 *
 * The setting is per process (a PostgreSQL backend or worker): the
 * extension sets it from the GUC madlib_dl.backend.  Not thread-safe;
 * the engine is run by one thread per process.
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_backend.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_BACKEND_H
#define DL_BACKEND_H

#include <stdbool.h>

typedef enum DlBackend
{
	DL_BACKEND_AUTO = 0,		/* oneDNN when built in, else OpenBLAS */
	DL_BACKEND_OPENBLAS,		/* OpenBLAS sgemm, im2col convolutions */
	DL_BACKEND_ONEDNN			/* oneDNN; the same as AUTO when built in */
} DlBackend;

/* Whether this build links oneDNN. */
bool		dl_backend_onednn_available(void);

/*
 * Choose the kernels.  DL_BACKEND_ONEDNN without oneDNN built in behaves
 * as DL_BACKEND_OPENBLAS (callers that care check
 * dl_backend_onednn_available first).
 */
void		dl_backend_set(DlBackend b);

/* Whether convolutions and Dense products go to oneDNN now. */
bool		dl_backend_uses_onednn(void);

/*
 * Threads OpenBLAS and oneDNN (its OpenMP runtime) may use, default 1:
 * the engine runs one process per core.  Values below 1 count as 1.
 * Every helper thread either library starts has all signals blocked
 * (backend.c says how), so that signals reach only the calling thread.
 */
void		dl_backend_set_threads(int n);

/* The oneDNN version as "major.minor.patch", or "none". */
const char *dl_backend_onednn_version(void);

#endif							/* DL_BACKEND_H */
