/*-------------------------------------------------------------------------
 *
 * keras_file.c
 *	  Keras model files (.keras archives and legacy .h5) decoded into the
 *	  model's JSON config and its tensors, and the length-prefixed record
 *	  that carries the outcome from the server's decoding child back to
 *	  the backend (include/madlib_dl/dl_keras_file.h).
 *
 * libzip reads the archive and libhdf5 the weights, both from memory
 * (zip_source_buffer_create; HDF5's core driver with a file image).
 * libhdf5's error printing is turned off: every failure becomes a
 * DlStatus here.  The libraries allocate with their own malloc, as
 * json-c does; what the caller gets comes from its DlAllocator.
 *
 * IDENTIFICATION
 *	  src/engine/keras_file.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <json-c/json.h>
#include <zip.h>

#include "madlib_dl/dl_keras_file.h"

#include "keras_internal.h"

#define ZIP_MAGIC "PK\003\004"
#define HDF5_MAGIC "\211HDF\r\n\032\n"
#define KF_MAX_DEPTH 32			/* groups within groups */
#define KF_MAX_LINKS 100000		/* members of one group, groups visited */
#define KF_MAX_NAME 1024		/* bytes of a group, dataset or layer name */
#define KF_MAX_PATH 4096		/* bytes of a path in the file */
#define KF_HINT "Give the bytes of a file Keras wrote: model.save('m.keras') or model.save('m.h5')."

/* What a walk over an HDF5 file collects. */
typedef struct KfState
{
	const DlAllocator *a;
	const DlKerasFileLimits *lim;
	DlError    *err;
	DlKerasFile *out;
	size_t		cap;			/* tensors allocated */
	size_t		bytes;			/* bytes of the tensors so far */
	size_t		visited;		/* groups visited */
} KfState;

static char *
kf_strdup(const DlAllocator *a, const char *s, size_t n, DlError *err)
{
	char	   *p = dl_alloc(a, n + 1, err);

	if (p != NULL && n)
		memcpy(p, s, n);
	return p;
}

void
dl_keras_file_free(const DlAllocator *a, DlKerasFile *f)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < f->n_tensors && f->tensors != NULL; i++)
	{
		dl_free(a, f->tensors[i].layer);
		dl_free(a, f->tensors[i].path);
		dl_free(a, f->tensors[i].data);
	}
	dl_free(a, f->tensors);
	dl_free(a, f->config);
	memset(f, 0, sizeof(*f));
}

/* ------------------------------------------------------------------ */
/* HDF5                                                               */
/* ------------------------------------------------------------------ */


/*
 * Open attribute name of obj: its id, type, space and element count (the
 * ids -1 and n -1 where HDF5 fails; the caller checks).  false, with err
 * set, when obj has no such attribute.
 */
static bool
attr_open(hid_t obj, const char *name, hid_t *attr, hid_t *type, hid_t *space, hssize_t *n, DlError *err)
{
	if (H5Aexists(obj, name) <= 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the HDF5 file has no attribute \"%s\"", name);
		return false;
	}
	*attr = H5Aopen(obj, name, H5P_DEFAULT);
	*type = *attr < 0 ? -1 : H5Aget_type(*attr);
	*space = *attr < 0 ? -1 : H5Aget_space(*attr);
	*n = *space < 0 ? -1 : H5Sget_simple_extent_npoints(*space);
	return true;
}

/*
 * The total bytes of fixed-length strings of sz bytes each, read from
 * attr through mem (a copy of its string type), NUL-terminated at
 * total; NULL with err set when they cannot be read.
 */
static char *
attr_read_fixed(hid_t attr, hid_t mem, size_t sz, size_t total, const char *name,
				const DlAllocator *a, DlError *err)
{
	char	   *p = dl_alloc(a, total + 1, err);

	if (p == NULL)
		return NULL;
	if (mem < 0 || H5Tset_size(mem, sz) < 0 || H5Tset_strpad(mem, H5T_STR_NULLPAD) < 0 || H5Aread(attr, mem, p) < 0)
	{
		dl_free(a, p);
		dl_error_set(err, DL_ERR_CORRUPT, "the HDF5 attribute \"%s\" cannot be read", name);
		return NULL;
	}
	return p;
}

/* Close what an attribute read opened (the ids below 0 were never opened). */
static void
attr_close(hid_t attr, hid_t type, hid_t space, hid_t mem)
{
	if (mem >= 0)
		H5Tclose(mem);
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	if (attr >= 0)
		H5Aclose(attr);
}

/*
 * A string attribute of obj (a scalar), fixed (read NULLPAD: all its
 * bytes, the NUL added here) or
 * variable length, into a malloc'd NUL-terminated buffer of at most max
 * bytes.  NULL (err set) when absent, not a string or too long.
 */
