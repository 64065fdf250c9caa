/*
 * test_symbolize_links.c - DWARF in other files (tests/unit/symbolize/
 * make_links.sh builds them into BIN/links): dwz supplementary files
 * (.gnu_debugaltlink and DWARF 5 .debug_sup, found by name and by
 * build-id), split DWARF in .dwo files and .dwp packages (DWARF 4 and 5).
 * The known answer for each is the plain build of the same code: every
 * inline chain (function, file, line, inlined) at every other byte of every
 * function must be identical.
 *
 * Then the bad input: a supplementary or .dwo file that is missing, cut
 * short or from another build gives a warning naming it, and that code is
 * named from the symbol table with the line rows still right.
 *
 * usage: unit_symbolize_links BIN_DIR
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile.h"
#include "symbolize.h"

#include "check.h"

static const char *bin_dir;

static char *path_in(const char *dir, const char *name)
{
	static char buf[32][4096];
	static int next;
	char *p = buf[next++ % 32];
	/* Composed apart first: dir may be an earlier result of this function. */
	char composed[4096];
	size_t n = strlen(dir), m = strlen(name);
	if (n + 1 + m >= sizeof(composed))
		n = m = 0; /* too long for a test path: "/" fails loudly */
	memcpy(composed, dir, n);
	composed[n] = '/';
	memcpy(composed + n + 1, name, m);
	composed[n + 1 + m] = '\0';
	memcpy(p, composed, n + m + 2);
	return p;
}

/* Every other byte of the sized function symbols of path's .symtab. */
static size_t addresses_of(const char *path, uint64_t **out)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t n = 0, cap = 0;
	*out = NULL;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_size == 0 || sym.st_shndx == SHN_UNDEF)
				continue;
			for (uint64_t a = sym.st_value; a < sym.st_value + sym.st_size; a += 2) {
				if (n == cap)
					*out = realloc(*out, (cap = cap ? 2 * cap : 4096) * sizeof(**out));
				(*out)[n++] = a;
			}
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n;
}

