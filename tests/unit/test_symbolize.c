/*
 * test_symbolize.c - unit tests of the symbolizer on workloads built -O2 -g
 * by tests/symbolize.cmake:
 *
 *   BIN/inline_workload            full DWARF (mix_step inlined into churn)
 *   BIN/inline_workload_v2         same source rebuilt: another build-id
 *   BIN/debuglink/inline_workload  stripped, DWARF in .debug/ via .gnu_debuglink
 *   BIN/debugdir/inline_workload   stripped, DWARF in BIN/store (a --debug-dir)
 *   BIN/nodebug/inline_workload    stripped, no debuglink: symbol table only
 *   BIN/stripped/inline_workload   strip --strip-all: no symbols, .eh_frame kept
 *   BIN/stripped/inline_workload_dyn  the same, built -rdynamic: .dynsym names churn
 *   BIN/stripped/inline_workload_debug_frame  the same, its FDEs in .debug_frame only
 *   BIN/cpp_workload               C++ namespaces and templates
 *   BIN/generated_dwarf5           the generated program: .cold clones
 *   BIN/links/{dwz,split}-corrupt  dwz and split DWARF copies to damage
 *   /proc/self/exe                 this test: many units (the wanted-address
 *                                  test)
 *
 * usage: unit_symbolize SOURCE_DIR BIN_DIR [corrupt]
 * (corrupt: only the damaged-file test, which runs under its own leak rules)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "symbolize.h"
#include "symbolize_demangle.h"
#include "symbolize_internal.h"

#include "check.h"

static const char *source_dir, *bin_dir;

#include "symbolize_test_support.h"

static struct sym_elf_info build_id_of(const char *path)
{
	struct sym_elf_info info;
	sym_elf_inspect(path, &info);
	return info;
}

static void test_system_paths(void)
{
	static const char *const system[] = {
		"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30",
		"/lib64/ld-linux-x86-64.so.2", "linux-vdso.so.1", "[vdso]", "/lib/libm.so.6",
		"/usr/lib/x86_64-linux-gnu/libgcc_s.so.1", "/opt/ipscope/libipscope-agent.so",
		"/lib/x86_64-linux-gnu/libpthread.so.0", "/lib/librt.so.1", "libdl.so.2",
	};
	static const char *const user[] = {
		"/usr/bin/python3", "/home/u/libcurl.so.4", "/tmp/libmine.so", "./app", "/lib/libcap.so.2",
	};
	for (size_t i = 0; i < sizeof(system) / sizeof(system[0]); i++)
		CHECKF(symbol_path_is_system(system[i]), "%s", system[i]);
	for (size_t i = 0; i < sizeof(user) / sizeof(user[0]); i++)
		CHECKF(!symbol_path_is_system(user[i]), "%s", user[i]);
}

/* Open path as the traced inline_workload (its build-id) and return the module. */
static struct symbol_module *open_traced(struct symbolizer *s, const char *path, char *warning,
					 size_t warning_len)
{
	struct sym_elf_info traced = build_id_of(path_in(bin_dir, "inline_workload"));
	CHECKF(traced.build_id_len > 0, "workload has no build-id");
	return symbolizer_module(s, path, traced.build_id, traced.build_id_len, warning, warning_len);
}

/*
 * Full symbolization of one copy of inline_workload: somewhere in churn,
 * the chain is mix_step (inline_helper.h, inlined) <- churn at the call line.
 */