static char *
kf_h5_string_attr(hid_t obj, const char *name, size_t max, const DlAllocator *a, size_t *len, DlError *err)
{
	hid_t		attr = -1,
				type = -1,
				mem = -1,
				space = -1;
	char	   *res = NULL;
	hssize_t	n;

	if (!attr_open(obj, name, &attr, &type, &space, &n, err))
		return NULL;
	if (type < 0 || space < 0 || H5Tget_class(type) != H5T_STRING || n != 1)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the HDF5 attribute \"%s\" is not a string", name);
		goto done;
	}
	mem = H5Tcopy(H5T_C_S1);
	if (H5Tis_variable_str(type) > 0)
	{
		char	   *p = NULL;

		if (mem < 0 || H5Tset_size(mem, H5T_VARIABLE) < 0 || H5Tset_cset(mem, H5Tget_cset(type)) < 0 ||
			H5Aread(attr, mem, &p) < 0 || p == NULL)
		{
			dl_error_set(err, DL_ERR_CORRUPT, "the HDF5 attribute \"%s\" cannot be read", name);
			goto done;
		}
		*len = strnlen(p, max + 1);
		if (*len > max)
			dl_error_set(err, DL_ERR_LIMIT, "the HDF5 attribute \"%s\" is longer than %zu bytes", name, max);
		else
			res = kf_strdup(a, p, *len, err);
		H5free_memory(p);
	}
	else
	{
		size_t		sz = H5Tget_size(type);
		char	   *p;

		if (sz == 0 || sz > max)
		{
			dl_error_set(err, DL_ERR_LIMIT, "the HDF5 attribute \"%s\" has %zu bytes, more than %zu", name, sz, max);
			goto done;
		}
		p = attr_read_fixed(attr, mem, sz, sz, name, a, err);
		if (p == NULL)
			goto done;
		*len = strnlen(p, sz);
		res = p;
	}
done:
	attr_close(attr, type, space, mem);
	return res;
}

/*
 * A list of strings attribute (layer_names, weight_names: fixed-length
 * bytes as Keras 2 writes them, or variable-length) as *n strings from a.
 */
static char **
kf_h5_string_list(hid_t obj, const char *name, const DlAllocator *a, size_t max_n, size_t *n_out, DlError *err)
{
	hid_t		attr = -1,
				type = -1,
				mem = -1,
				space = -1;
	char	  **res = NULL;
	hssize_t	n;
	size_t		i = 0;

	*n_out = 0;
	if (!attr_open(obj, name, &attr, &type, &space, &n, err))
		return NULL;
	if (n == 0 && type >= 0)
	{
		/* no names: Keras 2 writes np.asarray([]), an empty float64 array */
		res = dl_alloc_array(a, 1, sizeof(char *), err);
		goto done;
	}
	if (type < 0 || space < 0 || H5Tget_class(type) != H5T_STRING || n < 0 || H5Sget_simple_extent_ndims(space) > 1)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the HDF5 attribute \"%s\" is not a list of strings", name);
		goto done;
	}
	if ((size_t) n > max_n)
	{
		dl_error_set(err, DL_ERR_LIMIT, "the HDF5 attribute \"%s\" lists %lld names, more than %zu",
					 name, (long long) n, max_n);
		goto done;
	}
	res = dl_alloc_array(a, (size_t) n + 1, sizeof(char *), err);
	if (res == NULL)
		goto done;
	mem = H5Tcopy(H5T_C_S1);
	if (H5Tis_variable_str(type) > 0)
	{
		char	  **p = dl_alloc_array(a, (size_t) n + 1, sizeof(char *), err);

		if (p == NULL)
			goto fail;
		if (mem < 0 || H5Tset_size(mem, H5T_VARIABLE) < 0 || H5Tset_cset(mem, H5Tget_cset(type)) < 0 ||
			H5Aread(attr, mem, p) < 0)
		{
			dl_free(a, p);
			dl_error_set(err, DL_ERR_CORRUPT, "the HDF5 attribute \"%s\" cannot be read", name);
			goto fail;
		}
		for (i = 0; i < (size_t) n; i++)
		{
			size_t		l = p[i] ? strnlen(p[i], KF_MAX_NAME + 1) : 0;

			if (l > KF_MAX_NAME)
			{
				dl_error_set(err, DL_ERR_LIMIT, "a name in the HDF5 attribute \"%s\" is longer than %d bytes",
							 name, KF_MAX_NAME);
				break;
			}
			if ((res[i] = kf_strdup(a, p[i] ? p[i] : "", l, err)) == NULL)
				break;
		}
#if H5_VERSION_GE(1, 12, 0)
		H5Treclaim(mem, space, H5P_DEFAULT, p);
#else
		H5Dvlen_reclaim(mem, space, H5P_DEFAULT, p);
#endif
		dl_free(a, p);
		if (i < (size_t) n)
			goto fail;
	}
	else
	{
		size_t		sz = H5Tget_size(type),
					total;
		char	   *p;

		if (sz == 0 || sz > KF_MAX_NAME || !dl_size_mul(sz, (size_t) n, &total))
		{
			dl_error_set(err, DL_ERR_LIMIT, "the names of the HDF5 attribute \"%s\" are longer than %d bytes",
						 name, KF_MAX_NAME);
			goto fail;
		}
		p = attr_read_fixed(attr, mem, sz, total, name, a, err);
		if (p == NULL)
			goto fail;
		for (i = 0; i < (size_t) n; i++)
			if ((res[i] = kf_strdup(a, p + i * sz, strnlen(p + i * sz, sz), err)) == NULL)
				break;
		dl_free(a, p);
		if (i < (size_t) n)
			goto fail;
	}
	*n_out = (size_t) n;
	goto done;
fail:
	for (size_t k = 0; k < (size_t) n; k++)
		dl_free(a, res[k]);
	dl_free(a, res);
	res = NULL;
done:
	attr_close(attr, type, space, mem);
	return res;
}

static void
kf_free_list(const DlAllocator *a, char **l, size_t n)
{
	for (size_t i = 0; l != NULL && i < n; i++)
		dl_free(a, l[i]);
	dl_free(a, l);
}

