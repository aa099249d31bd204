/*-------------------------------------------------------------------------
 *
 * dl_onnx.h
 *	  ONNX interchange: a model of the engine out as an ONNX ModelProto,
 *	  and an ONNX ModelProto in as Keras JSON plus weights.
 *
 * The protobuf encoding is protobuf-c's, generated at build time from the
 * onnx.proto Debian's libonnx-dev ships (src/engine/onnx.pb-c.[ch]).
 * protobuf-c allocates through the caller's DlAllocator (palloc in the
 * server), so parsing a hostile file is bounded by the allocator's
 * checks; every size read from a file is checked against the bytes
 * actually present before anything is allocated for it.
 *
 * Layouts (docs/interchange.md):
 *	 export   inputs and outputs keep the engine's (Keras') layout,
 *	          channels last, with a dynamic batch dimension named "N";
 *	          spatial operators are wrapped in Transposes
 *	 import   inputs keep the ONNX model's layout (NCHW for a PyTorch
 *	          CNN); the conversion to the engine's channels-last layout is
 *	          one Permute layer after the input and weights converted once
 *
 * IDENTIFICATION
 *	  include/madlib_dl/dl_onnx.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef DL_ONNX_H
#define DL_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "madlib_dl/dl_alloc.h"
#include "madlib_dl/dl_spec.h"
#include "madlib_dl/dl_status.h"

/* Largest ONNX file either direction handles (1 GiB, below bytea's cap). */
#define DL_ONNX_MAX_BYTES ((size_t) 1 << 30)

/* Most nodes of an imported graph, a bound for hostile files. */
#define DL_ONNX_MAX_NODES 100000

/* Opsets export writes (ONNX 1.12's operator sets). */
#define DL_ONNX_MIN_OPSET 13
#define DL_ONNX_MAX_OPSET 17

typedef struct DlOnnxExportArgs
{
	const DlModelSpec *spec;	/* finalized */
	const float *params;		/* (spec->n_params), Keras get_weights() order */
	int			opset;			/* DL_ONNX_MIN_OPSET .. DL_ONNX_MAX_OPSET */
	const char *producer_version;	/* may be NULL */
} DlOnnxExportArgs;

/*
 * Serialize the model as an ONNX ModelProto into *out (*out_len bytes,
 * allocated with alloc; free with dl_free).  DL_ERR_UNSUPPORTED names a
 * layer or attribute ONNX export does not cover.
 */
DlStatus	dl_onnx_export(const DlOnnxExportArgs *args, const DlAllocator *alloc,
						   uint8_t **out, size_t *out_len, DlError *err);

typedef struct DlOnnxImport
{
	char	   *json;			/* Keras (tf.keras 2) Functional model JSON, NUL-terminated */
	size_t		json_len;
	float	   *params;			/* (n_params), Keras get_weights() order */
	size_t		n_params;
	int			n_nodes;		/* ONNX nodes read */
	int			n_layers;		/* Keras layers written */
} DlOnnxImport;

/*
 * Convert an ONNX ModelProto (buf, len bytes) into *out.  Errors:
 *	 DL_ERR_CORRUPT      not a ModelProto (truncated, malformed), a tensor
 *	                     whose data is shorter than its dimensions declare
 *	 DL_ERR_UNSUPPORTED  an operator or attribute not covered: the message
 *	                     names the node and its op_type, the hint lists
 *	                     the supported operators
 *	 DL_ERR_SHAPE        an input without a fixed per-sample shape,
 *	                     operands that do not fit together
 *	 DL_ERR_INVALID_ARGUMENT  a cycle, or a tensor no node produces
 *	 DL_ERR_LIMIT        a size cap exceeded
 * Free *out with dl_onnx_import_free (also safe after an error).
 */
DlStatus	dl_onnx_import(const uint8_t *buf, size_t len, const DlAllocator *alloc,
						   DlOnnxImport *out, DlError *err);

void		dl_onnx_import_free(DlOnnxImport *imp, const DlAllocator *alloc);

/* The operators import supports, comma-separated (for hints and docs). */
const char *dl_onnx_import_ops(void);

#endif							/* DL_ONNX_H */
