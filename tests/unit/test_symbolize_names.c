/*
 * test_symbolize_names.c - names as people read them, on workloads built by
 * tests/symbolize.cmake:
 *
 *   BIN/symbols_workload           assembly labels, a public alias, PLT stubs
 *   BIN/rust_legacy, BIN/rust_v0   Rust (Debian's rustc), both manglings
 *
 * and demangling itself: C++ short, with parameters, whole; Rust legacy and
 * v0; gcc and LLVM clone suffixes; PLT stub names.
 *
 * usage: unit_symbolize_names SOURCE_DIR BIN_DIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "symbolize.h"
#include "symbolize_demangle.h"

#include "check.h"

static const char *source_dir, *bin_dir;

#include "symbolize_test_support.h"

static void test_demangle(void)
{
	static const struct {
		const char *in;
		enum demangle_style style;
		int keep_clones;
		const char *out;
	} cases[] = {
		{"foo", DEMANGLE_SHORT, 0, "foo"},
		{"foo.isra.0", DEMANGLE_SHORT, 0, "foo"},
		{"foo.part.1.cold", DEMANGLE_SHORT, 0, "foo"},
		{"foo.constprop.0.isra.0", DEMANGLE_SHORT, 0, "foo"},
		{"foo.cold", DEMANGLE_SHORT, 0, "foo"},
		{"foo.lto_priv.3", DEMANGLE_SHORT, 0, "foo"},
		{"foo.isra.0", DEMANGLE_SHORT, 1, "foo.isra.0"},
		{"foo.bar", DEMANGLE_SHORT, 0, "foo.bar"},
		{"foo.123", DEMANGLE_SHORT, 0, "foo.123"},
		{"_ZN3foo3barEv.isra.0", DEMANGLE_SHORT, 0, "foo::bar"},
		{"_ZN3foo3barEv.isra.0", DEMANGLE_FULL, 0, "foo::bar()"},
		{"_ZN3foo3barEv.constprop.0", DEMANGLE_NONE, 0, "_ZN3foo3barEv"},
		{"_ZN3foo3barEv", DEMANGLE_NONE, 0, "_ZN3foo3barEv"},
		{"_ZNK8geometry6shapes6ScalerIdE5applyEd", DEMANGLE_SHORT, 0,
		 "geometry::shapes::Scaler<double>::apply"},
		{"_ZNK8geometry6shapes6ScalerIdE5applyEd", DEMANGLE_PARAMETERS, 0,
		 "geometry::shapes::Scaler<double>::apply(double) const"},
		/* The template: no return type, no parameters by default. */
		{"_ZN5alpha6detail10mix_kernelImLi16EEET_S2_", DEMANGLE_SHORT, 0,
		 "alpha::detail::mix_kernel<unsigned long, 16>"},
		{"_ZN5alpha6detail10mix_kernelImLi16EEET_S2_", DEMANGLE_PARAMETERS, 0,
		 "alpha::detail::mix_kernel<unsigned long, 16>(unsigned long)"},
		{"_ZN5alpha6detail10mix_kernelImLi16EEET_S2_", DEMANGLE_FULL, 0,
		 "unsigned long alpha::detail::mix_kernel<unsigned long, 16>(unsigned long)"},
		{"_ZdlPv@plt", DEMANGLE_SHORT, 0, "operator delete@plt"},
		{"malloc@plt", DEMANGLE_SHORT, 0, "malloc@plt"},
		{"_ZdlPv@plt", DEMANGLE_NONE, 0, "_ZdlPv@plt"},
		/* Rust: legacy (hash hidden) and v0, closures and generics */
		{"_ZN5hello4main17h0123456789abcdefE", DEMANGLE_SHORT, 0, "hello::main"},
		{"_ZN5hello4main17h0123456789abcdefE", DEMANGLE_FULL, 0, "hello::main"},
		{"_RNvCs1234_5hello4main", DEMANGLE_SHORT, 0, "hello::main"},
		{"_RINvCs7qp2U7fqm6G_4main7genericjEB2_", DEMANGLE_SHORT, 0, "main::generic::<usize>"},
		{"_RNCNvCs7qp2U7fqm6G_4main4main0B3_", DEMANGLE_SHORT, 0, "main::main::{closure#0}"},
		{"_Znotmangled", DEMANGLE_SHORT, 0, "_Znotmangled"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *got = demangle_function_name(cases[i].in, cases[i].style, cases[i].keep_clones);
		CHECKF(got && strcmp(got, cases[i].out) == 0, "%s -> %s, want %s", cases[i].in,
		      got ? got : "(null)", cases[i].out);
		free(got);
	}
}