/* Read dataset path (relative to loc) as the next tensor of layer. */
static DlStatus
kf_h5_read_tensor(KfState *s, hid_t loc, const char *path, const char *full, const char *layer, uint32_t index)
{
	hid_t		ds,
				type = -1,
				space = -1;
	int			ndim;
	hsize_t		dims[DL_KERAS_FILE_MAX_DIMS];
	DlKerasFileTensor *t;
	size_t		count = 1,
				nbytes;
	DlStatus	st = DL_OK;
	H5T_class_t cls;

	if (s->out->n_tensors >= s->lim->max_tensors)
		return dl_error_set(s->err, DL_ERR_LIMIT, "the file holds more than %zu tensors", s->lim->max_tensors);
	ds = H5Dopen2(loc, path, H5P_DEFAULT);
	if (ds < 0)
		return dl_error_set(s->err, DL_ERR_CORRUPT, "the HDF5 dataset \"%s\" of layer \"%s\" is missing or unreadable",
							full, layer);
	type = H5Dget_type(ds);
	space = H5Dget_space(ds);
	ndim = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
	if (type < 0 || ndim < 0)
	{
		st = dl_error_set(s->err, DL_ERR_CORRUPT, "the HDF5 dataset \"%s\" cannot be read", full);
		goto done;
	}
	if (ndim > DL_KERAS_FILE_MAX_DIMS)
	{
		st = dl_error_set(s->err, DL_ERR_UNSUPPORTED, "the HDF5 dataset \"%s\" has %d dimensions, more than %d",
						  full, ndim, DL_KERAS_FILE_MAX_DIMS);
		goto done;
	}
	cls = H5Tget_class(type);
	if (cls != H5T_FLOAT || (H5Tget_size(type) != 2 && H5Tget_size(type) != 4 && H5Tget_size(type) != 8))
	{
		st = dl_error_set(s->err, DL_ERR_UNSUPPORTED,
						  "the HDF5 dataset \"%s\" of layer \"%s\" holds %s of %zu bytes, not float16, float32 or float64",
						  full, layer,
						  cls == H5T_INTEGER ? "integers" : cls == H5T_FLOAT ? "floats" :
						  cls == H5T_STRING ? "strings" : "values", H5Tget_size(type));
		dl_error_hint(s->err, "Keras weights are floats: cast the model's weights to float32 before saving it.");
		goto done;
	}
	if (ndim > 0 && H5Sget_simple_extent_dims(space, dims, NULL) != ndim)
	{
		st = dl_error_set(s->err, DL_ERR_CORRUPT, "the HDF5 dataset \"%s\" has no readable shape", full);
		goto done;
	}
	for (int d = 0; d < ndim; d++)
		if (dims[d] > SIZE_MAX || !dl_size_mul(count, (size_t) dims[d], &count))
		{
			st = dl_error_set(s->err, DL_ERR_LIMIT, "the HDF5 dataset \"%s\" declares too many values", full);
			goto done;
		}
	if (!dl_size_mul(count, sizeof(float), &nbytes) || nbytes > s->lim->max_bytes ||
		s->bytes + nbytes > s->lim->max_bytes)
	{
		st = dl_error_set(s->err, DL_ERR_LIMIT,
						  "the weights of the file (dataset \"%s\": %zu values) are over the limit of %zu bytes",
						  full, count, s->lim->max_bytes);
		dl_error_hint(s->err, "madlib_dl.max_model_memory bounds the weights a file may hold.");
		goto done;
	}
	if (s->out->n_tensors == s->cap)
	{
		size_t		ncap = s->cap ? s->cap * 2 : 16;
		DlKerasFileTensor *nt = dl_alloc_array(s->a, ncap, sizeof(DlKerasFileTensor), s->err);

		if (nt == NULL)
		{
			st = s->err->code;
			goto done;
		}
		if (s->out->n_tensors)
			memcpy(nt, s->out->tensors, s->out->n_tensors * sizeof(DlKerasFileTensor));
		dl_free(s->a, s->out->tensors);
		s->out->tensors = nt;
		s->cap = ncap;
	}
	t = &s->out->tensors[s->out->n_tensors];
	memset(t, 0, sizeof(*t));
	t->layer = kf_strdup(s->a, layer, strlen(layer), s->err);
	t->path = kf_strdup(s->a, full, strlen(full), s->err);
	t->data = dl_alloc(s->a, nbytes, s->err);
	s->out->n_tensors++;
	if (t->layer == NULL || t->path == NULL || t->data == NULL)
	{
		st = s->err->code;
		goto done;
	}
	t->index = index;
	t->ndim = (uint32_t) ndim;
	for (int d = 0; d < ndim; d++)
		t->dims[d] = dims[d];
	t->count = count;
	if (count && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t->data) < 0)
	{
		st = dl_error_set(s->err, DL_ERR_CORRUPT, "the HDF5 dataset \"%s\" of layer \"%s\" cannot be read (truncated or corrupt)",
						  full, layer);
		goto done;
	}
	s->bytes += nbytes;
done:
	if (space >= 0)
		H5Sclose(space);
	if (type >= 0)
		H5Tclose(type);
	H5Dclose(ds);
	return st;
}

/* Whether member name of g is a group (opened into *out) */
static bool
kf_h5_open_group(hid_t g, const char *name, hid_t *out)
{
	H5O_type_t	ot;

	if (H5Lexists(g, name, H5P_DEFAULT) <= 0)
		return false;
	if (H5Oexists_by_name(g, name, H5P_DEFAULT) <= 0)
		return false;
	{
		hid_t		o = H5Oopen(g, name, H5P_DEFAULT);

		if (o < 0)
			return false;
		ot = H5Iget_type(o) == H5I_GROUP ? H5O_TYPE_GROUP : H5O_TYPE_UNKNOWN;
		if (ot != H5O_TYPE_GROUP)
		{
			H5Oclose(o);
			return false;
		}
		*out = o;
	}
	return true;
}