static void check_inline_chain(const char *path, const char *const *debug_dirs, int ndebug_dirs)
{
	struct symbolizer_options o = {.debug_dirs = debug_dirs, .ndebug_dirs = ndebug_dirs, .demangle = 1};
	struct symbolizer *s = symbolizer_new(&o);
	char warning[512];
	struct symbol_module *m = open_traced(s, path, warning, sizeof(warning));
	unsigned want = PROFILE_MODULE_HAS_FUNCTIONS | PROFILE_MODULE_HAS_FILENAMES |
			PROFILE_MODULE_HAS_LINE_NUMBERS | PROFILE_MODULE_HAS_INLINE_FRAMES;
	CHECKF((symbol_module_flags(m) & want) == want, "%s: flags %#x", path, symbol_module_flags(m));
	CHECKF(!(symbol_module_flags(m) & (PROFILE_MODULE_NO_DEBUG_INFO | PROFILE_MODULE_SYSTEM)),
	      "%s: flags %#x", path, symbol_module_flags(m));
	CHECKF(warning[0] == '\0', "%s: warning '%s'", path, warning);

	uint64_t addr = 0, size = 0;
	CHECKF(symbol_extent(path_in(bin_dir, "inline_workload"), "churn", &addr, &size), "no churn");
	uint32_t body = marker_line(path_in(source_dir, "inline_helper.h"), "MARK:helper-body");
	uint32_t call = marker_line(path_in(source_dir, "inline_workload.c"), "MARK:call");
	int inlined_seen = 0, outer_ok = 1;
	for (uint64_t a = addr; a < addr + size; a++) {
		struct symbol_frame f[8];
		int n = symbol_module_lookup(m, a, f, 8);
		CHECKF(n >= 1, "%s: nothing at %#lx", path, (unsigned long)a);
		if (n < 1)
			break;
		outer_ok &= strcmp(f[n - 1].function, "churn") == 0 && !f[n - 1].inlined &&
			    ends_with(f[n - 1].file, "inline_workload.c");
		if (n == 2 && strcmp(f[0].function, "mix_step") == 0) {
			inlined_seen = 1;
			CHECKF(f[0].inlined == 1, "mix_step not marked inlined");
			CHECKF(ends_with(f[0].file, "inline_helper.h"), "inline file %s", f[0].file);
			CHECKF(f[0].line >= body && f[0].line <= body + 3, "inline line %u, body at %u",
			      f[0].line, body);
			CHECKF(ends_with(f[0].function_file, "inline_helper.h") &&
				      f[0].function_line == body - 2,
			      "mix_step declared at %s:%u", f[0].function_file, f[0].function_line);
			CHECKF(f[1].line == call, "call line %u, want %u", f[1].line, call);
		}
	}
	CHECKF(inlined_seen, "%s: no address of churn shows mix_step inlined", path);
	CHECKF(outer_ok, "%s: outermost frame is not churn in inline_workload.c", path);
	CHECKF(symbol_module_lookup(m, 0x10, (struct symbol_frame[4]){0}, 4) == 0, "ELF header named");
	symbolizer_free(s);
}

/* A module with only a symbol table: churn by name, nothing more. */
static void check_symbols_only(const char *path)
{
	struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	char warning[512];
	struct symbol_module *m = open_traced(s, path, warning, sizeof(warning));
	unsigned flags = symbol_module_flags(m);
	CHECKF((flags & PROFILE_MODULE_NO_DEBUG_INFO) && (flags & PROFILE_MODULE_HAS_FUNCTIONS) &&
		      !(flags & PROFILE_MODULE_HAS_LINE_NUMBERS),
	      "flags %#x", flags);
	CHECKF(strstr(warning, "no debug info") != NULL, "warning '%s'", warning);
	uint64_t addr = 0, size = 0;
	symbol_extent(path_in(bin_dir, "inline_workload"), "churn", &addr, &size);
	struct symbol_frame f[4];
	int n = symbol_module_lookup(m, addr + size / 2, f, 4);
	CHECKF(n == 1 && strcmp(f[0].function, "churn") == 0 && f[0].file == NULL && f[0].line == 0,
	      "n=%d %s", n, n ? f[0].function : "");
	/* A PLT stub is no part of the unsized _init before it: it is its own. */
	uint64_t plt = section_address(path, ".plt");
	CHECKF(plt != 0, "no .plt in %s", path);
	n = symbol_module_lookup(m, plt + 16, f, 4);
	CHECKF(n == 1 && ends_with(f[0].function, "@plt"), "PLT stub named %s",
	       n ? f[0].function : "nothing");
	symbolizer_free(s);
}

/*
 * The module path without symbols, built as unstripped: nothing is named,
 * but the FDEs bound each function, so every address of churn gives
 * churn's extent (as the unstripped file's symbol table says), and every
 * function the FDEs cover starts and ends where its symbol does: the FDE's
 * own range, not one row of its CFA table (which is smaller).
 */
