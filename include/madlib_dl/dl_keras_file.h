/*-------------------------------------------------------------------------
 *
 * dl_keras_file.h
 *	  Keras model files in: a .keras archive (Keras 3 and Keras 2.13+,
 *	  the "v3" format) or a legacy .h5 (model.save('m.h5')), decoded into
 *	  the model's JSON config and its named float32 tensors.
 *
 * The zip is read with libzip and the HDF5 with libhdf5, both from
 * memory.  Every file is treated as hostile: the file size, each zip
 * entry's uncompressed size, the number of tensors, each dataset's
 * declared dimensions (an overflow-checked product) and the total of the
 * tensors' bytes are checked against DlKerasFileLimits before anything is
 * allocated for them.  libhdf5 1.10 is known to crash on some malformed
 * files, so the server runs dl_keras_file_decode in a child process and
 * reads back what dl_keras_file_encode wrote there with
 * dl_keras_file_parse, which checks every length it reads
 * (src/pg/api/keras_file.c).
 *
 * A tensor is named by its layer and its position among that layer's
 * weights (Keras' own order: Dense kernel, bias; BatchNormalization
 * gamma, beta, moving_mean, moving_variance):
 *	 .keras   model.weights.h5: layers/<layer>/vars/<i> (Keras 3; nested
 *	          models layers/<model>/layers/<layer>/vars/<i>; a layer's
 *	          sub-objects, e.g. an LSTM's cell/vars/<i>, after its own
 *	          vars) or _layer_checkpoint_dependencies/<layer>/vars/<i>
 *	          (Keras 2.13 to 2.15)
 *	 .h5      model_weights/<layer>/<weight_names[i]>, the layer groups
 *	          named by model_weights' layer_names attribute (a nested
 *	          model's group holds its inner layers' weights, weight_names
 *	          "<inner layer>/kernel:0": named by the inner layer)
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_keras_file.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_KERAS_FILE_H
#define DL_KERAS_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_status.h"

#define DL_KERAS_FILE_MAX_DIMS 8

typedef enum DlKerasFileFormat
{
	DL_KERAS_FILE_KERAS = 1,	/* .keras zip: config.json + model.weights.h5 */
	DL_KERAS_FILE_H5 = 2		/* legacy HDF5: model_config + model_weights */
} DlKerasFileFormat;

typedef struct DlKerasFileTensor
{
	char	   *layer;			/* the layer's name */
	char	   *path;			/* the dataset's path in the HDF5 file */
	uint32_t	index;			/* position among the layer's weights, from 0 */
	uint32_t	ndim;
	uint64_t	dims[DL_KERAS_FILE_MAX_DIMS];
	size_t		count;			/* product of dims (1 for a scalar) */
	float	   *data;			/* count floats */
} DlKerasFileTensor;

typedef struct DlKerasFile
{
	DlKerasFileFormat format;
	char	   *config;			/* the model's Keras JSON, NUL-terminated */
	size_t		config_len;
	size_t		n_tensors;
	DlKerasFileTensor *tensors; /* in the file's order */
} DlKerasFile;

typedef struct DlKerasFileLimits
{
	size_t		max_file;		/* bytes of the input file */
	size_t		max_entry;		/* uncompressed bytes of one zip entry */
	size_t		max_config;		/* bytes of the JSON config */
	size_t		max_tensors;	/* number of tensors */
	size_t		max_bytes;		/* bytes of all tensors together (float32) */
} DlKerasFileLimits;

/*
 * Decode a .keras or .h5 file (told apart by their first bytes) into out,
 * every buffer from a.  DL_ERR_CORRUPT for a truncated or malformed file,
 * DL_ERR_INVALID_ARGUMENT for a file that is neither, DL_ERR_UNSUPPORTED
 * for a dataset that is not float, DL_ERR_LIMIT over a limit.  On failure
 * out holds nothing to free.
 */
DlStatus	dl_keras_file_decode(const uint8_t *buf, size_t len, const DlKerasFileLimits *lim,
								 const DlAllocator *a, DlKerasFile *out, DlError *err);

/* Free what dl_keras_file_decode or dl_keras_file_parse put in f. */
void		dl_keras_file_free(const DlAllocator *a, DlKerasFile *f);

/*
 * Serialize the outcome of a decode: status and error when st is not
 * DL_OK, else f (length-prefixed, native byte order: it travels from a
 * child to its parent).  *buf from a.
 */
DlStatus	dl_keras_file_encode(DlStatus st, const DlError *st_err, const DlKerasFile *f,
								 const DlAllocator *a, uint8_t **buf, size_t *len, DlError *err);

/*
 * Read back what dl_keras_file_encode wrote: the decode's own error (its
 * status and message) or the file into out.  Every length and count is
 * checked against len and lim before any allocation (the tensor count
 * against the bytes left, so that what it allocates stays proportional
 * to len; test/fuzz/fuzz_keras_file.c): DL_ERR_CORRUPT for bytes that
 * are not such a record, an error record with no message or with bytes
 * after it included.
 */
DlStatus	dl_keras_file_parse(const uint8_t *buf, size_t len, const DlKerasFileLimits *lim,
								const DlAllocator *a, DlKerasFile *out, DlError *err);

/* The most bytes dl_keras_file_encode writes for a file within lim. */
size_t		dl_keras_file_encoded_max(const DlKerasFileLimits *lim);

#endif							/* DL_KERAS_FILE_H */