/* The names of g's members, in HDF5's name order. */
static char **
kf_h5_members(KfState *s, hid_t g, const char *path, size_t *n_out)
{
	H5G_info_t	info;
	char	  **names;
	size_t		i;

	*n_out = 0;
	if (H5Gget_info(g, &info) < 0)
	{
		dl_error_set(s->err, DL_ERR_CORRUPT, "the HDF5 group \"%s\" cannot be read", path);
		return NULL;
	}
	if (info.nlinks > KF_MAX_LINKS)
	{
		dl_error_set(s->err, DL_ERR_LIMIT, "the HDF5 group \"%s\" has %llu members, more than %d",
					 path, (unsigned long long) info.nlinks, KF_MAX_LINKS);
		return NULL;
	}
	names = dl_alloc_array(s->a, (size_t) info.nlinks + 1, sizeof(char *), s->err);
	if (names == NULL)
		return NULL;
	for (i = 0; i < (size_t) info.nlinks; i++)
	{
		char		buf[KF_MAX_NAME + 1];
		ssize_t		l = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, buf, sizeof(buf), H5P_DEFAULT);

		if (l < 0 || l > KF_MAX_NAME)
		{
			dl_error_set(s->err, l < 0 ? DL_ERR_CORRUPT : DL_ERR_LIMIT,
						 "a member of the HDF5 group \"%s\" has an unreadable or too long name", path);
			break;
		}
		if ((names[i] = kf_strdup(s->a, buf, (size_t) l, s->err)) == NULL)
			break;
	}
	if (i < (size_t) info.nlinks)
	{
		kf_free_list(s->a, names, i);
		return NULL;
	}
	*n_out = i;
	return names;
}

/* dst = base/name; false when that is longer than KF_MAX_PATH. */
static bool
kf_join(char *dst, const char *base, const char *name)
{
	size_t		lb = strlen(base),
				ln = strlen(name);

	if (lb + ln + 2 > KF_MAX_PATH)
		return false;
	memcpy(dst, base, lb);
	if (lb)
		dst[lb++] = '/';
	memcpy(dst + lb, name, ln + 1);
	return true;
}

static bool
kf_is_index(const char *s, size_t *v)
{
	size_t		n = 0;

	if (*s == '\0' || (s[0] == '0' && s[1] != '\0') || strlen(s) > 9)
		return false;
	for (; *s; s++)
	{
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10 + (size_t) (*s - '0');
	}
	*v = n;
	return true;
}

static bool
kf_is_layers_group(const char *name)
{
	return strcmp(name, "layers") == 0 || strcmp(name, "_layer_checkpoint_dependencies") == 0;
}

/* Order of a layer's sub-objects: a Bidirectional's forward before its backward layer. */
static int
kf_member_rank(const char *name)
{
	if (strcmp(name, "vars") == 0)
		return 0;
	if (strcmp(name, "forward_layer") == 0)
		return 1;
	if (strcmp(name, "backward_layer") == 0)
		return 2;
	return 3;
}

/*
 * Walk group g of a Keras 3 weights file: path is its path, layer the
 * layer it belongs to (NULL above the layers), *index that layer's
 * next weight's position.
 */
static DlStatus
kf_v3_walk(KfState *s, hid_t g, const char *path, const char *layer, uint32_t *index, int depth)
{
	char	  **names;
	size_t		n;
	DlStatus	st = DL_OK;

	if (depth > KF_MAX_DEPTH || ++s->visited > KF_MAX_LINKS)
		return dl_error_set(s->err, DL_ERR_LIMIT, "the HDF5 groups of the file are nested deeper than %d or too many",
							KF_MAX_DEPTH);
	names = kf_h5_members(s, g, path, &n);
	if (names == NULL)
		return s->err->code;
	for (int rank = 0; rank <= 3 && st == DL_OK; rank++)
		for (size_t i = 0; i < n && st == DL_OK; i++)
		{
			hid_t		c;
			char		cpath[KF_MAX_PATH];

			if (kf_member_rank(names[i]) != rank)
				continue;
			if (!kf_join(cpath, path, names[i]))
			{
				st = dl_error_set(s->err, DL_ERR_LIMIT, "an HDF5 path of the file is longer than %d bytes",
								  KF_MAX_PATH);
				break;
			}
			if (!kf_h5_open_group(g, names[i], &c))
				continue;		/* datasets outside vars: not weights */
			if (kf_is_layers_group(names[i]))
			{
				char	  **ln;
				size_t		nl;

				ln = kf_h5_members(s, c, cpath, &nl);
				if (ln == NULL)
					st = s->err->code;
				for (size_t k = 0; k < nl && st == DL_OK; k++)
				{
					hid_t		lg;
					char		lpath[KF_MAX_PATH];
					uint32_t	li = 0;

					if (!kf_join(lpath, cpath, ln[k]))
					{
						st = dl_error_set(s->err, DL_ERR_LIMIT, "an HDF5 path of the file is longer than %d bytes",
										  KF_MAX_PATH);
						break;
					}
					if (!kf_h5_open_group(c, ln[k], &lg))
						continue;
					st = kf_v3_walk(s, lg, lpath, ln[k], &li, depth + 1);
					H5Oclose(lg);
				}
				kf_free_list(s->a, ln, nl);
			}
			else if (layer != NULL && strcmp(names[i], "vars") == 0)
			{
				char	  **vn;
				size_t		nv,
							v;

				vn = kf_h5_members(s, c, cpath, &nv);
				if (vn == NULL)
					st = s->err->code;
				for (size_t k = 0; k < nv && st == DL_OK; k++)
					if (!kf_is_index(vn[k], &v) || v >= nv)
						st = dl_error_set(s->err, DL_ERR_CORRUPT,
										  "the HDF5 group \"%s\" of layer \"%s\" holds \"%s\", not the weights 0 to %zu",
										  cpath, layer, vn[k], nv ? nv - 1 : 0);
				for (size_t k = 0; k < nv && st == DL_OK; k++)
				{
					char		vname[24],
								full[KF_MAX_PATH];

					snprintf(vname, sizeof(vname), "%zu", k % 1000000000);
					if (!kf_join(full, cpath, vname))
					{
						st = dl_error_set(s->err, DL_ERR_LIMIT, "an HDF5 path of the file is longer than %d bytes",
										  KF_MAX_PATH);
						break;
					}
					st = kf_h5_read_tensor(s, c, vname, full, layer, (*index)++);
				}
				kf_free_list(s->a, vn, nv);
			}
			else if (layer != NULL)
				st = kf_v3_walk(s, c, cpath, layer, index, depth + 1);
			H5Oclose(c);
		}
	kf_free_list(s->a, names, n);
	return st;
}

