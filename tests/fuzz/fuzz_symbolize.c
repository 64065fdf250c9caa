/*
 * fuzz_symbolize.c - the symbolizer fuzz targets' shared part (see
 * fuzz_symbolize.h): the header, the scratch directory, and one
 * symbolization through the public API (symbolize.h), as analyze's loader
 * calls it: a module opened (for its wanted addresses, or whole), then
 * lookups of inline chains, function extents from the FDEs and symbol
 * extents. Beyond "no crash, no leak, no hang" it checks what the API
 * promises its callers: at most max frames, a name for each, only the
 * outermost one not inlined, names and warnings free of control characters
 * (they reach terminals), extents that hold the address asked about.
 */
#include "fuzz_symbolize.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize.h"

#define MAX_FRAMES 16

void fuzz_sym_check(int ok, const char *what, const char *file, int line)
{
	if (ok)
		return;
	fflush(stdout);
	fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
	__builtin_trap();
}

int fuzz_sym_header(const uint8_t *data, size_t size, struct fuzz_sym_input *in)
{
	if (size < 2)
		return 0;
	memset(in, 0, sizeof(*in));
	in->options = data[0];
	in->naddrs = data[1] % (FUZZ_SYM_MAX_ADDRS + 1);
	size_t need = 2 + 8 * in->naddrs;
	if (size < need)
		return 0;
	for (size_t i = 0; i < in->naddrs; i++) {
		uint64_t v = 0;
		for (int b = 7; b >= 0; b--)
			v = v << 8 | data[2 + 8 * i + (size_t)b];
		in->addrs[i] = v;
	}
	in->rest = data + need;
	in->rest_len = size - need;
	return 1;
}

static char dir[PATH_MAX];

static void remove_dir(void)
{
	const char *names[] = {FUZZ_SYM_MODULE, FUZZ_SYM_SUP, FUZZ_SYM_DWO, FUZZ_SYM_DWP};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		fuzz_sym_write(names[i], NULL, 0);
	rmdir(dir);
}

const char *fuzz_sym_dir(void)
{
	if (dir[0] == '\0') {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/ipscope-fuzz-symbolize-XXXXXX",
			 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
		if (mkdtemp(dir) == NULL) {
			perror(dir);
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

void fuzz_sym_write(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX + 64];
	snprintf(path, sizeof(path), "%s/%s", fuzz_sym_dir(), name);
	if (data == NULL) {
		unlink(path);
		return;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	const uint8_t *p = data;
	while (fd >= 0 && len > 0) {
		ssize_t n = write(fd, p, len);
		if (n <= 0)
			break;
		p += n;
		len -= (size_t)n;
	}
	if (fd < 0 || len > 0 || close(fd) != 0) {
		perror(path);
		abort();
	}
}

/* NULL, or text with no control character (a terminal would obey it). */
static void check_text(const char *s)
{
	for (; s != NULL && *s; s++)
		fuzz_sym_require((unsigned char)*s >= 0x20 && *s != 0x7f);
}

/* n frames of a lookup that could write max. */
static void check_frames(const struct symbol_frame *f, int n, int max)
{
	fuzz_sym_require(n >= 0 && n <= max);
	for (int i = 0; i < n; i++) {
		fuzz_sym_require(f[i].function != NULL && f[i].function_parameters != NULL &&
				 f[i].linkage_name != NULL);
		check_text(f[i].function);
		check_text(f[i].function_parameters);
		check_text(f[i].file);
		check_text(f[i].function_file);
		/* Innermost first: every frame but the outermost was inlined
		 * (a chain cut at max may end on an inlined one). */
		if (i < n - 1)
			fuzz_sym_require(f[i].inlined);
		else if (n < max)
			fuzz_sym_require(!f[i].inlined);
	}
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

void fuzz_sym_run(const struct fuzz_sym_input *in)
{
	const char *debug_dirs[] = {fuzz_sym_dir()};
	struct symbolizer_options o = {
		.debug_dirs = debug_dirs,
		.ndebug_dirs = 1,
		.demangle = (in->options & FUZZ_SYM_DEMANGLE) != 0,
		.keep_clones = (in->options & FUZZ_SYM_KEEP_CLONES) != 0,
		.full_names = (in->options & FUZZ_SYM_FULL_NAMES) != 0,
		.raw_names = (in->options & FUZZ_SYM_RAW_NAMES) != 0,
		.offline = 1,
	};
	struct symbolizer *s = symbolizer_new(&o);
	fuzz_sym_require(s != NULL);
	char path[PATH_MAX + 64], warning[8192];
	snprintf(path, sizeof(path), "%s/%s", fuzz_sym_dir(), FUZZ_SYM_MODULE);
	/* Wanted: the first half of the addresses, sorted as the loader
	 * gives them; the others are looked up after, forcing the reload. */
	uint64_t want[FUZZ_SYM_MAX_ADDRS];
	size_t nwant = (in->naddrs + 1) / 2;
	memcpy(want, in->addrs, nwant * sizeof(*want));
	qsort(want, nwant, sizeof(*want), compare_u64);
	int partial = (in->options & FUZZ_SYM_WANT) != 0;
	struct symbol_module *m = symbolizer_module_for(s, path, NULL, 0, partial ? want : NULL,
							partial ? nwant : 0, warning,
							sizeof(warning));
	fuzz_sym_require(m != NULL);
	/* FUZZ_SYMBOLIZE_PRINT=1: what each input symbolizes to, to see that
	 * seeds reach the readers they are meant for. */
	static int print = -1;
	if (print < 0)
		print = getenv("FUZZ_SYMBOLIZE_PRINT") != NULL;
	if (print)
		printf("flags %#x, warning \"%s\"\n", symbol_module_flags(m), warning);
	check_text(warning);
	(void)symbol_module_flags(m);
	const struct symbol_file *files;
	size_t nfiles = symbol_module_files(m, &files);
	for (size_t i = 0; i < nfiles; i++)
		fuzz_sym_require(files[i].kind != NULL && files[i].path != NULL);
	for (size_t i = 0; i < in->naddrs; i++) {
		uint64_t a = in->addrs[i], lo, hi;
		struct symbol_frame frames[MAX_FRAMES];
		int n = symbol_module_lookup(m, a, frames, MAX_FRAMES);
		check_frames(frames, n, MAX_FRAMES);
		for (int k = 0; print && k < n; k++)
			printf("  %#llx: %s %s:%u%s\n", (unsigned long long)a, frames[k].function,
			       frames[k].file ? frames[k].file : "?", frames[k].line,
			       frames[k].inlined ? " (inlined)" : "");
		check_frames(frames, symbol_module_lookup(m, a, frames, 1), 1);
		const char *name;
		if (symbol_module_symbol_extent(m, a, &lo, &hi, &name)) {
			fuzz_sym_require(lo <= a && a < hi && name != NULL);
			check_text(name);
		}
		if (symbol_module_code_extent(m, a, &lo, &hi))
			fuzz_sym_require(lo <= a && a < hi);
	}
	/* The same module again is the cached one. */
	fuzz_sym_require(symbolizer_module(s, path, NULL, 0, NULL, 0) == m);
	symbolizer_free(s);
}
