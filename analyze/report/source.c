/*
 * source.c - costs per source line and reading source files (see source.h).
 *
 * The table is built in one walk over the distinct stacks (never over the
 * samples): each stack's frames from the innermost out, a per-file stamp
 * saying whether the stack has already charged that file. Entries (file,
 * line) are found through the one hash table; a file's lines are sorted by
 * number once at the end.
 */
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "arith.h"
#include "file.h"
#include "hashmap.h"
#include "terminal.h"

/* Source files larger than this are not read (a trace could name anything). */
#define SOURCE_MAX_BYTES (64u << 20)

struct entry_key {
	uint32_t file, line;
};

static uint32_t file_of(struct source_table *st, struct hashmap *files, uint32_t file, uint32_t *cap)
{
	uint32_t *slot = hashmap_slot(files, file);
	if (*slot != HASHMAP_NONE)
		return *slot;
	ALLOC_GROW(st->files, (uint64_t)st->nfiles + 1, *cap);
	st->files[st->nfiles] = (struct source_file){.file = file, .module = UINT32_MAX};
	return *slot = st->nfiles++;
}

static int by_line_number(const void *a, const void *b)
{
	const struct source_line *x = a, *y = b;
	return x->line < y->line ? -1 : x->line > y->line;
}

void source_table_build(struct source_table *st, const struct calltree *t, const int64_t *const *stack_values,
			uint32_t nvalues)
{
	const struct profile *p = t->profile;
	memset(st, 0, sizeof(*st));
	st->t = t;
	st->nvalues = nvalues = nvalues < SOURCE_MAX_VALUES ? nvalues : SOURCE_MAX_VALUES;
	struct hashmap files, entries; /* file string id -> file; file << 32 | line -> entry */
	hashmap_init(&files, 64);
	hashmap_init(&entries, 1024);
	uint32_t files_cap = 0, entries_cap = 0;
	uint64_t values_cap = 0;
	struct entry_key *keys = NULL;
	uint32_t *stamp = NULL, stamp_cap = 0;
	uint32_t max_frames = profile_max_stack_frames(p);
	uint32_t *frames = calloc_or_abort(max_frames ? max_frames : 1, sizeof(*frames));
	for (uint32_t s = 0; s < p->nstacks; s++) {
		int any = 0;
		for (uint32_t k = 0; k < nvalues && !any; k++)
			any = stack_values[k][s] != 0;
		if (!any)
			continue;
		uint32_t n = calltree_stack_frames(t, s, frames);
		for (uint32_t i = n; i-- > 0;) {
			const struct calltree_frame *f = &t->frames[frames[i]];
			if (f->file == 0)
				continue; /* no file: an unknown frame, an allocation leaf */
			uint32_t known = st->nfiles, fi = file_of(st, &files, f->file, &files_cap);
			ALLOC_GROW(stamp, (uint64_t)st->nfiles, stamp_cap);
			if (st->nfiles != known)
				stamp[fi] = 0; /* a new file: never charged */
			if (stamp[fi] == s + 1)
				continue; /* this stack charged the file at an inner frame */
			stamp[fi] = s + 1;
			struct source_file *file = &st->files[fi];
			if (file->module == UINT32_MAX)
				file->module = p->functions[f->function].module;
			uint32_t *slot = hashmap_slot(&entries, (uint64_t)fi << 32 | f->line);
			if (*slot == HASHMAP_NONE) {
				ALLOC_GROW(keys, (uint64_t)st->nentries + 1, entries_cap);
				ALLOC_GROW(st->values, ((uint64_t)st->nentries + 1) * nvalues, values_cap);
				keys[st->nentries] = (struct entry_key){fi, f->line};
				memset(st->values + (uint64_t)st->nentries * nvalues, 0, nvalues * sizeof(*st->values));
				*slot = st->nentries++;
			}
			int64_t *v = st->values + (uint64_t)*slot * nvalues;
			for (uint32_t k = 0; k < nvalues; k++) {
				v[k] = sat_add_i64(v[k], stack_values[k][s], NULL);
				file->totals[k] = sat_add_i64(file->totals[k], stack_values[k][s], NULL);
			}
			if (f->line > file->max_line)
				file->max_line = f->line;
		}
	}
	free(frames);
	free(stamp);
	hashmap_free(&files);
	hashmap_free(&entries);

	/* Each file's lines: counted, placed, sorted by number. */
	st->line_store = calloc_or_abort(st->nentries ? st->nentries : 1, sizeof(*st->line_store));
	for (uint32_t e = 0; e < st->nentries; e++)
		st->files[keys[e].file].nlines++;
	uint32_t at = 0;
	for (uint32_t fi = 0; fi < st->nfiles; fi++) {
		st->files[fi].lines = st->line_store + at;
		at += st->files[fi].nlines;
		st->files[fi].nlines = 0;
	}
	for (uint32_t e = 0; e < st->nentries; e++) {
		struct source_file *file = &st->files[keys[e].file];
		file->lines[file->nlines++] = (struct source_line){keys[e].line, e};
	}
	for (uint32_t fi = 0; fi < st->nfiles; fi++) {
		struct source_file *file = &st->files[fi];
		/* Insertion sort: entries arrive nearly in order per file. */
		for (uint32_t i = 1; i < file->nlines; i++) {
			struct source_line x = file->lines[i];
			uint32_t j = i;
			for (; j > 0 && file->lines[j - 1].line > x.line; j--)
				file->lines[j] = file->lines[j - 1];
			file->lines[j] = x;
		}
	}
	free(keys);
}