static void check_function_starts(const char *path, const char *unstripped)
{
	struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbol_module *m = symbolizer_module(s, path, NULL, 0, NULL, 0);
	uint64_t addr = 0, size = 0, start = 0, end = 0;
	CHECKF(symbol_extent(unstripped, "churn", &addr, &size), "no churn in %s", unstripped);
	struct symbol_frame f[4];
	size_t wrong = 0;
	for (uint64_t a = addr; a < addr + size; a++) {
		CHECKF(symbol_module_lookup(m, a, f, 4) == 0, "%s: %#llx named %s", path, (unsigned long long)a,
		       f[0].function);
		if ((!symbol_module_code_extent(m, a, &start, &end) || start != addr || end != addr + size) &&
		    wrong++ == 0)
			CHECKF(0, "%s: %#llx: function [%#llx, %#llx), want churn's [%#llx, %#llx)", path,
			       (unsigned long long)a, (unsigned long long)start, (unsigned long long)end,
			       (unsigned long long)addr, (unsigned long long)(addr + size));
	}
	CHECKF(wrong == 0, "%s: %zu of %llu addresses of churn not in churn", path, wrong,
	       (unsigned long long)size);
	CHECKF(!symbol_module_code_extent(m, 0x10, &start, &end), "%s: the ELF header is in a function at %#llx",
	       path, (unsigned long long)start);
	struct sym_index symbols = {0};
	struct sym_strings st = {0};
	sym_elf_load_symbols(&symbols, &st, unstripped);
	size_t covered = 0;
	for (size_t i = 0; i < symbols.nsymbols; i++) {
		const struct sym_symbol *sym = &symbols.symbols[i];
		if (sym->size == 0 || !symbol_module_code_extent(m, sym->addr + sym->size - 1, &start, &end))
			continue;
		covered++;
		CHECKF(start == sym->addr && end == sym->addr + sym->size,
		       "%s: %s at [%#llx, %#llx): function [%#llx, %#llx)", path,
		       symbols.functions[sym->function].linkage_name, (unsigned long long)sym->addr,
		       (unsigned long long)(sym->addr + sym->size), (unsigned long long)start,
		       (unsigned long long)end);
	}
	CHECKF(covered >= 2, "%s: only %zu functions covered by FDEs", path, covered);
	sym_index_free(&symbols);
	sym_strings_free(&st);
	symbolizer_free(s);
}

/* No symbols at all (strip --strip-all): functions from .eh_frame, or from
 * .debug_frame; a build exporting churn (.dynsym) still names it. */
static void test_stripped_functions(void)
{
	check_function_starts(path_in(bin_dir, "stripped/inline_workload"), path_in(bin_dir, "inline_workload"));
	check_function_starts(path_in(bin_dir, "stripped/inline_workload_debug_frame"),
			      path_in(bin_dir, "stripped/inline_workload_debug_frame.full"));
	struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbol_module *m = symbolizer_module(s, path_in(bin_dir, "stripped/inline_workload_dyn"), NULL, 0,
						    NULL, 0);
	uint64_t addr = 0, size = 0;
	CHECKF(symbol_extent(path_in(bin_dir, "stripped/inline_workload_dyn.full"), "churn", &addr, &size),
	       "no churn in the exporting build");
	struct symbol_frame f[4];
	int n = symbol_module_lookup(m, addr + size / 2, f, 4);
	CHECKF(n == 1 && strcmp(f[0].function, "churn") == 0, ".dynsym: %s", n ? f[0].function : "nothing");
	symbolizer_free(s);
}

/* DWARF found by build-id in a --debug-dir: DIR/.build-id/xx/yyyy.debug. */
static void test_build_id_debug_dir(void)
{
	struct sym_elf_info info = build_id_of(path_in(bin_dir, "inline_workload"));
	char hex[129] = "", dir[4096], file[4400];
	for (size_t i = 0; i < info.build_id_len; i++)
		sprintf(hex + 2 * i, "%02x", info.build_id[i]);
	snprintf(dir, sizeof(dir), "%s/buildid-store/.build-id/%.2s", bin_dir, hex);
	snprintf(file, sizeof(file), "%s/%s.debug", dir, hex + 2);
	char cmd[16384];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp '%s' '%s'", dir,
		 path_in(bin_dir, "store/inline_workload.debug"), file);
	CHECKF(system(cmd) == 0, "%s", cmd);
	const char *dirs[] = {"/nonexistent", path_in(bin_dir, "buildid-store")};
	check_inline_chain(path_in(bin_dir, "nodebug/inline_workload"), dirs, 2);
}