/*
 * The model config (model_config, len bytes) parsed, or NULL when it
 * does not parse: the architecture's reader refuses it later, by its own
 * message.  Release with json_object_put.
 */
static json_object *
kf_parse_config(const char *config, size_t len)
{
	json_tokener *tok;
	json_object *root;

	if (config == NULL || len > INT32_MAX || (tok = json_tokener_new_ex(KERAS_JSON_MAX_DEPTH)) == NULL)
		return NULL;
	root = json_tokener_parse_ex(tok, config, (int) len);
	json_tokener_free(tok);
	return root;
}

/* Whether layer is a nested model (a model used as a layer) of the model root. */
static bool
kf_is_nested_model(json_object *root, const char *layer)
{
	json_object *layers = keras_model_layers(root);

	for (size_t i = 0; i < keras_jlen(layers); i++)
	{
		json_object *e = keras_jidx(layers, i);

		if (strcmp(keras_entry_name(e), layer) == 0)
			return keras_is_model_class(keras_jget_str(e, "class_name"));
	}
	return false;
}

/*
 * The inner layer a nested model's weight belongs to: the first
 * component of its name (weight_names: "dense/kernel:0") that is not the
 * nested model's own name, else the nested model's name.
 */
static void
kf_inner_layer(const char *wname, const char *model, char *buf, size_t size)
{
	const char *p = wname;

	snprintf(buf, size, "%s", model);
	while (*p != '\0')
	{
		const char *slash = strchr(p, '/');
		size_t		n;

		if (slash == NULL)
			return;				/* the last component names the weight */
		n = (size_t) (slash - p);
		if (n > 0 && n < size && !(strncmp(p, model, n) == 0 && model[n] == '\0'))
		{
			memcpy(buf, p, n);
			buf[n] = '\0';
			return;
		}
		p = slash + 1;
	}
}

/*
 * The legacy layout: model_weights/<layer>/<weight_names[i]>.  A nested
 * model's group holds its inner layers' weights ("dense/kernel:0", ...,
 * Keras 2's model.save of Sequential([base, head])): they are named by
 * the inner layer, as the architecture, its nested models inlined,
 * names them.
 */
static DlStatus
kf_h5_legacy_weights(KfState *s, hid_t mw)
{
	json_object *root;
	char	  **layers;
	size_t		nl;
	DlStatus	st = DL_OK;

	layers = kf_h5_string_list(mw, "layer_names", s->a, KF_MAX_LINKS, &nl, s->err);
	if (layers == NULL)
		return s->err->code;
	root = kf_parse_config(s->out->config, s->out->config_len);
	for (size_t i = 0; i < nl && st == DL_OK; i++)
	{
		hid_t		lg;
		char	  **wn;
		size_t		nw;
		bool		nested;
		char		inner[KF_MAX_PATH];
		uint32_t	inner_index = 0;

		if (!kf_h5_open_group(mw, layers[i], &lg))
		{
			st = dl_error_set(s->err, DL_ERR_CORRUPT,
							  "the HDF5 file lists layer \"%s\" in model_weights' layer_names but has no group for it",
							  layers[i]);
			break;
		}
		wn = kf_h5_string_list(lg, "weight_names", s->a, s->lim->max_tensors, &nw, s->err);
		if (wn == NULL)
			st = s->err->code;
		nested = nw > 0 && kf_is_nested_model(root, layers[i]);
		inner[0] = '\0';
		for (size_t k = 0; k < nw && st == DL_OK; k++)
		{
			char		lpath[KF_MAX_PATH],
						full[KF_MAX_PATH];
			const char *owner = layers[i];
			uint32_t	index = (uint32_t) k;

			if (!kf_join(lpath, "model_weights", layers[i]) || !kf_join(full, lpath, wn[k]))
			{
				st = dl_error_set(s->err, DL_ERR_LIMIT, "an HDF5 path of the file is longer than %d bytes",
								  KF_MAX_PATH);
				break;
			}
			if (nested)
			{
				char		cur[KF_MAX_PATH];

				kf_inner_layer(wn[k], layers[i], cur, sizeof(cur));
				inner_index = strcmp(cur, inner) == 0 ? inner_index + 1 : 0;
				memcpy(inner, cur, sizeof(inner));
				owner = inner;
				index = inner_index;
			}
			st = kf_h5_read_tensor(s, lg, wn[k], full, owner, index);
		}
		kf_free_list(s->a, wn, nw);
		H5Oclose(lg);
	}
	json_object_put(root);
	kf_free_list(s->a, layers, nl);
	return st;
}