void source_table_build_file(struct source_table *st, const struct calltree *t, uint32_t file,
			     const int64_t *const *stack_values, uint32_t nvalues)
{
	const struct profile *p = t->profile;
	memset(st, 0, sizeof(*st));
	st->t = t;
	st->nvalues = nvalues = nvalues < SOURCE_MAX_VALUES ? nvalues : SOURCE_MAX_VALUES;
	/* near[n]: the innermost node of n's path (n included) in the file. */
	uint32_t *near = calloc_or_abort(t->nnodes ? t->nnodes : 1, sizeof(*near));
	near[0] = CALLTREE_NONE;
	for (uint32_t n = 1; n < t->nnodes; n++)
		near[n] = t->frames[t->nodes[n].frame].file == file ? n : near[t->nodes[n].parent];
	struct source_file f = {.file = file, .module = UINT32_MAX};
	struct hashmap lines; /* line -> entry */
	hashmap_init(&lines, 256);
	uint32_t cap = 0;
	uint64_t values_cap = 0;
	for (uint32_t s = 0; s < p->nstacks; s++) {
		uint32_t node = t->stack_node ? t->stack_node[s] : CALLTREE_NONE;
		uint32_t at = node == CALLTREE_NONE ? CALLTREE_NONE : near[node];
		int any = 0;
		for (uint32_t k = 0; k < nvalues && !any; k++)
			any = stack_values[k][s] != 0;
		if (at == CALLTREE_NONE || !any)
			continue;
		const struct calltree_frame *fr = &t->frames[t->nodes[at].frame];
		if (f.module == UINT32_MAX)
			f.module = p->functions[fr->function].module;
		uint32_t *slot = hashmap_slot(&lines, fr->line);
		if (*slot == HASHMAP_NONE) {
			ALLOC_GROW(st->line_store, (uint64_t)f.nlines + 1, cap);
			ALLOC_GROW(st->values, ((uint64_t)st->nentries + 1) * nvalues, values_cap);
			memset(st->values + (uint64_t)st->nentries * nvalues, 0, nvalues * sizeof(*st->values));
			st->line_store[f.nlines++] = (struct source_line){fr->line, st->nentries};
			*slot = st->nentries++;
		}
		int64_t *v = st->values + (uint64_t)*slot * nvalues;
		for (uint32_t k = 0; k < nvalues; k++) {
			v[k] = sat_add_i64(v[k], stack_values[k][s], NULL);
			f.totals[k] = sat_add_i64(f.totals[k], stack_values[k][s], NULL);
		}
		if (fr->line > f.max_line)
			f.max_line = fr->line;
	}
	hashmap_free(&lines);
	free(near);
	if (!f.nlines)
		return;
	qsort(st->line_store, f.nlines, sizeof(*st->line_store), by_line_number);
	f.lines = st->line_store;
	st->files = calloc_or_abort(1, sizeof(*st->files));
	st->files[0] = f;
	st->nfiles = 1;
}