static void test_unusable_modules(void)
{
	struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	char warning[512];
	uint64_t addr = 0, size = 0;
	symbol_extent(path_in(bin_dir, "inline_workload"), "churn", &addr, &size);
	struct symbol_frame f[4];

	/* Rebuilt after the trace: flagged, and no names at all. */
	struct symbol_module *m = open_traced(s, path_in(bin_dir, "inline_workload_v2"), warning,
					      sizeof(warning));
	CHECKF(symbol_module_flags(m) & PROFILE_MODULE_BUILD_ID_MISMATCH, "flags %#x",
	      symbol_module_flags(m));
	CHECKF(strstr(warning, "build-id differs from the traced one") != NULL, "warning '%s'", warning);
	for (uint64_t a = addr; a < addr + size; a++)
		CHECKF(symbol_module_lookup(m, a, f, 4) == 0, "mismatched module answered at %#lx",
		      (unsigned long)a);

	m = symbolizer_module(s, "/nonexistent/app", NULL, 0, warning, sizeof(warning));
	CHECKF(m && (symbol_module_flags(m) & PROFILE_MODULE_MISSING), "missing file");
	CHECKF(strstr(warning, "file not found") != NULL, "warning '%s'", warning);
	CHECKF(symbol_module_lookup(m, addr, f, 4) == 0, "missing module answered");

	m = symbolizer_module(s, path_in(source_dir, "inline_workload.c"), NULL, 0, warning,
			      sizeof(warning));
	CHECKF(m && (symbol_module_flags(m) & PROFILE_MODULE_MISSING), "non-ELF file");
	CHECKF(strstr(warning, "not a readable ELF") != NULL, "warning '%s'", warning);

	m = symbolizer_module(s, "[vdso]", NULL, 0, warning, sizeof(warning));
	CHECKF(m && (symbol_module_flags(m) & PROFILE_MODULE_SYSTEM) && warning[0] == '\0',
	      "vdso: flags %#x warning '%s'", symbol_module_flags(m), warning);

	/* The same module twice is the same handle, indexed once. */
	struct symbol_module *a1 = symbolizer_module(s, path_in(bin_dir, "inline_workload"), NULL, 0,
						     NULL, 0);
	CHECKF(a1 == symbolizer_module(s, path_in(bin_dir, "inline_workload"), NULL, 0, NULL, 0),
	      "module not cached");
	symbolizer_free(s);
}

static void test_cpp(void)
{
	const char *path = path_in(bin_dir, "cpp_workload");
	static const struct {
		const char *linkage, *pretty, *parameters;
	} functions[] = {
		{"_ZNK8geometry6shapes6ScalerIdE5applyEd", "geometry::shapes::Scaler<double>::apply",
		 "geometry::shapes::Scaler<double>::apply(double) const"},
		{"_ZNK8geometry6shapes6ScalerIlE5applyEl", "geometry::shapes::Scaler<long>::apply",
		 "geometry::shapes::Scaler<long>::apply(long) const"},
		{"_ZN8geometry6shapes5totalERKSt6vectorIlSaIlEE", "geometry::shapes::total",
		 "geometry::shapes::total(std::vector<long, std::allocator<long> > const&)"},
	};
	/* demangle 0: as in the binary; 1: short names; 2: --full-names */
	for (int demangle = 0; demangle <= 2; demangle++) {
		struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){
			.demangle = demangle > 0, .full_names = demangle == 2});
		struct symbol_module *m = symbolizer_module(s, path, NULL, 0, NULL, 0);
		for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
			uint64_t addr = 0, size = 0;
			CHECKF(symbol_extent(path, functions[i].linkage, &addr, &size), "no %s",
			      functions[i].linkage);
			struct symbol_frame f[8];
			int n = symbol_module_lookup(m, addr, f, 8);
			const char *want = demangle == 0   ? functions[i].linkage
					   : demangle == 1 ? functions[i].pretty
							   : functions[i].parameters;
			const char *want_parameters = demangle == 0 ? want : functions[i].parameters;
			CHECKF(n >= 1 && strcmp(f[n - 1].function, want) == 0, "got %s, want %s",
			      n ? f[n - 1].function : "nothing", want);
			CHECKF(n >= 1 && strcmp(f[n - 1].function_parameters, want_parameters) == 0,
			       "got %s, want %s", n ? f[n - 1].function_parameters : "nothing",
			       want_parameters);
			CHECKF(n >= 1 && strcmp(f[n - 1].linkage_name, functions[i].linkage) == 0,
			      "linkage %s", n ? f[n - 1].linkage_name : "");
			CHECKF(n >= 1 && ends_with(f[n - 1].file, "cpp_workload.cpp"), "file %s",
			      n ? f[n - 1].file : "");
		}
		symbolizer_free(s);
	}
}