/* Open an HDF5 file image; -1 with err set when it is not one. */
static hid_t
kf_h5_open(const uint8_t *buf, size_t len, const char *what, DlError *err)
{
	hid_t		fapl,
				f = -1;

	/* an empty image is refused by H5Pset_file_image, which is no internal error */
	if (len < 8)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "%s is not a readable HDF5 file (%zu bytes)", what, len);
		dl_error_hint(err, KF_HINT);
		return -1;
	}
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	fapl = H5Pcreate(H5P_FILE_ACCESS);
	if (fapl < 0 || H5Pset_fapl_core(fapl, 65536, 0) < 0 ||
		H5Pset_file_image(fapl, (void *) buf, len) < 0)
		dl_error_set(err, DL_ERR_INTERNAL, "libhdf5 cannot open a file from memory");
	else if ((f = H5Fopen("keras_file.h5", H5F_ACC_RDONLY, fapl)) < 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "%s is not a readable HDF5 file (truncated or corrupt)", what);
		dl_error_hint(err, KF_HINT);
	}
	if (fapl >= 0)
		H5Pclose(fapl);
	return f;
}

static DlStatus
kf_h5_weights(KfState *s, const uint8_t *buf, size_t len, bool legacy)
{
	hid_t		f = kf_h5_open(buf, len, legacy ? "the file" : "model.weights.h5", s->err);
	DlStatus	st;

	if (f < 0)
		return s->err->code;
	if (legacy)
	{
		hid_t		mw;

		s->out->config = kf_h5_string_attr(f, "model_config", s->lim->max_config, s->a, &s->out->config_len, s->err);
		if (s->out->config == NULL)
		{
			dl_error_hint(s->err, "A legacy .h5 file holds its architecture in the model_config attribute "
						  "(model.save('m.h5')); a weights-only file (save_weights) has none.");
			st = s->err->code;
		}
		else if (!kf_h5_open_group(f, "model_weights", &mw))
		{
			st = dl_error_set(s->err, DL_ERR_CORRUPT, "the HDF5 file has no model_weights group");
			dl_error_hint(s->err, KF_HINT);
		}
		else
		{
			st = kf_h5_legacy_weights(s, mw);
			H5Oclose(mw);
		}
	}
	else
	{
		uint32_t	none = 0;

		st = kf_v3_walk(s, f, "", NULL, &none, 0);
	}
	H5Fclose(f);
	return st;
}

/* ------------------------------------------------------------------ */
/* zip                                                                */
/* ------------------------------------------------------------------ */

/* Entry name of za into a buffer from a, at most max bytes (zip bombs). */
static uint8_t *
kf_zip_entry(zip_t *za, const char *name, size_t max, const DlAllocator *a, size_t *len, DlError *err)
{
	zip_int64_t idx = zip_name_locate(za, name, 0);
	zip_stat_t	zs;
	zip_file_t *zf;
	uint8_t    *res;
	zip_int64_t got;
	uint8_t		extra;

	if (idx < 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the .keras archive has no %s", name);
		dl_error_hint(err, "A .keras file (model.save('m.keras')) holds config.json and model.weights.h5.");
		return NULL;
	}
	zip_stat_init(&zs);
	if (zip_stat_index(za, (zip_uint64_t) idx, 0, &zs) < 0 || !(zs.valid & ZIP_STAT_SIZE))
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the size of %s in the .keras archive cannot be read", name);
		return NULL;
	}
	if (zs.size > max)
	{
		dl_error_set(err, DL_ERR_LIMIT, "%s in the .keras archive has %llu bytes uncompressed, more than the limit of %zu",
					 name, (unsigned long long) zs.size, max);
		dl_error_hint(err, "madlib_dl.max_model_memory bounds the size of a model file.");
		return NULL;
	}
	zf = zip_fopen_index(za, (zip_uint64_t) idx, 0);
	if (zf == NULL)
	{
		dl_error_set(err, DL_ERR_UNSUPPORTED, "%s in the .keras archive cannot be opened: %s", name,
					 zip_strerror(za));
		return NULL;
	}
	res = dl_alloc(a, (size_t) zs.size + 1, err);
	if (res == NULL)
	{
		zip_fclose(zf);
		return NULL;
	}
	got = zs.size ? zip_fread(zf, res, zs.size) : 0;
	/* a stored size that lies: more bytes than it says, or fewer */
	if (got != (zip_int64_t) zs.size || zip_fread(zf, &extra, 1) != 0)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "%s in the .keras archive is truncated or corrupt", name);
		dl_free(a, res);
		zip_fclose(zf);
		return NULL;
	}
	zip_fclose(zf);
	*len = (size_t) zs.size;
	return res;
}