/* Name at addr in m ("" when none). */
static const char *name_at(struct symbol_module *m, uint64_t addr)
{
	struct symbol_frame f[16];
	int n = symbol_module_lookup(m, addr, f, 16);
	return n > 0 ? f[n - 1].function : "";
}

/*
 * Extents: an unsized label names the code up to the next symbol, never the
 * sized function that ended before it; the padding after a sized function
 * is nobody's. Aliases: the public name, unless raw_names.
 */
static void test_symbol_extents(void)
{
	const char *path = path_in(bin_dir, "symbols_workload");
	uint64_t sized = 0, sized_size = 0, loop = 0, loop_size = 0, func = 0, func_size = 0, impl = 0,
		 impl_size = 0;
	CHECK(symbol_extent(path, "sized_before", &sized, &sized_size));
	CHECK(symbol_extent(path, "asm_loop", &loop, &loop_size) && loop_size == 0);
	CHECK(symbol_extent(path, "asm_func", &func, &func_size) && func_size == 0);
	CHECK(symbol_extent(path, "__internal_impl", &impl, &impl_size));
	CHECKF(sized + sized_size < loop && loop < func && func < impl, "layout %#lx %#lx %#lx %#lx",
	       (unsigned long)sized, (unsigned long)loop, (unsigned long)func, (unsigned long)impl);
	for (int raw = 0; raw <= 1; raw++) {
		struct symbolizer *s =
			symbolizer_new(&(struct symbolizer_options){.demangle = 1, .raw_names = raw});
		struct symbol_module *m = symbolizer_module(s, path, NULL, 0, NULL, 0);
		CHECKF(strcmp(name_at(m, sized), "sized_before") == 0, "%s", name_at(m, sized));
		for (uint64_t a = sized + sized_size; a < loop; a++)
			CHECKF(name_at(m, a)[0] == '\0', "padding %#lx named %s", (unsigned long)a,
			       name_at(m, a));
		for (uint64_t a = loop; a < func; a++)
			CHECKF(strcmp(name_at(m, a), "asm_loop") == 0, "%#lx: %s", (unsigned long)a,
			       name_at(m, a));
		for (uint64_t a = func; a < impl; a++)
			CHECKF(strcmp(name_at(m, a), "asm_func") == 0, "%#lx: %s", (unsigned long)a,
			       name_at(m, a));
		const char *want = raw ? "__internal_impl" : "public_name";
		CHECKF(strcmp(name_at(m, impl), want) == 0, "raw=%d: %s, want %s", raw,
		       name_at(m, impl), want);
		symbolizer_free(s);
	}
}

/* Every PLT stub objdump names "f@plt" is named so here too. */
static void test_plt(void)
{
	const char *path = path_in(bin_dir, "symbols_workload");
	struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
	struct symbol_module *m = symbolizer_module(s, path, NULL, 0, NULL, 0);
	char cmd[4200], line[512];
	snprintf(cmd, sizeof(cmd), "objdump -d --section=.plt --section=.plt.sec --section=.plt.got '%s'",
		 path);
	FILE *p = popen(cmd, "r");
	int stubs = 0;
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long addr;
		char name[256];
		if (sscanf(line, "%lx <%255[^>]>:", &addr, name) != 2 || !ends_with(name, "@plt") ||
		    strchr(name, '-') || strchr(name, '+'))
			continue;
		stubs++;
		CHECKF(strcmp(name_at(m, addr), name) == 0 && strcmp(name_at(m, addr + 6), name) == 0,
		       "%#lx: %s, objdump says %s", addr, name_at(m, addr), name);
	}
	if (p)
		pclose(p);
	CHECKF(stubs >= 2, "objdump listed %d stubs", stubs);
	symbolizer_free(s);
}

/* The function symbol of path whose short demangled name is want. */
static int demangled_extent(const char *path, const char *want, uint64_t *addr, uint64_t *size)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY), found = 0;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	for (Elf_Scn *scn = elf ? elf_nextscn(elf, NULL) : NULL; scn && !found;
	     scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		Elf_Data *data;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < shdr.sh_size / shdr.sh_entsize && !found; i++) {
			GElf_Sym sym;
			const char *s;
			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !(s = elf_strptr(elf, shdr.sh_link, sym.st_name)))
				continue;
			char *name = demangle_function_name(s, DEMANGLE_SHORT, 0);
			if (name && strcmp(name, want) == 0) {
				*addr = sym.st_value;
				*size = sym.st_size;
				found = 1;
			}
			free(name);
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return found;
}

/* 1 when name shows a legacy Rust hash ("::h" and 16 hex digits). */
static int shows_hash(const char *name)
{
	for (const char *p = strstr(name, "::h"); p; p = strstr(p + 1, "::h"))
		if (strspn(p + 3, "0123456789abcdef") == 16)
			return 1;
	return 0;
}