static int same_string(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

static struct symbol_module *open_module(struct symbolizer *s, const char *path, char *warning)
{
	return symbolizer_module(s, path, NULL, 0, warning, 1024);
}

/* path (with dirs as --debug-dir) symbolizes exactly as ref does. */
static void check_same_as(const char *ref, const char *path, const char *const *dirs, int ndirs)
{
	struct symbolizer *rs = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbolizer *ts = symbolizer_new(
		&(struct symbolizer_options){.demangle = 1, .debug_dirs = dirs, .ndebug_dirs = ndirs});
	char warning[1024];
	struct symbol_module *rm = open_module(rs, ref, warning);
	struct symbol_module *tm = open_module(ts, path, warning);
	CHECKF(warning[0] == '\0', "%s: warning '%s'", path, warning);
	CHECKF(symbol_module_flags(tm) & PROFILE_MODULE_HAS_INLINE_FRAMES, "%s: flags %#x", path,
	       symbol_module_flags(tm));
	uint64_t *addrs;
	size_t n = addresses_of(ref, &addrs), differ = 0, inlined = 0;
	CHECKF(n > 50, "%s: only %zu addresses", ref, n);
	for (size_t i = 0; i < n; i++) {
		struct symbol_frame a[32], b[32];
		int na = symbol_module_lookup(rm, addrs[i], a, 32);
		int nb = symbol_module_lookup(tm, addrs[i], b, 32);
		int same = na == nb;
		for (int f = 0; f < na && same; f++)
			same = same_string(a[f].function, b[f].function) &&
			       same_string(a[f].file, b[f].file) && a[f].line == b[f].line &&
			       a[f].inlined == b[f].inlined &&
			       same_string(a[f].function_file, b[f].function_file) &&
			       a[f].function_line == b[f].function_line;
		inlined += na > 1;
		if (!same && differ++ < 3)
			fprintf(stderr, "%s %#lx: %d frames (%s at %s:%u), want %d (%s at %s:%u)\n", path,
				(unsigned long)addrs[i], nb, nb ? b[0].function : "-",
				nb && b[0].file ? b[0].file : "?", nb ? b[0].line : 0, na,
				na ? a[0].function : "-", na && a[0].file ? a[0].file : "?",
				na ? a[0].line : 0);
	}
	CHECKF(differ == 0, "%s: %zu of %zu addresses differ from %s", path, differ, n, ref);
	CHECKF(inlined > 0, "%s: no inline chain among %zu addresses", ref, n);
	free(addrs);
	symbolizer_free(rs);
	symbolizer_free(ts);
}

/*
 * path's DWARF refers to a file that cannot be used: the warning names
 * want (the file) and says why (reason); every address gets the symbol
 * table's name for the outermost function, no inline frames, and the line
 * row the plain build ref gives its innermost frame.
 */
static void check_fallback(const char *ref, const char *path, const char *want,
			   const char *reason)
{
	struct symbolizer *rs = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbolizer *ts = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	char warning[1024];
	struct symbol_module *rm = open_module(rs, ref, warning);
	struct symbol_module *tm = open_module(ts, path, warning);
	CHECKF(strstr(warning, want) != NULL && strstr(warning, reason) != NULL,
	       "%s: warning '%s' does not name %s (%s)", path, warning, want, reason);
	uint64_t *addrs;
	size_t n = addresses_of(ref, &addrs), wrong = 0;
	for (size_t i = 0; i < n; i++) {
		struct symbol_frame a[32], b[32];
		int na = symbol_module_lookup(rm, addrs[i], a, 32);
		int nb = symbol_module_lookup(tm, addrs[i], b, 32);
		int ok = na > 0 && nb == 1 && !b[0].inlined &&
			 same_string(a[na - 1].function, b[0].function) &&
			 same_string(a[0].file, b[0].file) && a[0].line == b[0].line;
		if (!ok && wrong++ < 3)
			fprintf(stderr, "%s %#lx: %d frames (%s at %s:%u), want %s at %s:%u\n", path,
				(unsigned long)addrs[i], nb, nb ? b[0].function : "-",
				nb && b[0].file ? b[0].file : "?", nb ? b[0].line : 0,
				na ? a[na - 1].function : "-", na && a[0].file ? a[0].file : "?",
				na ? a[0].line : 0);
	}
	CHECKF(wrong == 0, "%s: %zu of %zu addresses not named from the symbol table", path, wrong,
	       n);
	free(addrs);
	symbolizer_free(rs);
	symbolizer_free(ts);
}

static void run(const char *cmd)
{
	CHECKF(system(cmd) == 0, "%s", cmd);
}

/* The dwz'd gen5 with its debug file in a scratch directory, beside a
 * common.debug made by make (a shell command, "" for none). */
static const char *dwz_copy(const char *name, const char *make)
{
	static char dir[4096];
	char cmd[32768];
	const char *links = path_in(bin_dir, "links");
	snprintf(dir, sizeof(dir), "%s/dwz-%s", links, name);
	snprintf(cmd, sizeof(cmd),
		 "rm -rf '%s' && mkdir '%s' && cp '%s/dwz/gen5' '%s/dwz/gen5.debug' '%s' && cd '%s' %s%s",
		 dir, dir, links, links, dir, dir, make[0] ? "&& " : "", make);
	run(cmd);
	return path_in(dir, "gen5");
}

int main(int argc, char **argv)
{
	unsetenv("DEBUGINFOD_URLS"); /* hermetic: no server is asked */
	if (argc != 2) {
		fprintf(stderr, "usage: unit_symbolize_links BIN_DIR\n");
		return 2;
	}
	static char absolute[4096];
	if (realpath(argv[1], absolute) == NULL) {
		fprintf(stderr, "unit_symbolize_links: %s: not found\n", argv[1]);
		return 1;
	}
	bin_dir = absolute; /* the copies are made from inside other directories */
	const char *links = path_in(bin_dir, "links");
	const char *gen4 = path_in(bin_dir, "generated_dwarf4");
	const char *gen5 = path_in(bin_dir, "generated_dwarf5");
	const char *inline_ref = path_in(bin_dir, "inline_workload");

	/* dwz: .gnu_debugaltlink by relative name; partial units in one file. */
	check_same_as(gen5, path_in(links, "dwz/gen5"), NULL, 0);
	check_same_as(gen4, path_in(links, "dwz/gen4"), NULL, 0);
	check_same_as(gen5, path_in(links, "dwz/solo"), NULL, 0);
	/* dwz -5: .debug_sup, found only by its checksum under a debug dir. */
	const char *store[] = {path_in(links, "dwz5/store")};
	check_same_as(gen5, path_in(links, "dwz5/gen5"), store, 1);
	check_same_as(gen4, path_in(links, "dwz5/gen4"), store, 1);
	/* Split DWARF: .dwo beside the objects, .dwp packages. */
	check_same_as(gen4, path_in(links, "split4/gen"), NULL, 0);
	check_same_as(gen5, path_in(links, "split5/gen"), NULL, 0);
	check_same_as(gen4, path_in(links, "dwp4/gen"), NULL, 0);
	check_same_as(inline_ref, path_in(links, "dwp5/inline_workload"), NULL, 0);
	/* A .dwo not in its compile directory: by base name in a debug dir. */
	const char *dwo_store[] = {path_in(links, "split-store/store")};
	check_same_as(inline_ref, path_in(links, "split-store/inline_workload"), dwo_store, 1);

	/* Bad supplementary files: missing, cut short, another build's. */
	check_fallback(gen5, dwz_copy("missing", ""), "common.debug", "not found");
	char make[4400];
	snprintf(make, sizeof(make), "head -c 3000 '%s/dwz/common.debug' > common.debug", links);
	check_fallback(gen5, dwz_copy("truncated", make), "common.debug", "");
	snprintf(make, sizeof(make), "cp '%s/dwz-corrupt/common.debug' common.debug", links);
	check_fallback(gen5, dwz_copy("other", make), "common.debug", "another build");
	/* Bad .dwo files: the same three. */
	check_fallback(inline_ref, path_in(links, "split-bad/missing/inline_workload"),
		       "inline_workload.dwo", "not found");
	check_fallback(inline_ref, path_in(links, "split-bad/truncated/inline_workload"),
		       "inline_workload.dwo", "damaged");
	check_fallback(inline_ref, path_in(links, "split-bad/other/inline_workload"),
		       "inline_workload.dwo", "another build");
	if (check_failures == 0)
		printf("unit_symbolize_links: all passed\n");
	return check_exit_status();
}