static DlStatus
kf_keras_archive(KfState *s, const uint8_t *buf, size_t len)
{
	zip_error_t ze;
	zip_source_t *src;
	zip_t	   *za;
	uint8_t    *h5;
	size_t		h5len = 0;
	DlStatus	st;

	zip_error_init(&ze);
	src = zip_source_buffer_create(buf, len, 0, &ze);
	if (src == NULL)
	{
		zip_error_fini(&ze);
		return dl_error_set(s->err, DL_ERR_NO_MEMORY, "libzip cannot read the file from memory");
	}
	za = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze);
	if (za == NULL)
	{
		dl_error_set(s->err, DL_ERR_CORRUPT, "the file is not a readable .keras archive: %s", zip_error_strerror(&ze));
		dl_error_hint(s->err, KF_HINT);
		zip_source_free(src);
		zip_error_fini(&ze);
		return DL_ERR_CORRUPT;
	}
	zip_error_fini(&ze);
	s->out->config = (char *) kf_zip_entry(za, "config.json", s->lim->max_config, s->a, &s->out->config_len, s->err);
	if (s->out->config == NULL)
	{
		zip_discard(za);
		return s->err->code;
	}
	h5 = kf_zip_entry(za, "model.weights.h5", s->lim->max_entry, s->a, &h5len, s->err);
	zip_discard(za);
	if (h5 == NULL)
		return s->err->code;
	st = kf_h5_weights(s, h5, h5len, false);
	dl_free(s->a, h5);
	return st;
}

DlStatus
dl_keras_file_decode(const uint8_t *buf, size_t len, const DlKerasFileLimits *lim,
					 const DlAllocator *a, DlKerasFile *out, DlError *err)
{
	KfState		s;
	DlStatus	st;

	memset(out, 0, sizeof(*out));
	if (len > lim->max_file)
		return dl_error_set(err, DL_ERR_LIMIT, "the file has %zu bytes, more than the limit of %zu", len, lim->max_file);
	memset(&s, 0, sizeof(s));
	s.a = a;
	s.lim = lim;
	s.err = err;
	s.out = out;
	if (len >= 4 && memcmp(buf, ZIP_MAGIC, 4) == 0)
	{
		out->format = DL_KERAS_FILE_KERAS;
		st = kf_keras_archive(&s, buf, len);
	}
	else if (len >= 8 && memcmp(buf, HDF5_MAGIC, 8) == 0)
	{
		out->format = DL_KERAS_FILE_H5;
		st = kf_h5_weights(&s, buf, len, true);
	}
	else
	{
		st = dl_error_set(err, DL_ERR_INVALID_ARGUMENT,
						  "the file (%zu bytes) is neither a .keras archive nor an HDF5 file", len);
		dl_error_hint(err, KF_HINT);
	}
	if (st == DL_OK && (out->config == NULL || memchr(out->config, '\0', out->config_len) != NULL))
		st = dl_error_set(err, DL_ERR_CORRUPT, "the model config of the file holds a NUL byte");
	if (st != DL_OK)
		dl_keras_file_free(a, out);
	return st;
}

/* ------------------------------------------------------------------ */
/* The record from the child                                          */
/* ------------------------------------------------------------------ */

#define KF_RECORD_MAGIC 0x464b4c44u /* "DLKF" */
/* the fewest bytes a tensor takes in the record: two lengths, index, ndim */
#define KF_TENSOR_MIN_BYTES (8 + 8 + 4 + 4)
#define KF_TENSOR_OVERHEAD (KF_MAX_NAME + KF_MAX_PATH + 32 + 8 * DL_KERAS_FILE_MAX_DIMS)

size_t
dl_keras_file_encoded_max(const DlKerasFileLimits *lim)
{
	size_t		n = 64 + 2 * DL_ERROR_MSG_MAX + lim->max_config + lim->max_bytes,
				t;

	if (!dl_size_mul(lim->max_tensors, KF_TENSOR_OVERHEAD, &t) || !dl_size_add(n, t, &n))
		return SIZE_MAX;
	return n;
}

typedef struct KfBuf
{
	uint8_t    *p;
	size_t		len;
	size_t		cap;
} KfBuf;