void source_table_free(struct source_table *st)
{
	free(st->files);
	free(st->values);
	free(st->line_store);
	memset(st, 0, sizeof(*st));
}

struct file_order {
	const struct source_table *st;
	uint32_t k;
};

static int by_cost(const void *a, const void *b, void *ctx)
{
	const struct file_order *fo = ctx;
	const struct source_file *x = &fo->st->files[*(const uint32_t *)a], *y = &fo->st->files[*(const uint32_t *)b];
	uint64_t cx = abs_i64(x->totals[fo->k]), cy = abs_i64(y->totals[fo->k]);
	if (cx != cy)
		return cx > cy ? -1 : 1;
	const struct profile *p = fo->st->t->profile;
	return strcmp(profile_string(p, x->file), profile_string(p, y->file));
}

uint32_t source_files_by_cost(const struct source_table *st, uint32_t k, uint32_t **order)
{
	uint32_t *o = calloc_or_abort(st->nfiles ? st->nfiles : 1, sizeof(*o)), n = 0;
	for (uint32_t i = 0; i < st->nfiles; i++)
		if (st->files[i].totals[k] != 0)
			o[n++] = i;
	struct file_order fo = {st, k};
	qsort_r(o, n, sizeof(*o), by_cost, &fo);
	*order = o;
	return n;
}

uint32_t source_file_index(const struct source_table *st, uint32_t file)
{
	for (uint32_t i = 0; i < st->nfiles; i++)
		if (st->files[i].file == file)
			return i;
	return UINT32_MAX;
}

uint32_t source_match_file(const struct source_table *st, const char *name, uint32_t *out, uint32_t max)
{
	const struct profile *p = st->t->profile;
	size_t n = strlen(name);
	uint32_t found = 0;
	if (n == 0)
		return 0;
	for (uint32_t i = 0; i < st->nfiles; i++) {
		if (!strcmp(profile_string(p, st->files[i].file), name)) {
			out[0] = i;
			return 1;
		}
	}
	for (uint32_t i = 0; i < st->nfiles; i++) {
		const char *path = profile_string(p, st->files[i].file);
		size_t len = strlen(path);
		/* A suffix that starts a path component (or the name starts with one). */
		if (len > n && !strcmp(path + len - n, name) && (path[len - n - 1] == '/' || name[0] == '/')) {
			if (found < max)
				out[found] = i;
			found++;
		}
	}
	return found;
}

/* ---- source text ---- */

/* Read fd whole (at most SOURCE_MAX_BYTES) into tx->data: 0, or -1 with errno. */
static int read_all(struct source_text *tx, int fd)
{
	size_t len = 0, cap = 0;
	char *data = NULL;
	for (;;) {
		if (cap - len < 65536) {
			cap = cap ? 2 * cap : 65536;
			data = realloc_or_abort(data, cap + 1);
		}
		ssize_t got = read(fd, data + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = errno;
			free(data);
			errno = err;
			return -1;
		}
		if (got == 0)
			break;
		len += (size_t)got;
		if (len > SOURCE_MAX_BYTES) {
			free(data);
			errno = EFBIG;
			return -1;
		}
	}
	data[len] = '\0';
	tx->data = data;
	uint32_t cap_lines = 0;
	for (size_t i = 0; i < len;) {
		ALLOC_GROW(tx->starts, (uint64_t)tx->nlines + 1, cap_lines);
		tx->starts[tx->nlines++] = (uint32_t)i;
		const char *nl = memchr(data + i, '\n', len - i);
		i = nl ? (size_t)(nl - data) + 1 : len;
	}
	return 0;
}

/* Open the first candidate that is a regular file; its fd, or -1 (errno of the recorded path's open). */
static int open_source(const char *path, const char *const *dirs, int ndirs, char **found, int *in_dir)
{
	int fd = open_regular_file(path), err = errno;
	if (fd >= 0) {
		*found = strdup_or_abort(path);
		*in_dir = 0;
		return fd;
	}
	size_t cap = strlen(path) + 2;
	for (int d = 0; d < ndirs; d++) {
		char *candidate = calloc_or_abort(strlen(dirs[d]) + cap, 1);
		/* The whole recorded path below DIR, then each shorter tail. */
		for (const char *tail = path; tail; tail = strchr(tail + 1, '/')) {
			const char *rest = tail;
			while (*rest == '/')
				rest++;
			if (!*rest)
				break;
			sprintf(candidate, "%s/%s", dirs[d], rest);
			fd = open_regular_file(candidate);
			if (fd >= 0) {
				*found = candidate;
				*in_dir = 1;
				return fd;
			}
		}
		free(candidate);
	}
	errno = err;
	return -1;
}

