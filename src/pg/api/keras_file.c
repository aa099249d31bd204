/*-------------------------------------------------------------------------
 *
 * keras_file.c
 *	  The C half of load_keras_file: a .keras or .h5 file (bytea) decoded
 *	  in a child process into the model's JSON config and its tensors
 *	  (src/sql/architecture.sql matches them to the architecture and
 *	  loads them with _load_keras_model).
 *
 *	 _keras_file_read(file bytea, OUT model_arch json, OUT format text,
 *	                  OUT tensors jsonb, OUT model_weights bytea)
 *
 * libhdf5 1.10 has known crashes on malformed files (CVEs), so the
 * decoding (src/engine/keras_file.c: libzip and libhdf5) never runs in
 * the backend: a forked child decodes the file with malloc, calls nothing
 * of PostgreSQL, writes the outcome to a pipe as one length-checked record
 * (dl_keras_file_encode) and ends by SIGKILL to itself (so that no atexit
 * handler of the backend runs and the server library imports no exit
 * function).  The backend reads the pipe with CHECK_FOR_INTERRUPTS
 * between reads, at most dl_keras_file_encoded_max bytes, parses it with
 * dl_keras_file_parse (every length checked before palloc), and reaps the
 * child after the read, or in a PG_CATCH when the read was cut short (a
 * cancel, an error), killing it first: no zombie is left.  A child killed by any other
 * signal, or one that stops before its record is complete, is an ERROR
 * (XX001), never a crash of the server.
 *
 * IDENTIFICATION
 *	  src/pg/api/keras_file.c
 *
 *-------------------------------------------------------------------------
 */
#include "pg_glue.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "access/htup_details.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/jsonb.h"

#include "pg_limits.h"
#include "madlib_dl/dl_keras_file.h"

#define KF_CHILD_SECONDS 120	/* a decode that hangs is killed */
#define KF_MAX_TENSORS 100000
#define KF_MAX_CONFIG ((size_t) 64 << 20)
#define KF_HINT "Give the bytes of a file Keras wrote: model.save('m.keras') or model.save('m.h5'), e.g. pg_read_binary_file('m.keras') or a bytea parameter."

/* The child and what the backend has read from it. */
typedef struct KfChild
{
	pid_t		pid;
	int			fd;
	bool		reaped;
	int			status;
	uint8	   *buf;
	size_t		len;
	size_t		cap;
	size_t		max;
} KfChild;

static void *
kf_malloc(void *ctx, size_t n)
{
	return malloc(n);
}

static void
kf_mfree(void *ctx, void *p)
{
	free(p);
}

static bool
kf_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0)
	{
		ssize_t		w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t) w;
	}
	return true;
}

/*
 * The child: no PostgreSQL call from here on.  Decode, write the record,
 * end.  Never returns.
 */
static void
kf_child_run(int fd, const uint8_t *file, size_t len, const DlKerasFileLimits *lim) pg_attribute_noreturn();

static void
kf_child_run(int fd, const uint8_t *file, size_t len, const DlKerasFileLimits *lim)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGHUP, SIGPIPE,
	SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGCHLD};
	sigset_t	none;
	DlAllocator ma = {kf_malloc, kf_mfree, NULL};
	DlKerasFile f;
	DlError		e,
				e2;
	DlStatus	st;
	uint8_t    *rec = NULL;
	size_t		rlen = 0;

	for (size_t i = 0; i < lengthof(sigs); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
	alarm(KF_CHILD_SECONDS);

	memset(&f, 0, sizeof(f));
	dl_error_clear(&e);
	st = dl_keras_file_decode(file, len, lim, &ma, &f, &e);
	if (dl_keras_file_encode(st, &e, &f, &ma, &rec, &rlen, &e2) == DL_OK)
		(void) kf_write_all(fd, rec, rlen);
	close(fd);
	for (;;)
	{
		kill(getpid(), SIGKILL);
		pause();
	}
}

/* Reap the child: killed first unless it is known to have ended. */
static void
kf_child_reap(KfChild *ch, bool kill_it)
{
	if (ch->reaped || ch->pid <= 0)
		return;
	if (kill_it)
		kill(ch->pid, SIGKILL);
	for (;;)
	{
		pid_t		r = waitpid(ch->pid, &ch->status, 0);

		if (r == ch->pid || (r < 0 && errno != EINTR))
			break;
	}
	ch->reaped = true;
}