/* gcc's .cold / .part copies: merged into their function by default, kept
 * as the symbol table names them with keep_clones. */
static void test_clones(void)
{
	const char *path = path_in(bin_dir, "generated_dwarf5");
	uint64_t addr = 0, size = 0;
	CHECKF(symbol_extent(path, "entry_3.cold", &addr, &size), "no entry_3.cold in %s", path);
	for (int keep = 0; keep <= 1; keep++) {
		struct symbolizer *s = symbolizer_new(
			&(struct symbolizer_options){.demangle = 1, .keep_clones = keep});
		struct symbol_module *m = symbolizer_module(s, path, NULL, 0, NULL, 0);
		struct symbol_frame f[16];
		int n = symbol_module_lookup(m, addr, f, 16);
		const char *want = keep ? "entry_3.cold" : "entry_3";
		CHECKF(n >= 1 && strcmp(f[n - 1].function, want) == 0, "keep_clones=%d: %s, want %s",
		      keep, n ? f[n - 1].function : "nothing", want);
		CHECKF(n >= 1 && ends_with(f[n - 1].file, "module_3.c"), "file %s",
		      n ? f[n - 1].file : "");
		symbolizer_free(s);
	}
}

/*
 * Damaged DWARF must cost names, never the process: rounds times, damage
 * victim (a copy of pristine: round 0 cuts it to a third, the others flip
 * 64 bytes past the ELF header), then symbolize every address of churn in
 * module, which reads victim (itself, or its supplementary or split file).
 */