void source_text_load(struct source_text *tx, const char *path, const char *binary, const char *const *dirs,
		      int ndirs, uint32_t max_line)
{
	memset(tx, 0, sizeof(*tx));
	char safe[2048], safe_bin[2048];
	const char *shown = escape_text(path, safe, sizeof(safe));
	int in_dir = 0;
	char *found = NULL;
	int fd = open_source(path, dirs, ndirs, &found, &in_dir);
	if (fd < 0) {
		int err = errno;
		if (err == ENOENT || err == ENOTDIR)
			snprintf(tx->note, sizeof(tx->note), "source file not found: %s%s", shown,
				 ndirs ? " (nor under the --search-dir directories)"
				       : " (--search-dir DIR looks for it where it moved)");
		else
			snprintf(tx->note, sizeof(tx->note), "cannot read source %s: %s", shown, open_error_text(err));
		return;
	}
	struct stat src;
	int have_src = fstat(fd, &src) == 0;
	if (read_all(tx, fd) < 0) {
		int err = errno;
		snprintf(tx->note, sizeof(tx->note), "cannot read source %s: %s", shown,
			 err == EFBIG ? "larger than 64 MiB" : strerror(err));
		close(fd);
		free(found);
		free(tx->starts);
		tx->starts = NULL;
		tx->nlines = 0;
		return;
	}
	close(fd);
	tx->path = found;
	shown = escape_text(found, safe, sizeof(safe));
	/* A copy under a search directory has the copy's time: only the
	 * recorded file's mtime says anything about the build. */
	struct stat bin;
	if (!in_dir && have_src && binary && *binary && stat(binary, &bin) == 0 &&
	    (src.st_mtim.tv_sec > bin.st_mtim.tv_sec ||
	     (src.st_mtim.tv_sec == bin.st_mtim.tv_sec && src.st_mtim.tv_nsec > bin.st_mtim.tv_nsec))) {
		snprintf(tx->note, sizeof(tx->note), "%s was modified after %s was built: lines may not match the costs",
			 shown, escape_text(binary, safe_bin, sizeof(safe_bin)));
	}
	if (max_line > tx->nlines) {
		size_t used = strlen(tx->note);
		snprintf(tx->note + used, sizeof(tx->note) - used, "%s%s has %u lines but the costs name line %u: it changed since the build",
			 used ? "; " : "", shown, tx->nlines, max_line);
	}
}

void source_text_free(struct source_text *tx)
{
	free(tx->path);
	free(tx->data);
	free(tx->starts);
	memset(tx, 0, sizeof(*tx));
}

const char *source_text_line(const struct source_text *tx, uint32_t line, size_t *len)
{
	if (line == 0 || line > tx->nlines)
		return NULL;
	const char *s = tx->data + tx->starts[line - 1];
	const char *nl = strchr(s, '\n');
	size_t n = nl ? (size_t)(nl - s) : strlen(s);
	if (n > 0 && s[n - 1] == '\r')
		n--;
	*len = n;
	return s;
}

const char *source_printable(const char *code, size_t len, char *buf, size_t buflen)
{
	char tmp[4096];
	size_t n = 0, col = 0;
	for (size_t i = 0; i < len && n + 8 < sizeof(tmp); i++) {
		unsigned char c = (unsigned char)code[i];
		if (c == '\t') {
			do
				tmp[n++] = ' ';
			while (++col % 8 && n + 1 < sizeof(tmp));
			continue;
		}
		if (c == '\0') { /* escape_controls stops at a NUL */
			memcpy(tmp + n, "\\x00", 4);
			n += 4;
			col += 4;
			continue;
		}
		tmp[n++] = (char)c;
		col += (c & 0xc0) != 0x80; /* a UTF-8 continuation byte adds no column */
	}
	tmp[n] = '\0';
	const char *safe = escape_controls(tmp, buf, buflen);
	if (safe == tmp)
		snprintf(buf, buflen, "%s", tmp);
	return buf;
}
