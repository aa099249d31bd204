/*-------------------------------------------------------------------------
 *
 * gpu.c
 *	  The GPUs of this host, for gpu_configuration (src/sql/gpu.sql):
 *	  madlib_dl._gpu_list describes each NVIDIA GPU as TensorFlow or
 *	  nvidia-smi -L would, from what the NVIDIA driver writes in
 *	  /proc/driver/nvidia/gpus/<PCI bus>/information.
 *
 * madlib_dl has no GPU backend in this release (docs/gpu.md): nothing
 * here uses CUDA, and fit, fit_multiple, evaluate and predict refuse
 * use_gpus => true.  The list is informational, as MADlib's
 * gpu_configuration is, and needs no CUDA toolkit, only the driver.
 *
 * IDENTIFICATION
 *	  src/pg/api/gpu.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "pg_util.h"

PG_FUNCTION_INFO_V1(madlib_dl__gpu_list);

/* Where the NVIDIA driver lists its GPUs, one directory per PCI bus. */
#define GPU_PROC_DIR "/proc/driver/nvidia/gpus"

/* The driver writes about 500 bytes per GPU; anything past this is not its file. */
#define GPU_INFO_MAX_BYTES 65536

/* One GPU, from its information text. */
typedef struct GpuInfo
{
	char	   *model;			/* "Model:" */
	char	   *uuid;			/* "GPU UUID:" */
	char	   *bus;			/* "Bus Location:" */
	bool		excluded;		/* "GPU Excluded: Yes" (older drivers: "Blacklisted: Yes") */
} GpuInfo;

/*
 * The value of the line "key: value" of text (the key at the start of the
 * line, spaces and tabs around the value dropped), or NULL when no line has
 * that key or its value is empty.
 */
static char *
info_field(const char *text, const char *key)
{
	size_t		klen = strlen(key);
	const char *line = text;

	while (*line != '\0')
	{
		const char *eol = strchr(line, '\n');
		const char *end = eol != NULL ? eol : line + strlen(line);

		if ((size_t) (end - line) > klen && strncmp(line, key, klen) == 0 && line[klen] == ':')
		{
			const char *v = line + klen + 1;

			while (v < end && isspace((unsigned char) *v))
				v++;
			while (end > v && isspace((unsigned char) end[-1]))
				end--;
			return end > v ? pnstrdup(v, end - v) : NULL;
		}
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	return NULL;
}

static char *
info_required(const char *text, const char *key, const char *label)
{
	char	   *v = info_field(text, key);

	if (v == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("GPU information in %s has no \"%s:\" line", label, key),
				 errhint("gpu_configuration reads the NVIDIA driver's %s/*/information files; nvidia-smi -L lists the GPUs the driver sees.",
						 GPU_PROC_DIR)));
	return v;
}

static bool
info_yes(const char *text, const char *key)
{
	char	   *v = info_field(text, key);

	return v != NULL && pg_strncasecmp(v, "yes", 3) == 0;
}

/* Parse one information text (valid in the server encoding). */
static void
info_parse(GpuInfo *g, const char *text, const char *label)
{
	g->model = info_required(text, "Model", label);
	g->uuid = info_required(text, "GPU UUID", label);
	g->bus = info_required(text, "Bus Location", label);
	g->excluded = info_yes(text, "GPU Excluded") || info_yes(text, "Blacklisted");
}

/* GPUs in PCI bus order, as nvidia-smi numbers them. */
static int
gpu_cmp(const void *a, const void *b)
{
	return strcmp(((const GpuInfo *) a)->bus, ((const GpuInfo *) b)->bus);
}

/* The whole of a small file; ERROR when it cannot be read or is too large. */
static char *
read_small_file(const char *path)
{
	FILE	   *f = AllocateFile(path, "r");
	StringInfoData buf;
	char		chunk[4096];
	size_t		got;

	if (f == NULL)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	initStringInfo(&buf);
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
	{
		if (buf.len + got > GPU_INFO_MAX_BYTES)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("file \"%s\" is larger than %d bytes", path, GPU_INFO_MAX_BYTES),
					 errhint("It is not the NVIDIA driver's GPU information; nvidia-smi -L lists the GPUs.")));
		appendBinaryStringInfo(&buf, chunk, (int) got);
	}
	if (ferror(f))
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read file \"%s\": %m", path)));
	FreeFile(f);
	return buf.data;
}

/*
 * The information files of this host's NVIDIA GPUs (one directory per
 * GPU); none when the driver is not loaded.  Each text is checked to be
 * valid in the server encoding.
 */