static void corrupt_rounds(const char *pristine, const char *victim, const char *module,
			   int rounds)
{
	FILE *in = fopen(pristine, "rb");
	CHECKF(in != NULL, "open %s", pristine);
	if (!in)
		return;
	static unsigned char data[4 << 20], copy[4 << 20];
	size_t n = fread(data, 1, sizeof(data), in);
	fclose(in);
	uint64_t addr = 0, size = 0;
	CHECKF(symbol_extent(path_in(bin_dir, "inline_workload"), "churn", &addr, &size), "no churn");
	srandom(7);
	for (int round = 0; round < rounds; round++) {
		memcpy(copy, data, n);
		size_t len = round == 0 ? n / 3 : n;
		for (int i = 0; round > 0 && i < 64; i++)
			copy[64 + (size_t)random() % (n - 64)] = (unsigned char)random();
		FILE *out = fopen(victim, "wb");
		CHECKF(out != NULL, "write %s", victim);
		if (!out)
			return;
		fwrite(copy, 1, len, out);
		fclose(out);
		struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
		struct symbol_module *m = symbolizer_module(s, module, NULL, 0, NULL, 0);
		struct symbol_frame f[16];
		for (uint64_t a = addr; a < addr + size + 256; a++)
			symbol_module_lookup(m, a, f, 16);
		symbolizer_free(s);
	}
	/* Leave the victim whole again. */
	FILE *out = fopen(victim, "wb");
	if (out) {
		fwrite(data, 1, n, out);
		fclose(out);
	}
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Frames of vaddr in m as one line (every field a report shows). */
static void describe(struct symbol_module *m, uint64_t vaddr, char *out, size_t len)
{
	struct symbol_frame f[64];
	int n = symbol_module_lookup(m, vaddr, f, 64);
	size_t used = (size_t)snprintf(out, len, "%d", n);
	for (int i = 0; i < n && used < len; i++)
		used += (size_t)snprintf(out + used, len - used, " | %s %s %s %s:%u %s:%u %d", f[i].function,
					 f[i].function_parameters, f[i].linkage_name, f[i].file ? f[i].file : "-",
					 f[i].line, f[i].function_file ? f[i].function_file : "-", f[i].function_line,
					 f[i].inlined);
}

/* Does m answer every address as whole answers it? */
static void check_same_answers(const char *what, struct symbol_module *whole, struct symbol_module *m,
			       const uint64_t *vaddrs, size_t n)
{
	char a[8192], b[8192];
	CHECKF(symbol_module_flags(whole) == symbol_module_flags(m), "%s: flags %x, whole %x", what,
	       symbol_module_flags(m), symbol_module_flags(whole));
	size_t differ = 0;
	for (size_t i = 0; i < n; i++) {
		describe(whole, vaddrs[i], a, sizeof(a));
		describe(m, vaddrs[i], b, sizeof(b));
		if (strcmp(a, b) != 0 && differ++ == 0)
			CHECKF(0, "%s: %#llx reads \"%s\", whole \"%s\"", what, (unsigned long long)vaddrs[i], b, a);
	}
	CHECKF(differ == 0, "%s: %zu of %zu addresses differ", what, differ, n);
}

/*
 * A module opened for some addresses (symbolizer_module_for: only their
 * units' rows and functions are read) answers as a whole load does, for the
 * wanted addresses and for the others (which reload it whole).
 */
static void test_wanted_addresses(void)
{
	const char *self = "/proc/self/exe";
	struct sym_index symbols = {0};
	struct sym_strings st = {0};
	CHECKF(sym_elf_load_symbols(&symbols, &st, self) > 100, "%s: few symbols", self);
	size_t n = 0, nwant = 0, nother = 0;
	uint64_t *mid = calloc(symbols.nsymbols + 1, sizeof(*mid)), *want = calloc(symbols.nsymbols + 1, sizeof(*want)),
		 *other = calloc(symbols.nsymbols + 1, sizeof(*other));
	for (size_t i = 0; i < symbols.nsymbols; i++) /* the middle of every function */
		if (symbols.symbols[i].size > 0)
			mid[n++] = symbols.symbols[i].addr + symbols.symbols[i].size / 2;
	qsort(mid, n, sizeof(*mid), compare_u64);
	for (size_t i = 0; i < n; i++) { /* one in eleven wanted (sorted, once each) */
		if (i > 0 && mid[i] == mid[i - 1])
			continue;
		if (i % 11 == 0)
			want[nwant++] = mid[i];
		else if (i % 5 == 0)
			other[nother++] = mid[i];
	}
	free(mid);
	CHECKF(nwant > 20 && nother > 20, "%zu wanted and %zu other addresses", nwant, nother);
	struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbolizer *lazy = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbol_module *whole = symbolizer_module(s, self, NULL, 0, NULL, 0);
	struct symbol_module *m = symbolizer_module_for(lazy, self, NULL, 0, want, nwant, NULL, 0);
	CHECK(symbolizer_module_for(lazy, self, NULL, 0, NULL, 0, NULL, 0) == m);
	check_same_answers("wanted", whole, m, want, nwant);
	check_same_answers("not wanted (reloaded)", whole, m, other, nother);
	check_same_answers("wanted, after the reload", whole, m, want, nwant);
	/* A module opened for no address at all answers the same too. */
	struct symbolizer *none = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbol_module *n0 = symbolizer_module_for(none, self, NULL, 0, want, 0, NULL, 0);
	check_same_answers("none wanted", whole, n0, want, nwant);
	symbolizer_free(none);
	symbolizer_free(lazy);
	symbolizer_free(s);
	free(want);
	free(other);
	sym_index_free(&symbols);
	sym_strings_free(&st);
}

/* File offset and size of section name in path: 1, or 0 if none. */
static int section_bytes(const char *path, const char *name, uint64_t *offset, uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY), found = 0;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn && !found; scn = elf_nextscn(elf, scn)) {
			GElf_Shdr shdr;
			const char *s;
			if (gelf_getshdr(scn, &shdr) && (s = elf_strptr(elf, shstrndx, shdr.sh_name)) &&
			    strcmp(s, name) == 0) {
				*offset = shdr.sh_offset;
				*size = shdr.sh_size;
				found = 1;
			}
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/*
 * A damaged frame section (.eh_frame, .debug_frame) in a copy of the file
 * pristine without symbols (where it names functions): bytes flipped,
 * lengths made huge (0xffffffff: a 64-bit length follows), words set at
 * random (CIE pointers anywhere, unknown encodings), the file cut inside
 * it. Every address of the code is asked for; any answer is a start at or
 * below the address.
 */
static void corrupt_frames(const char *pristine, const char *section)
{
	const char *victim = path_in(bin_dir, "corrupt_frames");
	uint64_t offset = 0, size = 0, text = section_address(pristine, ".text");
	CHECKF(section_bytes(pristine, section, &offset, &size) && size >= 64, "no %s in %s", section,
	       pristine);
	FILE *in = fopen(pristine, "rb");
	CHECKF(in != NULL, "open %s", pristine);
	if (!in || size < 64)
		return;
	static unsigned char data[4 << 20], copy[4 << 20];
	size_t n = fread(data, 1, sizeof(data), in);
	fclose(in);
	CHECKF(offset + size <= n, ".eh_frame past the end of %s", pristine);
	srandom(11);
	for (int round = 0; round < 200 && offset + size <= n; round++) {
		memcpy(copy, data, n);
		size_t len = n;
		uint64_t at = offset + (uint64_t)random() % (size - 4);
		switch (round % 4) {
		case 0:
			for (int i = 0; i < 16; i++)
				copy[offset + (uint64_t)random() % size] = (unsigned char)random();
			break;
		case 1: memset(copy + at, 0xff, 4); break;
		case 2:
			for (int i = 0; i < 4; i++)
				copy[at + (uint64_t)i] = (unsigned char)random();
			break;
		default: len = (size_t)at; break;
		}
		FILE *out = fopen(victim, "wb");
		CHECKF(out != NULL, "write %s", victim);
		if (!out)
			return;
		fwrite(copy, 1, len, out);
		fclose(out);
		struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
		struct symbol_module *m = symbolizer_module(s, victim, NULL, 0, NULL, 0);
		size_t below = 0;
		for (uint64_t a = text; a < text + 4096; a++) {
			uint64_t start = UINT64_MAX, end = 0;
			if (symbol_module_code_extent(m, a, &start, &end) && (start > a || end <= a))
				below++;
		}
		CHECKF(below == 0, "%s, round %d: %zu function extents not holding their address", section,
		       round, below);
		symbolizer_free(s);
	}
	unlink(victim);
	/* The parser alone on damaged copies in buffers of the section's exact
	 * size, so that a sanitizer build sees any read past its end. */
	for (int round = 0; round < 2000; round++) {
		uint64_t len = round % 8 == 7 ? (uint64_t)random() % size : size;
		uint8_t *bytes = malloc(len ? len : 1);
		memcpy(bytes, data + offset, len);
		for (int i = 0; len > 0 && i < 1 + round % 16; i++)
			bytes[(uint64_t)random() % len] = round % 3 == 0 ? 0xff : (uint8_t)random();
		struct sym_code_ranges r = {0};
		sym_fde_parse(&r, bytes, len, section_address(pristine, section), strcmp(section, ".eh_frame") == 0,
			      8);
		sym_code_ranges_finish(&r);
		uint64_t start, end;
		for (uint64_t a = text; a < text + 512; a += 3)
			if (sym_code_range_find(&r, a, &start, &end))
				CHECKF(start <= a && a < end, "%s: [%#llx, %#llx) does not hold %#llx", section,
				       (unsigned long long)start, (unsigned long long)end, (unsigned long long)a);
		sym_code_ranges_free(&r);
		free(bytes);
	}
}

static void test_corrupt_files(void)
{
	corrupt_frames(path_in(bin_dir, "stripped/inline_workload"), ".eh_frame");
	corrupt_frames(path_in(bin_dir, "stripped/inline_workload_debug_frame"), ".debug_frame");
	const char *orig = path_in(bin_dir, "inline_workload");
	const char *tmp = path_in(bin_dir, "corrupt_workload");
	corrupt_rounds(orig, tmp, tmp, 200);
	/* dwz: the supplementary file, then the debug file pointing into it
	 * (its copies live in links/dwz-corrupt, this test's own). */
	char pristine[4200], cmd[9000];
	const char *dwz = path_in(bin_dir, "links/dwz-corrupt");
	const char *files[][2] = {{"common.debug", "a"}, {"a.debug", "a"}};
	for (int i = 0; i < 2; i++) {
		snprintf(pristine, sizeof(pristine), "%s.pristine", path_in(dwz, files[i][0]));
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path_in(dwz, files[i][0]), pristine);
		CHECKF(system(cmd) == 0, "%s", cmd);
		corrupt_rounds(pristine, path_in(dwz, files[i][0]), path_in(dwz, files[i][1]), 100);
	}
	/* Split DWARF: the .dwo, and a .dwp (copied beside a copy of its module). */
	const char *split = path_in(bin_dir, "links/split-corrupt");
	snprintf(pristine, sizeof(pristine), "%s.pristine", path_in(split, "inline_workload.dwo"));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path_in(split, "inline_workload.dwo"), pristine);
	CHECKF(system(cmd) == 0, "%s", cmd);
	corrupt_rounds(pristine, path_in(split, "inline_workload.dwo"),
		       path_in(split, "inline_workload"), 100);
	const char *dwp_module = path_in(split, "dwp-module");
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s.dwp.pristine' && cp '%s' '%s'",
		 path_in(bin_dir, "links/dwp5/inline_workload.dwp"), dwp_module,
		 path_in(bin_dir, "links/dwp5/inline_workload"), dwp_module);
	CHECKF(system(cmd) == 0, "%s", cmd);
	corrupt_rounds(path_in(split, "dwp-module.dwp.pristine"), path_in(split, "dwp-module.dwp"),
		       dwp_module, 100);
}

