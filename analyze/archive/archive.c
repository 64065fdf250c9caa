/*
 * archive.c - what analyze archive packs (archive.h): every file the
 * trace's modules are read from (each module, its debug file, its dwz
 * supplementary file, its split DWARF .dwp or .dwo files), by build-id,
 * with a manifest, as perf archive does.
 *
 * Layout: DIR/.build-id/xx/yyyy (the module), .build-id/xx/yyyy.debug (its
 * debug file, or a supplementary file by its own build-id), .build-id/
 * xx/yyyy.dwp; a file without a build-id (a module, a .dwo) by its absolute
 * path below the top; ipscope-archive.txt says what is what. The files are
 * found exactly as tree and flat find them (the same options: --debug-dir,
 * --search-dir, debuginfod), and only with the traced build-id.
 */
#include "archive.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "symbolize.h"
#include "tar.h"
#include "terminal.h"

#define MANIFEST "ipscope-archive.txt"

/* Hex build-id text (the profile's) into bytes; returns the length. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	for (; hex[0] && hex[1] && n < cap; hex += 2) {
		unsigned v;
		if (sscanf(hex, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* The archive member a file goes in (see the header comment). */
static void member_of(const struct symbol_file *f, char *out, size_t len)
{
	static const struct {
		const char *kind, *suffix;
	} suffixes[] = {{"module", ""}, {"debug", ".debug"}, {"sup", ".debug"}, {"dwp", ".dwp"}};
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		if (strcmp(f->kind, suffixes[i].kind) != 0 || f->build_id_len < 2)
			continue;
		int n = snprintf(out, len, ".build-id/%02x/", f->build_id[0]);
		for (size_t b = 1; b < f->build_id_len && (size_t)n + 2 < len; b++)
			n += snprintf(out + n, len - (size_t)n, "%02x", f->build_id[b]);
		snprintf(out + n, len - (size_t)n, "%s", suffixes[i].suffix);
		return;
	}
	snprintf(out, len, "%s", f->path[0] == '/' ? f->path + 1 : f->path);
}

/* Members written so far, so a file shared by modules goes in once. */
struct members {
	char **names;
	size_t n, cap;
};

static int seen(struct members *m, const char *name)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->names[i], name))
			return 1;
	ALLOC_GROW(m->names, m->n + 1, m->cap);
	m->names[m->n++] = strdup_or_abort(name);
	return 0;
}

/* Pack what the modules of p are read from; the manifest text grows in *manifest. */
static int pack(struct tar_writer *t, const struct profile *p, const struct load_options *lo,
		const struct diag_sink *warnings, char **manifest, size_t *manifest_len, unsigned *missing)
{
	struct symbolizer_options so = {
		.debug_dirs = lo->debug_dirs,
		.ndebug_dirs = lo->ndebug_dirs,
		.search_dirs = lo->search_dirs,
		.nsearch_dirs = lo->nsearch_dirs,
		.demangle = 1,
		.offline = lo->offline,
		.debuginfod_timeout = lo->debuginfod_timeout,
	};
	struct symbolizer *s = symbolizer_new(&so);
	if (!s)
		abort_out_of_memory();
	FILE *mf = open_memstream(manifest, manifest_len);
	if (!mf)
		abort_out_of_memory();
	fprintf(mf, "# ipscope archive: the files the trace's modules are read from.\n"
		    "# Unpack it and pass its directory to analyze --search-dir.\n"
		    "# build-id\tkind\tmember\tread from\t[the module as the trace names it]\n");
	struct members done = {0};
	for (uint32_t i = 0; i < p->nmodules && !t->error; i++) {
		const char *path = profile_string(p, p->modules[i].path);
		const char *hex = profile_string(p, p->modules[i].build_id);
		if (path[0] == '[' || strstr(path, "linux-vdso"))
			continue; /* the kernel's: no file */
		uint8_t id[64];
		size_t idlen = unhex(hex, id, sizeof(id));
		char warning[8192] = "", safe[8192], safe2[8192], safe3[8192];
		struct symbol_module *m = symbolizer_module(s, path, id, idlen, warning, sizeof(warning));
		if (!m)
			abort_out_of_memory();
		const struct symbol_file *files;
		size_t nfiles = symbol_module_files(m, &files);
		if (nfiles == 0) {
			diag(warnings, DIAG_WARNING, "%s: not archived", escape_text(warning, safe, sizeof(safe)));
			fprintf(mf, "%s\tmissing\t-\t%s\n", *hex ? hex : "-", escape_text(path, safe, sizeof(safe)));
			(*missing)++;
			continue;
		}
		for (size_t f = 0; f < nfiles && !t->error; f++) {
			char member[8192], why[512];
			member_of(&files[f], member, sizeof(member));
			if (seen(&done, member))
				continue;
			if (tar_add_file(t, member, files[f].path, why, sizeof(why)) < 0 && !t->error) {
				diag(warnings, DIAG_WARNING, "%s: %s: not archived", escape_text(files[f].path, safe, sizeof(safe)),
				     escape_text(why, safe2, sizeof(safe2)));
				(*missing)++;
				continue;
			}
			if (why[0])
				diag(warnings, DIAG_WARNING, "%s: %s", escape_text(files[f].path, safe, sizeof(safe)),
				     escape_text(why, safe2, sizeof(safe2)));
			/* The manifest is one line per file: names escaped like a
			 * terminal's, so a tab or newline in a path cannot split it. */
			fprintf(mf, "%s\t%s\t%s\t%s%s%s\n", *hex ? hex : "-", files[f].kind,
				escape_text(member, safe3, sizeof(safe3)), escape_text(files[f].path, safe, sizeof(safe)),
				f == 0 ? "\t" : "", f == 0 ? escape_text(path, safe2, sizeof(safe2)) : "");
		}
	}
	fclose(mf);
	for (size_t i = 0; i < done.n; i++)
		free(done.names[i]);
	free(done.names);
	symbolizer_free(s);
	return t->error ? -1 : 0;
}

int archive_write(FILE *out, const struct profile *p, const struct load_options *lo, const struct diag_sink *warnings,
		  unsigned *missing)
{
	struct tar_writer t = {.out = out};
	char *manifest = NULL;
	size_t manifest_len = 0;
	int ok = pack(&t, p, lo, warnings, &manifest, &manifest_len, missing) == 0 &&
		 tar_add_data(&t, MANIFEST, manifest, manifest_len) == 0 && tar_finish(&t) == 0;
	free(manifest);
	if (!ok)
		errno = t.error;
	return ok ? 0 : -1;
}