/*
 * Rust as rustfilt reads it: no hash suffix, generics (v0 mangling names
 * the instances), closures, file:line, and an #[inline(always)] helper as
 * an inlined frame at its call line.
 */
static void test_rust(void)
{
	const char *rs = path_in(source_dir, "rust_workload.rs");
	uint32_t mix_body = marker_line(rs, "MARK:mix-body"), mix_call = marker_line(rs, "MARK:mix-call");
	uint32_t generic_body = marker_line(rs, "MARK:generic-body");
	uint32_t closure = marker_line(rs, "MARK:closure");
	for (int v0 = 0; v0 <= 1; v0++) {
		const char *path = path_in(bin_dir, v0 ? "rust_v0" : "rust_legacy");
		struct symbolizer *s = symbolizer_new(&(struct symbolizer_options){.demangle = 1});
		struct symbol_module *m = symbolizer_module(s, path, NULL, 0, NULL, 0);
		struct symbol_frame f[32];
		uint64_t addr = 0, size = 0;
		/* churn, with mix inlined at its call line */
		CHECKF(demangled_extent(path, "rust_workload::churn", &addr, &size), "%s: no churn", path);
		int inlined = 0, in_body = 0;
		for (uint64_t a = addr; a < addr + size; a++) {
			int n = symbol_module_lookup(m, a, f, 32);
			CHECKF(n >= 1 && strcmp(f[n - 1].function, "rust_workload::churn") == 0 &&
				       ends_with(f[n - 1].file, "rust_workload.rs"),
			       "%s %#lx: %s", path, (unsigned long)a, n ? f[n - 1].function : "nothing");
			for (int i = 0; i + 1 < n; i++)
				CHECKF(!shows_hash(f[i].function), "%s: hash in %s", path, f[i].function);
			if (n >= 2 && strcmp(f[n - 2].function, "rust_workload::mix") == 0) {
				inlined = 1;
				CHECKF(f[n - 2].inlined && f[n - 1].line == mix_call,
				       "mix inlined at line %u, want %u", f[n - 1].line, mix_call);
				in_body |= n == 2 && f[0].line == mix_body;
			}
		}
		CHECKF(inlined && in_body, "%s: mix never inlined into churn at its body's line %u",
		       path, mix_body);
		/* generics: one name (legacy) or one per instance (v0) */
		const char *instances[2][2] = {{"rust_workload::sum_generic", "rust_workload::sum_generic"},
					       {"rust_workload::sum_generic::<u32>",
						"rust_workload::sum_generic::<u64>"}};
		for (int k = 0; k < 2; k++) {
			const char *want = instances[v0][k];
			CHECKF(demangled_extent(path, want, &addr, &size), "%s: no %s", path, want);
			int body = 0;
			for (uint64_t a = addr; a < addr + size; a++) {
				int n = symbol_module_lookup(m, a, f, 32);
				CHECKF(n >= 1 && strcmp(f[n - 1].function, want) == 0, "%s: %s, want %s",
				       path, n ? f[n - 1].function : "nothing", want);
				body |= n >= 1 && f[n - 1].line == generic_body;
			}
			CHECKF(body, "%s: %s never at line %u", path, want, generic_body);
		}
		/* the closure, inlined into call (which LLVM devirtualized) */
		const char *want = v0 ? "rust_workload::main::{closure#0}" : "rust_workload::main::{{closure}}";
		CHECKF(demangled_extent(path, "rust_workload::call", &addr, &size), "%s: no call", path);
		int seen = 0;
		for (uint64_t a = addr; a < addr + size; a++) {
			int n = symbol_module_lookup(m, a, f, 32);
			for (int i = 0; i + 1 < n; i++)
				seen |= strcmp(f[i].function, want) == 0 && f[i].inlined &&
					f[i].line == closure &&
					strcmp(f[n - 1].function, "rust_workload::call") == 0;
		}
		CHECKF(seen, "%s: %s never inlined into rust_workload::call", path, want);
		symbolizer_free(s);
	}
}

int main(int argc, char **argv)
{
	unsetenv("DEBUGINFOD_URLS"); /* hermetic: no server is asked */
	if (argc != 3) {
		fprintf(stderr, "usage: unit_symbolize_names SOURCE_DIR BIN_DIR\n");
		return 2;
	}
	source_dir = argv[1];
	bin_dir = argv[2];
	test_demangle();
	test_symbol_extents();
	test_plt();
	test_rust();
	if (check_failures == 0)
		printf("unit_symbolize_names: all passed\n");
	return check_exit_status();
}