static int
read_host_information(char ***texts_out, char ***labels_out)
{
	DIR		   *dir = AllocateDir(GPU_PROC_DIR);
	struct dirent *de;
	char	  **names;
	int			n = 0,
				cap = 8;

	*texts_out = NULL;
	*labels_out = NULL;
	if (dir == NULL)
	{
		if (errno == ENOENT)
			return 0;			/* no NVIDIA driver: no GPUs */
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open directory \"%s\": %m", GPU_PROC_DIR)));
	}
	names = palloc(cap * sizeof(char *));
	while ((de = ReadDir(dir, GPU_PROC_DIR)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		if (de->d_name[0] == '.')
			continue;
		if (n == cap)
		{
			cap *= 2;
			names = repalloc(names, cap * sizeof(char *));
		}
		names[n++] = pstrdup(de->d_name);
	}
	FreeDir(dir);
	if (n == 0)
		return 0;
	*texts_out = palloc(n * sizeof(char *));
	*labels_out = palloc(n * sizeof(char *));
	for (int i = 0; i < n; i++)
	{
		char	   *path = psprintf("%s/%s/information", GPU_PROC_DIR, names[i]);
		char	   *text = read_small_file(path);

		CHECK_FOR_INTERRUPTS();
		pg_verifymbstr(text, strlen(text), false);
		(*texts_out)[i] = text;
		(*labels_out)[i] = psprintf("file \"%s\"", path);
	}
	return n;
}

/* The texts of a text[] argument; ERROR on a NULL element. */
static int
array_information(ArrayType *a, char ***texts_out, char ***labels_out)
{
	Datum	   *d;
	bool	   *nulls;
	int			n;

	deconstruct_array(a, TEXTOID, -1, false, TYPALIGN_INT, &d, &nulls, &n);
	*texts_out = palloc((n > 0 ? n : 1) * sizeof(char *));
	*labels_out = palloc((n > 0 ? n : 1) * sizeof(char *));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("information[%d] is NULL", i + 1),
					 errhint("Give the text of one /proc/driver/nvidia/gpus/*/information file per element.")));
		(*texts_out)[i] = TextDatumGetCString(d[i]);
		(*labels_out)[i] = psprintf("information[%d]", i + 1);
	}
	return n;
}

/*
 * Whether source (gpu_list's argument) is 'nvidia' rather than
 * 'tensorflow'.  ERROR 22023 for anything else or NULL.
 */
static bool
gpu_source_is_nvidia(const char *source)
{
	if (source != NULL && strcmp(source, "nvidia") == 0)
		return true;
	if (source != NULL && strcmp(source, "tensorflow") == 0)
		return false;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("source must be 'tensorflow' or 'nvidia', got %s",
					source != NULL ? quote_literal_cstr(source) : "NULL"),
			 errhint("Pass 'tensorflow' or 'nvidia'.")));
	pg_unreachable();
}

/*
 * _gpu_list(source text, information text[]) RETURNS TABLE (hostname
 * text, gpu_descr text): one row per GPU, numbered from 0 in PCI bus
 * order, GPUs the driver excludes left out.  information NULL reads this
 * host's files; otherwise its elements are taken as the texts of such
 * files (how the regression test checks the parsing without a GPU).
 * source is 'tensorflow' or 'nvidia' (checked by the SQL caller):
 *	 tensorflow: "device: 0, name: NVIDIA H200, pci bus id: 0000:18:00.0"
 *	 nvidia:     "GPU 0: NVIDIA H200 (UUID: GPU-...)"
 * TensorFlow also prints the compute capability, which the driver's file
 * does not give (only the CUDA runtime does), so it is left out.
 */
Datum
madlib_dl__gpu_list(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bool		nvidia;
	char		host[256];
	char	  **texts;
	char	  **labels;
	GpuInfo    *gpus;
	int			n;
	int			device = 0;

	nvidia = gpu_source_is_nvidia(dl_pg_text_arg(fcinfo, 0));

	InitMaterializedSRF(fcinfo, 0);
	/* 0.1.0's _gpu_list(source) has no second argument: the host's GPUs */
	if (PG_NARGS() < 2 || PG_ARGISNULL(1))
		n = read_host_information(&texts, &labels);
	else
		n = array_information(PG_GETARG_ARRAYTYPE_P(1), &texts, &labels);
	if (n == 0)
		return (Datum) 0;

	gpus = palloc(n * sizeof(GpuInfo));
	for (int i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		info_parse(&gpus[i], texts[i], labels[i]);
	}
	qsort(gpus, n, sizeof(GpuInfo), gpu_cmp);

	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "localhost", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	for (int i = 0; i < n; i++)
	{
		const GpuInfo *g = &gpus[i];
		Datum		values[2];
		bool		nulls[2] = {false, false};
		char	   *descr;

		if (g->excluded)
			continue;
		if (nvidia)				/* nvidia-smi -L */
			descr = psprintf("GPU %d: %s (UUID: %s)", device, g->model, g->uuid);
		else					/* TensorFlow's physical device description */
			descr = psprintf("device: %d, name: %s, pci bus id: %s", device, g->model, g->bus);
		device++;
		values[0] = CStringGetTextDatum(host);
		values[1] = CStringGetTextDatum(descr);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
