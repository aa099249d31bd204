/*-------------------------------------------------------------------------
 *
 * fuzz_blob_archs.h
 *	  The fixed architectures and optimizers the blob fuzzer loads into,
 *	  shared with the seed generator.
 *
 * An input of fuzz_blob is
 *	 byte 0   bits 0-1: architecture (% FUZZ_N_ARCHS); bits 2-4: optimizer
 *			  kind, 7 = none; bit 7: momentum 0.5 and amsgrad (extra slots)
 *	 byte 1   bit 0: repair the checksum before reading, so that the
 *			  fuzzer reaches the checks after it
 *	 rest     the blob (also read as flat weights)
 *
 * IDENTIFICATION
 *	  test/fuzz/fuzz_blob_archs.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FUZZ_BLOB_ARCHS_H
#define FUZZ_BLOB_ARCHS_H

#include <stdint.h>

#define FUZZ_N_ARCHS 3
#define FUZZ_NO_OPTIM 7
#define FUZZ_PREFIX 2

#define FUZZ_ARCH(b) (((b) & 3) % FUZZ_N_ARCHS)
#define FUZZ_OPTIM(b) (((b) >> 2) & 7)

static const char *const fuzz_archs[FUZZ_N_ARCHS] = {
	/* 4 -> Dense 5 relu -> Dense 3 softmax: 43 parameters */
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"mlp\", \"layers\": ["
	"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4]}},"
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d1\", \"units\": 5, \"activation\": \"relu\"}},"
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d2\", \"units\": 3, \"activation\": \"softmax\"}}]}}",
	/* 4x4x1 -> Conv2D 2 (2x2) -> BatchNormalization -> Flatten -> Dense 2: 64 parameters */
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"cnn\", \"layers\": ["
	"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4, 4, 1]}},"
	"{\"class_name\": \"Conv2D\", \"config\": {\"name\": \"c\", \"filters\": 2, \"kernel_size\": [2, 2], \"activation\": \"relu\"}},"
	"{\"class_name\": \"BatchNormalization\", \"config\": {\"name\": \"bn\"}},"
	"{\"class_name\": \"Flatten\", \"config\": {\"name\": \"f\"}},"
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"units\": 2, \"activation\": \"sigmoid\"}}]}}",
	/* 3 -> Dense 2, frozen -> Dense 1: 11 parameters */
	"{\"class_name\": \"Sequential\", \"config\": {\"name\": \"tiny\", \"layers\": ["
	"{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 3]}},"
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"a\", \"units\": 2, \"trainable\": false}},"
	"{\"class_name\": \"Dense\", \"config\": {\"name\": \"b\", \"units\": 1}}]}}",
};

/* FNV-1a 64, as blob.c computes the checksum */
static inline uint64_t
fuzz_fnv1a64(const uint8_t *buf, size_t n)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++)
	{
		h ^= buf[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#endif							/* FUZZ_BLOB_ARCHS_H */