/* Read the child's record to EOF (the child's end of the pipe closed). */
static void
kf_child_read(KfChild *ch)
{
	for (;;)
	{
		struct pollfd p;
		int			r;
		ssize_t		n;

		CHECK_FOR_INTERRUPTS();
		p.fd = ch->fd;
		p.events = POLLIN;
		p.revents = 0;
		r = poll(&p, 1, 100);
		if (r < 0 && errno != EINTR)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not wait for the decoder of the keras file: %m")));
		if (r <= 0)
			continue;
		if (ch->len == ch->cap)
		{
			size_t		ncap = Min(ch->cap * 2, ch->max + 1);

			if (ch->cap > ch->max)
				ereport(ERROR,
						(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
						 errmsg("the decoded keras file is larger than %zu bytes", ch->max),
						 errhint("madlib_dl.max_model_memory bounds the weights a model file may hold.")));
			ch->buf = repalloc_huge(ch->buf, ncap + 1);
			ch->cap = ncap + 1;
		}
		n = read(ch->fd, ch->buf + ch->len, ch->cap - ch->len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read from the decoder of the keras file: %m")));
		if (n == 0)
			break;
		ch->len += (size_t) n;
	}
	/* EOF: the child closed the pipe and is ending itself */
	for (;;)
	{
		pid_t		r;

		CHECK_FOR_INTERRUPTS();
		r = waitpid(ch->pid, &ch->status, WNOHANG);
		if (r == ch->pid)
		{
			ch->reaped = true;
			break;
		}
		if (r < 0 && errno != EINTR)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not wait for the decoder of the keras file: %m")));
		pg_usleep(1000L);
	}
}

/* Start the decoding child of file (ch->pid, ch->fd: the read end of its pipe). */
static void
kf_child_start(KfChild *ch, const uint8 *file, size_t len, const DlKerasFileLimits *lim)
{
	int			fds[2];

	if (pipe(fds) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not create a pipe for the decoder of the keras file: %m")));
	ch->pid = fork();
	if (ch->pid < 0)
	{
		close(fds[0]);
		close(fds[1]);
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start the decoder of the keras file: %m"),
				 errhint("The server could not fork a process: check its process and memory limits.")));
	}
	if (ch->pid == 0)
	{
		close(fds[0]);
		kf_child_run(fds[1], file, len, lim);
	}
	close(fds[1]);
	ch->fd = fds[0];
}

/* ERROR unless the reaped child ch sent its record and ended as it does (SIGKILL by itself). */
static void
kf_child_check_end(const KfChild *ch)
{
	if (WIFSIGNALED(ch->status) && WTERMSIG(ch->status) != SIGKILL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the keras file crashed its decoder (signal %d: %s): it is corrupt or hostile",
						WTERMSIG(ch->status), strsignal(WTERMSIG(ch->status))),
				 errhint(KF_HINT)));
	if (!WIFSIGNALED(ch->status))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the decoder of the keras file stopped with exit status %d",
						WIFEXITED(ch->status) ? WEXITSTATUS(ch->status) : -1),
				 errhint(KF_HINT)));
	if (ch->len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the decoder of the keras file was killed before it finished"),
				 errhint("Its process ran out of memory or over %d seconds; madlib_dl.max_model_memory bounds what a file may hold.",
						 KF_CHILD_SECONDS)));
}

/* Decode file in a child; out from palloc in CurrentMemoryContext. */
static void
kf_decode_in_child(const uint8 *file, size_t len, const DlKerasFileLimits *lim, DlKerasFile *out)
{
	KfChild    *ch = palloc0(sizeof(KfChild));
	DlAllocator alloc = dl_pg_allocator(CurrentMemoryContext);
	DlError		err;
	DlStatus	st;

	ch->max = dl_keras_file_encoded_max(lim);
	ch->cap = 65536;
	ch->buf = palloc(ch->cap);
	kf_child_start(ch, file, len, lim);
	/* PG_TRY/PG_CATCH, not PG_FINALLY: Greenplum 7's PostgreSQL 12 lacks it */
	PG_TRY();
	{
		kf_child_read(ch);
	}
	PG_CATCH();
	{
		kf_child_reap(ch, true);
		close(ch->fd);
		PG_RE_THROW();
	}
	PG_END_TRY();
	kf_child_reap(ch, true);
	close(ch->fd);
	kf_child_check_end(ch);
	dl_error_clear(&err);
	st = dl_keras_file_parse(ch->buf, ch->len, lim, &alloc, out, &err);
	if (st != DL_OK && err.hint[0] == '\0')
		dl_error_hint(&err, KF_HINT);
	dl_pg_check(st, &err);
}

