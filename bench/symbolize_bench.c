/*
 * symbolize_bench.c - drive the symbolizer the way addr2line is driven, so
 * the two can be timed and compared on the same addresses.
 *
 *   symbolize_bench --gen N [--seed S] FILE   N distinct addresses inside the
 *                                             functions of FILE's symbol table
 *   symbolize_bench [options] FILE < addrs    addr2line -a -f -i style output
 *
 * Options: -d DIR (debug dir, repeatable), --no-demangle, --keep-clones,
 * --full-names, --raw-names (as addr2line -C names functions), -q (no
 * output, timing only). Timing (CPU time) goes to stderr as one line:
 * "load S s, N lookups in S s, R lookups/s".
 */
#include <getopt.h>
#include <gelf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize.h"

#define MAX_FRAMES 64

/* CPU seconds of this process: other jobs on a shared machine make wall
 * time useless for comparing against addr2line. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Extents [value, value+size) of the sized function symbols of path
 * (.symtab, else .dynsym): where a profiler's samples can land. */
static size_t function_extents(const char *path, uint64_t (**out)[2])
{
	*out = NULL;
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0, cap = 0;
	for (int pass = 0; pass < 2 && n == 0; pass++) {
		Elf64_Word want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn;
		     scn = elf_nextscn(elf, scn)) {
			GElf_Shdr shdr;
			Elf_Data *data;
			if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != want ||
			    shdr.sh_entsize == 0 || !(data = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
				GElf_Sym sym;
				if (!gelf_getsym(data, (int)i, &sym) ||
				    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
				    sym.st_shndx == SHN_UNDEF || sym.st_size == 0 || sym.st_value == 0)
					continue;
				if (n == cap)
					*out = realloc(*out, (cap = cap ? 2 * cap : 1024) * sizeof(**out));
				(*out)[n][0] = sym.st_value;
				(*out)[n][1] = sym.st_value + sym.st_size;
				n++;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* N distinct addresses inside functions of symbols_path, in random order.
 * Aliases make extents overlap: an address is drawn per extent and the
 * duplicates dropped, then drawn again until there are N. */
static int generate(const char *symbols_path, size_t n, unsigned seed)
{
	uint64_t(*extents)[2];
	size_t nextents = function_extents(symbols_path, &extents);
	uint64_t total = 0;
	for (size_t i = 0; i < nextents; i++)
		total += extents[i][1] - extents[i][0];
	if (total < 2 * (uint64_t)n) {
		fprintf(stderr, "symbolize_bench: %s has too little code for %zu addresses\n",
			symbols_path, n);
		free(extents);
		return 1;
	}
	srandom(seed);
	uint64_t *addrs = malloc(n * sizeof(*addrs));
	size_t have = 0;
	while (have < n) {
		while (have < n) {
			uint64_t r = ((uint64_t)random() << 31 | (uint64_t)random()) % total;
			size_t e = 0;
			for (; r >= extents[e][1] - extents[e][0]; e++)
				r -= extents[e][1] - extents[e][0];
			addrs[have++] = extents[e][0] + r;
		}
		qsort(addrs, have, sizeof(*addrs), compare_u64);
		size_t kept = 0;
		for (size_t i = 0; i < have; i++)
			if (kept == 0 || addrs[kept - 1] != addrs[i])
				addrs[kept++] = addrs[i];
		have = kept;
	}
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)random() % (i + 1);
		uint64_t t = addrs[i];
		addrs[i] = addrs[j];
		addrs[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		printf("0x%" PRIx64 "\n", addrs[i]);
	free(addrs);
	free(extents);
	return 0;
}

/* Append s to stdout: putc-level code, because printf's parsing per line
 * cost this driver as much as the lookups it is there to time. */
static void put_string(const char *s)
{
	fputs_unlocked(s, stdout);
}

static void put_unsigned(uint64_t v, int base, int min_digits)
{
	char buf[24];
	int n = 0;
	do {
		buf[n++] = "0123456789abcdef"[v % (unsigned)base];
		v /= (unsigned)base;
	} while (v > 0 || n < min_digits);
	while (n > 0)
		putc_unlocked(buf[--n], stdout);
}

/* One address as addr2line -a -f -i prints it. */
static void print_chain(uint64_t addr, const struct symbol_frame *frames, int n)
{
	put_string("0x");
	put_unsigned(addr, 16, 16);
	putc_unlocked('\n', stdout);
	if (n == 0)
		put_string("??\n??:0\n");
	for (int f = 0; f < n; f++) {
		put_string(frames[f].function);
		putc_unlocked('\n', stdout);
		put_string(frames[f].file ? frames[f].file : "??");
		putc_unlocked(':', stdout);
		put_unsigned(frames[f].line, 10, 1);
		putc_unlocked('\n', stdout);
	}
}

static void usage(void)
{
	fputs("usage: symbolize_bench [-d DIR]... [--no-demangle] [--keep-clones] [--full-names]\n"
	      "                       [--raw-names] [-q] FILE < addrs\n"
	      "       symbolize_bench --gen N [--seed S] SYMBOL-FILE\n",
	      stderr);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"gen", required_argument, NULL, 'g'},   {"seed", required_argument, NULL, 's'},
		{"no-demangle", no_argument, NULL, 'n'}, {"keep-clones", no_argument, NULL, 'k'},
		{"full-names", no_argument, NULL, 'F'},  {"raw-names", no_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	const char *dirs[16];
	struct symbolizer_options options = {.debug_dirs = dirs, .demangle = 1};
	size_t gen = 0;
	unsigned seed = 1;
	int quiet = 0, c;
	while ((c = getopt_long(argc, argv, "d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (options.ndebug_dirs < 16)
				dirs[options.ndebug_dirs++] = optarg;
			break;
		case 'g': gen = strtoul(optarg, NULL, 0); break;
		case 's': seed = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': options.demangle = 0; break;
		case 'k': options.keep_clones = 1; break;
		case 'F': options.full_names = 1; break;
		case 'R': options.raw_names = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind + 1 != argc) {
		usage();
		return 2;
	}
	const char *path = argv[optind];
	if (gen > 0)
		return generate(path, gen, seed);

	size_t naddrs = 0, cap = 1024;
	uint64_t *addrs = malloc(cap * sizeof(*addrs));
	char buf[128];
	while (fgets(buf, sizeof(buf), stdin)) {
		if (naddrs == cap)
			addrs = realloc(addrs, (cap *= 2) * sizeof(*addrs));
		addrs[naddrs++] = strtoull(buf, NULL, 16);
	}

	double t0 = now();
	struct symbolizer *s = symbolizer_new(&options);
	char warning[512];
	struct symbol_module *m = symbolizer_module(s, path, NULL, 0, warning, sizeof(warning));
	if (warning[0] != '\0')
		fprintf(stderr, "%s\n", warning);
	double t1 = now();
	static struct symbol_frame frames[MAX_FRAMES];
	for (size_t i = 0; i < naddrs; i++) {
		int n = symbol_module_lookup(m, addrs[i], frames, MAX_FRAMES);
		if (!quiet)
			print_chain(addrs[i], frames, n);
	}
	fflush(stdout);
	double t2 = now();
	fprintf(stderr, "load %.3f s, %zu lookups in %.3f s, %.0f lookups/s\n", t1 - t0, naddrs,
		t2 - t1, (double)naddrs / (t2 - t1 > 0 ? t2 - t1 : 1e-9));
	symbolizer_free(s);
	free(addrs);
	return 0;
}