/*
 * symbolizer_module_names: libc (this process's own, its debug file from libc6-dbg) named from its
 * symbol table, its DWARF neither read nor said to be missing; symbolizer_module: its lines.
 */
static void test_names_only(void)
{
	Dl_info dl;
	CHECKF(dladdr((void *)&getpid, &dl) && dl.dli_fname && dl.dli_fbase, "dladdr(getpid)");
	if (!dl.dli_fname || !strstr(dl.dli_fname, "libc.so"))
		return;
	uint64_t vaddr = (uint64_t)(uintptr_t)dl.dli_saddr - (uint64_t)(uintptr_t)dl.dli_fbase + 1;
	struct sym_elf_info info = build_id_of(dl.dli_fname);
	for (int names_only = 1; names_only >= 0; names_only--) {
		struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1, .offline = 1});
		char warning[4096];
		struct symbol_module *m =
			names_only ? symbolizer_module_names(s, dl.dli_fname, info.build_id, info.build_id_len, warning,
							     sizeof(warning))
				   : symbolizer_module(s, dl.dli_fname, info.build_id, info.build_id_len, warning,
						       sizeof(warning));
		struct symbol_frame f[8];
		int n = symbol_module_lookup(m, vaddr, f, 8);
		unsigned flags = symbol_module_flags(m);
		CHECKF(n >= 1 && strstr(f[n - 1].function, "getpid"), "names_only %d: %s", names_only,
		       n ? f[n - 1].function : "nothing");
		if (names_only) {
			CHECKF(n == 1 && !f[0].file && !f[0].line, "names only: %s:%u", f[0].file ? f[0].file : "", f[0].line);
			CHECKF(!(flags & PROFILE_MODULE_NO_DEBUG_INFO) && !warning[0], "names only: said to lack debug info: %s",
			       warning);
		} else if (flags & PROFILE_MODULE_HAS_LINE_NUMBERS) {
			CHECKF(n >= 1 && f[0].file && f[0].line, "with its DWARF: no line for getpid");
		}
		symbolizer_free(s);
	}
}