/* s, n bytes from the file, as a json string (valid in the database's encoding). */
static void
kf_append_json_string(StringInfo si, const char *s)
{
	(void) pg_verifymbstr(s, (int) strlen(s), false);
	escape_json(si, s);
}

/*
 * The limits of a file of flen bytes, from madlib_dl.max_model_memory:
 * ERROR 54000 when the file itself is over it.
 */
static void
kf_limits(size_t flen, DlKerasFileLimits *lim)
{
	size_t		max_mem = (size_t) dl_pg_max_model_memory_kb * 1024;

	memset(lim, 0, sizeof(*lim));
	lim->max_file = Min(max_mem, MaxAllocHugeSize);
	lim->max_entry = lim->max_file;
	lim->max_config = Min(KF_MAX_CONFIG, lim->max_file);
	lim->max_tensors = KF_MAX_TENSORS;
	lim->max_bytes = Min(max_mem, (size_t) (MaxAllocSize - VARHDRSZ));
	if (flen > lim->max_file)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("the keras file has %zu bytes, more than madlib_dl.max_model_memory (%zu bytes)",
						flen, lim->max_file),
				 errhint("A superuser can raise madlib_dl.max_model_memory.")));
}

/* The tensors of kf as jsonb ([{"layer", "index", "path", "shape"}, ...]); *total their values. */
static Datum
kf_tensors_jsonb(const DlKerasFile *kf, size_t *total)
{
	StringInfoData si;

	*total = 0;
	initStringInfo(&si);
	appendStringInfoChar(&si, '[');
	for (size_t i = 0; i < kf->n_tensors; i++)
	{
		const DlKerasFileTensor *t = &kf->tensors[i];

		appendStringInfoString(&si, i ? ", {\"layer\": " : "{\"layer\": ");
		kf_append_json_string(&si, t->layer);
		appendStringInfo(&si, ", \"index\": %u, \"path\": ", t->index);
		kf_append_json_string(&si, t->path);
		appendStringInfoString(&si, ", \"shape\": [");
		for (uint32 d = 0; d < t->ndim; d++)
			appendStringInfo(&si, d ? ", " UINT64_FORMAT : UINT64_FORMAT, t->dims[d]);
		appendStringInfoString(&si, "]}");
		*total += t->count;		/* parse bounded the sum by lim.max_bytes */
	}
	appendStringInfoChar(&si, ']');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(si.data));
}

/*
 * _keras_file_read(file bytea, OUT model_arch json, OUT format text,
 *                  OUT tensors jsonb, OUT model_weights bytea)
 *
 * tensors: [{"layer", "index", "path", "shape"}, ...] in the file's order,
 * model_weights their float32 values in that order.
 */
PG_FUNCTION_INFO_V1(madlib_dl__keras_file_read);
Datum
madlib_dl__keras_file_read(PG_FUNCTION_ARGS)
{
	bytea	   *file;
	DlKerasFileLimits lim;
	DlKerasFile kf;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	size_t		total;
	size_t		flen;
	bytea	   *w;
	char	   *p;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("file must not be NULL"),
				 errhint(KF_HINT)));
	file = PG_GETARG_BYTEA_PP(0);
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "_keras_file_read must return a record");
	tupdesc = BlessTupleDesc(tupdesc);
	flen = VARSIZE_ANY_EXHDR(file);
	kf_limits(flen, &lim);

	kf_decode_in_child((const uint8 *) VARDATA_ANY(file), flen, &lim, &kf);

	/* the config: UTF-8 in the database's encoding, and JSON */
	(void) pg_verifymbstr(kf.config, (int) kf.config_len, false);
	values[0] = DirectFunctionCall1(json_in, CStringGetDatum(kf.config));
	values[1] = PointerGetDatum(cstring_to_text(kf.format == DL_KERAS_FILE_KERAS ? "keras" : "h5"));
	values[2] = kf_tensors_jsonb(&kf, &total);
	w = palloc(VARHDRSZ + total * sizeof(float));
	SET_VARSIZE(w, VARHDRSZ + total * sizeof(float));
	p = VARDATA(w);
	for (size_t i = 0; i < kf.n_tensors; i++)
	{
		memcpy(p, kf.tensors[i].data, kf.tensors[i].count * sizeof(float));
		p += kf.tensors[i].count * sizeof(float);
	}
	values[3] = PointerGetDatum(w);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