static void
kf_put(KfBuf *b, const void *src, size_t n)
{
	if (b->p != NULL && n)
		memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void
kf_put_u32(KfBuf *b, uint32_t v)
{
	kf_put(b, &v, 4);
}

static void
kf_put_str(KfBuf *b, const char *s, size_t n)
{
	uint64_t	l = n;

	kf_put(b, &l, 8);
	kf_put(b, s, n);
}

/* Write the record into b (b->p NULL: only count its length). */
static void
kf_encode_into(KfBuf *b, DlStatus st, const DlError *e, const DlKerasFile *f)
{
	kf_put_u32(b, KF_RECORD_MAGIC);
	kf_put_u32(b, (uint32_t) st);
	if (st != DL_OK)
	{
		kf_put_str(b, e->msg, strnlen(e->msg, sizeof(e->msg)));
		kf_put_str(b, e->hint, strnlen(e->hint, sizeof(e->hint)));
		return;
	}
	kf_put_u32(b, (uint32_t) f->format);
	kf_put_str(b, f->config, f->config_len);
	kf_put(b, &(uint64_t) {f->n_tensors}, 8);
	for (size_t i = 0; i < f->n_tensors; i++)
	{
		const DlKerasFileTensor *t = &f->tensors[i];

		kf_put_str(b, t->layer, strlen(t->layer));
		kf_put_str(b, t->path, strlen(t->path));
		kf_put_u32(b, t->index);
		kf_put_u32(b, t->ndim);
		kf_put(b, t->dims, 8 * t->ndim);
		kf_put(b, t->data, t->count * sizeof(float));
	}
}

DlStatus
dl_keras_file_encode(DlStatus st, const DlError *st_err, const DlKerasFile *f,
					 const DlAllocator *a, uint8_t **buf, size_t *len, DlError *err)
{
	KfBuf		b = {NULL, 0, 0};

	kf_encode_into(&b, st, st_err, f);
	b.cap = b.len;
	b.p = dl_alloc(a, b.cap, err);
	if (b.p == NULL)
		return err->code;
	b.len = 0;
	kf_encode_into(&b, st, st_err, f);
	*buf = b.p;
	*len = b.len;
	return DL_OK;
}

typedef struct KfReader
{
	const uint8_t *p;
	size_t		left;
} KfReader;

static bool
kf_get(KfReader *r, void *dst, size_t n)
{
	if (n > r->left)
		return false;
	if (n)
		memcpy(dst, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

/* A length-prefixed string of at most max bytes, NUL-terminated, from a. */
static char *
kf_get_str(KfReader *r, size_t max, const DlAllocator *a, size_t *len, DlError *err)
{
	uint64_t	l;
	char	   *s;

	if (!kf_get(r, &l, 8) || l > max || l > r->left)
	{
		dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file is truncated or over its limits");
		return NULL;
	}
	s = kf_strdup(a, (const char *) r->p, (size_t) l, err);
	if (s == NULL)
		return NULL;
	if (memchr(s, '\0', (size_t) l) != NULL)
	{
		dl_free(a, s);
		dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file holds a name with a NUL byte");
		return NULL;
	}
	r->p += l;
	r->left -= l;
	if (len)
		*len = (size_t) l;
	return s;
}

DlStatus
dl_keras_file_parse(const uint8_t *buf, size_t len, const DlKerasFileLimits *lim,
					const DlAllocator *a, DlKerasFile *out, DlError *err)
{
	KfReader	r = {buf, len};
	uint32_t	magic,
				st,
				fmt;
	uint64_t	n;
	size_t		bytes = 0;

	memset(out, 0, sizeof(*out));
	if (!kf_get(&r, &magic, 4) || magic != KF_RECORD_MAGIC || !kf_get(&r, &st, 4) || st > DL_ERR_CANCELLED)
		return dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file is not a record of the decoder");
	if (st != DL_OK)
	{
		size_t		msg_len = 0;
		char	   *msg = kf_get_str(&r, DL_ERROR_MSG_MAX - 1, a, &msg_len, err);
		char	   *hint = msg ? kf_get_str(&r, DL_ERROR_MSG_MAX - 1, a, NULL, err) : NULL;

		if (hint == NULL)
		{
			dl_free(a, msg);
			return err->code;
		}
		/* the decoder's errors all have a message, and nothing follows them */
		if (msg_len == 0 || r.left != 0)
		{
			dl_free(a, msg);
			dl_free(a, hint);
			return dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file is truncated or over its limits");
		}
		dl_error_set(err, (DlStatus) st, "%s", msg);
		if (*hint)
			dl_error_hint(err, "%s", hint);
		dl_free(a, msg);
		dl_free(a, hint);
		return (DlStatus) st;
	}
	if (!kf_get(&r, &fmt, 4) || (fmt != DL_KERAS_FILE_KERAS && fmt != DL_KERAS_FILE_H5))
		return dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file names no format");
	out->format = (DlKerasFileFormat) fmt;
	out->config = kf_get_str(&r, lim->max_config, a, &out->config_len, err);
	if (out->config == NULL)
		return err->code;
	/* the count against what is left, before the array is allocated for it */
	if (!kf_get(&r, &n, 8) || n > lim->max_tensors || n > r.left / KF_TENSOR_MIN_BYTES)
	{
		dl_keras_file_free(a, out);
		return dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file has a bad tensor count");
	}
	out->tensors = dl_alloc_array(a, (size_t) n + 1, sizeof(DlKerasFileTensor), err);
	if (out->tensors == NULL)
	{
		dl_keras_file_free(a, out);
		return err->code;
	}
	for (uint64_t i = 0; i < n; i++)
	{
		DlKerasFileTensor *t = &out->tensors[i];
		size_t		nb;

		out->n_tensors = (size_t) i + 1;
		t->layer = kf_get_str(&r, KF_MAX_NAME, a, NULL, err);
		t->path = t->layer ? kf_get_str(&r, KF_MAX_PATH, a, NULL, err) : NULL;
		if (t->path == NULL || !kf_get(&r, &t->index, 4) || !kf_get(&r, &t->ndim, 4) ||
			t->ndim > DL_KERAS_FILE_MAX_DIMS || !kf_get(&r, t->dims, 8 * t->ndim))
			goto corrupt;
		t->count = 1;
		for (uint32_t d = 0; d < t->ndim; d++)
			if (t->dims[d] > SIZE_MAX || !dl_size_mul(t->count, (size_t) t->dims[d], &t->count))
				goto corrupt;
		if (!dl_size_mul(t->count, sizeof(float), &nb) || nb > r.left || !dl_size_add(bytes, nb, &bytes) ||
			bytes > lim->max_bytes)
			goto corrupt;
		t->data = dl_alloc(a, nb, err);
		if (t->data == NULL)
		{
			dl_keras_file_free(a, out);
			return err->code;
		}
		kf_get(&r, t->data, nb);
	}
	if (r.left != 0)
		goto corrupt;
	return DL_OK;
corrupt:
	dl_keras_file_free(a, out);
	return dl_error_set(err, DL_ERR_CORRUPT, "the decoded keras file is truncated or over its limits");
}