int main(int argc, char **argv)
{
	unsetenv("DEBUGINFOD_URLS"); /* hermetic: no server is asked */
	if (argc != 3 && !(argc == 4 && strcmp(argv[3], "corrupt") == 0)) {
		fprintf(stderr, "usage: unit_symbolize SOURCE_DIR BIN_DIR [corrupt]\n");
		return 2;
	}
	source_dir = argv[1];
	bin_dir = argv[2];
	if (argc == 4) {
		test_corrupt_files();
		if (check_failures == 0)
			printf("unit_symbolize corrupt: all passed\n");
		return check_exit_status();
	}
	test_system_paths();
	test_names_only();
	check_inline_chain(path_in(bin_dir, "inline_workload"), NULL, 0);
	check_inline_chain(path_in(bin_dir, "debuglink/inline_workload"), NULL, 0);
	const char *store[] = {path_in(bin_dir, "store")};
	check_inline_chain(path_in(bin_dir, "debugdir/inline_workload"), store, 1);
	check_symbols_only(path_in(bin_dir, "nodebug/inline_workload"));
	test_stripped_functions();
	test_build_id_debug_dir();
	test_unusable_modules();
	test_cpp();
	test_clones();
	test_wanted_addresses();
	if (check_failures == 0)
		printf("unit_symbolize: all passed\n");
	return check_exit_status();
}
