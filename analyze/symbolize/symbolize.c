/*
 * symbolize.c - the symbolizer's API: one cached, indexed module per
 * (path, build-id), lookups that turn an ELF address into an inline chain,
 * and the rule for which modules are "system" (hidden unless -C).
 *
 * A module is trusted only if its build-id is the traced one: a rebuilt file
 * would give plausible but wrong names, which is worse than module+0xoffset.
 *
 * Wanted addresses (symbolizer_module_for): a module opened for the
 * addresses a trace needs reads the rows and DIEs of only the units holding
 * them (symbolize_dwarf.c); a lookup of any other address first reads it
 * whole, so every answer is what a whole load gives (what it saves:
 * bench/README.md, "analyze: symbolizing").
 */
#include "symbolize.h"

#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize_demangle.h"
#include "profile.h"
#include "symbolize_internal.h"

#include "file.h"
#include "search.h"
#include "trace.h"

struct symbol_module {
	struct symbolizer *owner;
	char *path;
	struct symbol_file *files; /* what it was read from: files[0] is the module */
	size_t nfiles, files_cap;
	uint8_t build_id[64];
	size_t build_id_len;
	unsigned flags;
	int usable; /* the file is the traced one: lookups may answer */
	int partial; /* the DWARF of code holding none of want was left out */
	uint64_t *want; /* the sorted addresses it was opened for (partial only) */
	size_t nwant;
	char warning[5 * PATH_MAX];
	struct sym_index ix;
	struct sym_code_ranges code; /* FDE ranges: functions no symbol names */
	int code_loaded;
};

struct symbolizer {
	struct symbolizer_options options;
	struct sym_debuginfod *debuginfod; /* NULL: offline, or no DEBUGINFOD_URLS */
	char **debug_dirs; /* copies, so the caller's argv may go: the debug
			      dirs, then the search dirs */
	struct sym_strings strings;
	struct symbol_module **modules;
	size_t nmodules, modules_cap;
};

struct symbolizer *symbolizer_new(const struct symbolizer_options *o)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	if (o != NULL)
		s->options = *o;
	/* A search dir holds debug files too: both lists are searched for them. */
	int nd = s->options.ndebug_dirs > 0 ? s->options.ndebug_dirs : 0;
	int ns = s->options.nsearch_dirs > 0 ? s->options.nsearch_dirs : 0;
	s->debug_dirs = calloc((size_t)(nd + ns) + 1, sizeof(*s->debug_dirs));
	if (s->debug_dirs == NULL) {
		free(s);
		return NULL;
	}
	for (int i = 0; i < nd + ns; i++) {
		s->debug_dirs[i] = strdup(i < nd ? s->options.debug_dirs[i] : s->options.search_dirs[i - nd]);
		if (s->debug_dirs[i] == NULL) {
			symbolizer_free(s);
			return NULL;
		}
	}
	s->options.debug_dirs = (const char *const *)s->debug_dirs;
	s->options.ndebug_dirs = nd + ns;
	s->options.search_dirs = (const char *const *)s->debug_dirs + nd;
	s->options.nsearch_dirs = ns;
	if (!s->options.offline)
		s->debuginfod = sym_debuginfod_new(s->options.debuginfod_timeout, s->options.progress,
						   s->options.progress_ctx);
	return s;
}

int symbol_path_is_system(const char *path)
{
	/* Prefixes of the file names of the C and C++ runtimes, the loader,
	 * the vdso and our own agent: their frames are plumbing, not the
	 * program. */
	static const char *const prefixes[] = {
		"libc.so", "libc-2.", "libm.so", "libm-2.", "libpthread.so", "libpthread-2.",
		"libdl.so", "libdl-2.", "librt.so", "librt-2.", "libstdc++.so", "libgcc_s.so",
		"ld-linux", "linux-vdso", "[vdso]",
	};
	if (trace_path_is_agent(path))
		return 1;
	const char *slash = strrchr(path, '/');
	const char *base = slash != NULL ? slash + 1 : path;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* The kernel's vdso has no file: nothing to warn about. */
static int is_pseudo_module(const char *path)
{
	return path[0] == '[' || strstr(path, "linux-vdso") != NULL;
}

static int same_build_id(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/*
 * The debug file of a module with none here, from debuginfod: its path in
 * out (or "" and why in problem). Only a file with the module's build-id is
 * taken: a server answering garbage or another build costs no wrong name.
 */
static void fetch_debug_file(struct symbolizer *s, const char *module,
			     const struct sym_elf_info *info, char *out, size_t out_len,
			     char *problem, size_t problem_len)
{
	out[0] = problem[0] = '\0';
	if (s->debuginfod == NULL || info->build_id_len == 0)
		return;
	if (sym_debuginfod_fetch(s->debuginfod, info->build_id, info->build_id_len, module, out,
				 out_len) != 0) {
		out[0] = '\0';
		snprintf(problem, problem_len, "%s", sym_debuginfod_problem(s->debuginfod));
		return;
	}
	struct sym_elf_info got;
	sym_elf_inspect(out, &got);
	if (!got.readable || !got.has_debug_info || got.build_id_len != info->build_id_len ||
	    memcmp(got.build_id, info->build_id, info->build_id_len) != 0) {
		snprintf(problem, problem_len,
			 "debuginfod served %s, which is not its debug info (%s): ignored", out,
			 !got.readable ? "not ELF" : !got.has_debug_info ? "no DWARF" : "another build-id");
		out[0] = '\0';
	}
}

/* Remember a file m was read from (for analyze archive). */
static void add_file(struct symbol_module *m, const char *kind, const char *path, const uint8_t *id,
		     size_t len)
{
	for (size_t i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i].path, path) == 0)
			return; /* a debug file that is the module itself */
	ALLOC_GROW(m->files, m->nfiles + 1, m->files_cap);
	struct symbol_file *f = &m->files[m->nfiles++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->path = sym_intern(&m->owner->strings, path);
	f->build_id_len = len <= sizeof(f->build_id) ? len : 0;
	if (f->build_id_len)
		memcpy(f->build_id, id, f->build_id_len);
}

static void used_file(void *ctx, const char *kind, const char *path, const uint8_t *id, size_t len)
{
	add_file(ctx, kind, path, id, len);
}

/* Read and index the module, for the nwant sorted addresses want (NULL:
 * any); fills m->flags and m->warning. */
/* names_only: the module's functions from its symbol tables, its DWARF neither read nor fetched. */
static void open_module(struct symbolizer *s, struct symbol_module *m, const uint64_t *want, size_t nwant,
			int names_only)
{
	struct sym_elf_info info;
	char file[PATH_MAX], why[3 * PATH_MAX + 512];
	if (is_pseudo_module(m->path)) {
		m->flags |= PROFILE_MODULE_MISSING; /* the vdso: the kernel's, no file */
		return;
	}
	int found = sym_locate_module(m->path, m->build_id, m->build_id_len, s->options.search_dirs,
				      s->options.nsearch_dirs, file, sizeof(file), &info, why,
				      sizeof(why));
	if (found != SYM_LOCATE_FOUND) {
		m->flags |= found == SYM_LOCATE_MISMATCH ? PROFILE_MODULE_BUILD_ID_MISMATCH
							 : PROFILE_MODULE_MISSING;
		if (info.open_errno == EACCES || info.open_errno == EPERM)
			m->flags |= PROFILE_MODULE_NO_PERMISSION;
		else if (info.open_errno == EINVAL)
			m->flags |= PROFILE_MODULE_NOT_REGULAR;
		snprintf(m->warning, sizeof(m->warning), "%s: %s: frames shown as module+offset",
			 m->path, why);
		return;
	}
	m->usable = 1;
	add_file(m, "module", file, info.build_id, info.build_id_len);
	char debug_path[PATH_MAX], links_warning[PATH_MAX + 200] = "";
	sym_elf_find_debug_file(file, &info, s->options.debug_dirs, s->options.ndebug_dirs,
				debug_path, sizeof(debug_path));
	char fetch_problem[PATH_MAX + 200] = "";
	if (debug_path[0] == '\0' && !names_only)
		fetch_debug_file(s, m->path, &info, debug_path, sizeof(debug_path), fetch_problem,
				 sizeof(fetch_problem));
	struct sym_search search = {
		.debug_dirs = s->options.debug_dirs,
		.ndebug_dirs = s->options.ndebug_dirs,
		.module_path = file,
		.build_id = info.build_id,
		.build_id_len = info.build_id_len,
		.used = used_file,
		.used_ctx = m,
		.fetch = s->debuginfod != NULL ? sym_debuginfod_fetch : NULL,
		.fetch_ctx = s->debuginfod,
	};
	int damaged = debug_path[0] != '\0' && !names_only &&
		      sym_dwarf_load(&m->ix, &s->strings, debug_path, &search, want, nwant, &m->partial,
				     links_warning, sizeof(links_warning)) != 0;
	if (m->partial) {
		m->want = realloc_or_abort(NULL, (nwant ? nwant : 1) * sizeof(*m->want));
		if (nwant)
			memcpy(m->want, want, nwant * sizeof(*m->want));
		m->nwant = nwant;
	}
	if (damaged)
		debug_path[0] = '\0';
	if (debug_path[0] != '\0')
		add_file(m, "debug", debug_path, info.build_id, info.build_id_len);
	/* A separate debug file keeps the full .symtab; the stripped file
	 * only .dynsym. */
	size_t nsymbols = 0;
	if (debug_path[0] != '\0' && strcmp(debug_path, file) != 0)
		nsymbols = sym_elf_load_symbols(&m->ix, &s->strings, debug_path);
	if (nsymbols == 0)
		nsymbols = sym_elf_load_symbols(&m->ix, &s->strings, file);
	/* The stubs are code of the module itself (a debug file has no bytes). */
	sym_elf_load_plt(&m->ix, &s->strings, file);
	sym_index_finish(&m->ix);

	if (m->ix.has_dwarf && links_warning[0] != '\0')
		snprintf(m->warning, sizeof(m->warning),
			 "%s: %s: names of that code from the symbol table", m->path, links_warning);
	if (!m->ix.has_dwarf && !names_only) {
		m->flags |= PROFILE_MODULE_NO_DEBUG_INFO;
		snprintf(m->warning, sizeof(m->warning), "%s: %s%s%s%s", m->path,
			 damaged ? "damaged debug info" : "no debug info",
			 fetch_problem[0] ? " (" : "", fetch_problem, fetch_problem[0] ? ")" : "");
		size_t used = strlen(m->warning);
		snprintf(m->warning + used, sizeof(m->warning) - used, "%s",
			 nsymbols > 0 ? ": function names from the symbol table only"
				      : " and no symbols: frames shown as module+offset"
					" (their function's start, from .eh_frame)");
	}
	/* PLT stubs alone (a stripped binary keeps them) name no function of it. */
	if (m->ix.nsegments > 0 || nsymbols > 0)
		m->flags |= PROFILE_MODULE_HAS_FUNCTIONS;
	if (m->ix.nrows > 0)
		m->flags |= PROFILE_MODULE_HAS_FILENAMES | PROFILE_MODULE_HAS_LINE_NUMBERS;
	if (m->ix.has_inlines)
		m->flags |= PROFILE_MODULE_HAS_INLINE_FRAMES;
}

struct symbol_module *symbolizer_module(struct symbolizer *s, const char *path,
					const uint8_t *build_id, size_t build_id_len,
					char *warning, size_t warning_len)
{
	return symbolizer_module_for(s, path, build_id, build_id_len, NULL, 0, warning, warning_len);
}

static struct symbol_module *module_of(struct symbolizer *s, const char *path, const uint8_t *build_id,
				       size_t build_id_len, const uint64_t *vaddrs, size_t n, int names_only,
				       char *warning, size_t warning_len)
{
	if (build_id_len > sizeof(((struct symbol_module *)0)->build_id))
		build_id_len = sizeof(((struct symbol_module *)0)->build_id);
	struct symbol_module *m = NULL;
	for (size_t i = 0; i < s->nmodules && m == NULL; i++)
		if (strcmp(s->modules[i]->path, path) == 0 &&
		    same_build_id(s->modules[i]->build_id, s->modules[i]->build_id_len, build_id,
				  build_id_len))
			m = s->modules[i];
	if (m == NULL) {
		ALLOC_GROW(s->modules, s->nmodules + 1, s->modules_cap);
		m = calloc(1, sizeof(*m));
		if (m == NULL || (m->path = strdup(path)) == NULL) {
			free(m);
			return NULL;
		}
		m->owner = s;
		if (build_id_len > 0)
			memcpy(m->build_id, build_id, build_id_len);
		m->build_id_len = build_id_len;
		if (symbol_path_is_system(path))
			m->flags |= PROFILE_MODULE_SYSTEM;
		open_module(s, m, vaddrs, n, names_only);
		s->modules[s->nmodules++] = m;
	}
	if (warning != NULL && warning_len > 0)
		snprintf(warning, warning_len, "%s", m->warning);
	return m;
}

struct symbol_module *symbolizer_module_for(struct symbolizer *s, const char *path, const uint8_t *build_id,
					    size_t build_id_len, const uint64_t *vaddrs, size_t n, char *warning,
					    size_t warning_len)
{
	return module_of(s, path, build_id, build_id_len, vaddrs, n, 0, warning, warning_len);
}

struct symbol_module *symbolizer_module_names(struct symbolizer *s, const char *path, const uint8_t *build_id,
					      size_t build_id_len, char *warning, size_t warning_len)
{
	return module_of(s, path, build_id, build_id_len, NULL, 0, 1, warning, warning_len);
}

unsigned symbol_module_flags(const struct symbol_module *m)
{
	return m->flags;
}

size_t symbol_module_files(const struct symbol_module *m, const struct symbol_file **files)
{
	*files = m->files;
	return m->nfiles;
}

/* Demangled name of linkage_name in style, interned. */
static const char *display(struct symbol_module *m, const char *linkage_name,
			   enum demangle_style style)
{
	char *pretty = demangle_function_name(linkage_name, style, m->owner->options.keep_clones);
	const char *name = sym_intern_printable(&m->owner->strings, pretty != NULL ? pretty : linkage_name);
	free(pretty);
	return name;
}

/* Fill the names of frame from function fn, demangling on first use. An
 * internal alias the symbol table also names publicly (glibc's DWARF says
 * __libc_malloc where callers wrote malloc) is shown by its public name. */
static void name_frame(struct symbol_module *m, uint32_t fn, struct symbol_frame *frame)
{
	struct sym_function *f = &m->ix.functions[fn];
	if (f->display_name == NULL) {
		const struct symbolizer_options *o = &m->owner->options;
		uint32_t public_fn = o->raw_names ? SYM_NONE
						  : sym_find_public_name(&m->ix, f->linkage_name);
		const char *name = public_fn != SYM_NONE ? m->ix.functions[public_fn].linkage_name
							 : f->linkage_name;
		enum demangle_style style = !o->demangle   ? DEMANGLE_NONE
					    : o->full_names ? DEMANGLE_FULL
							    : DEMANGLE_SHORT;
		f->display_name = display(m, name, style);
		f->parameters_name = style == DEMANGLE_SHORT ? display(m, name, DEMANGLE_PARAMETERS)
							     : f->display_name;
	}
	frame->function = f->display_name;
	frame->function_parameters = f->parameters_name;
	frame->linkage_name = f->linkage_name;
	frame->function_file = f->file;
	frame->function_line = f->line;
}

/*
 * The function that names the outermost frame: DWARF's, unless DWARF left it
 * unnamed (then the symbol table's), or keep_clones wants the copy the code
 * really is in: DWARF says foo where the symbol table says foo.isra.0 or
 * foo.cold.
 */
static uint32_t outer_function(const struct symbol_module *m, uint32_t fn, uint64_t vaddr)
{
	const struct sym_index *ix = &m->ix;
	const char *dwarf_name = ix->functions[fn].linkage_name;
	if (dwarf_name[0] != '\0' && !m->owner->options.keep_clones)
		return fn;
	uint32_t symbol_fn = sym_find_symbol_function(ix, vaddr);
	if (symbol_fn == SYM_NONE)
		return fn;
	if (dwarf_name[0] == '\0')
		return symbol_fn;
	const char *symbol_name = ix->functions[symbol_fn].linkage_name;
	size_t base = demangle_clone_base_length(symbol_name);
	int clone_of_fn = symbol_name[base] != '\0' && strncmp(symbol_name, dwarf_name, base) == 0 &&
			  dwarf_name[base] == '\0';
	return clone_of_fn ? symbol_fn : fn;
}

/* A lookup outside the addresses a partial module was opened for: read it
 * whole (the same files, flags and warning; names looked up so far stay
 * valid, their strings being the symbolizer's). */
static void reload_whole(struct symbol_module *m)
{
	free(m->want);
	m->want = NULL;
	m->nwant = 0;
	m->partial = m->usable = 0;
	m->nfiles = 0;
	m->warning[0] = '\0';
	m->flags &= PROFILE_MODULE_SYSTEM;
	sym_index_free(&m->ix);
	open_module(m->owner, m, NULL, 0, 0);
}

static int is_wanted(const struct symbol_module *m, uint64_t vaddr)
{
	size_t at = u64_first_not_below(m->want, 0, m->nwant, vaddr);
	return at < m->nwant && m->want[at] == vaddr;
}

int symbol_module_symbol_extent(struct symbol_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi,
				const char **name)
{
	if (m == NULL || !m->usable)
		return 0;
	if (m->partial && !is_wanted(m, vaddr))
		reload_whole(m);
	const struct sym_symbol *sym = sym_find_symbol(&m->ix, vaddr);
	if (sym == NULL)
		return 0;
	struct symbol_frame frame;
	memset(&frame, 0, sizeof(frame));
	name_frame(m, sym->function, &frame);
	*lo = sym->addr;
	*hi = sym->limit;
	*name = frame.function;
	return 1;
}

int symbol_module_lookup(struct symbol_module *m, uint64_t vaddr, struct symbol_frame *frames,
			 int max)
{
	if (m == NULL || !m->usable || max <= 0)
		return 0;
	if (m->partial && !is_wanted(m, vaddr))
		reload_whole(m);
	const struct sym_index *ix = &m->ix;
	const struct sym_row *row = sym_find_row(ix, vaddr);
	const char *file = row != NULL ? row->file : NULL;
	uint32_t line = row != NULL ? row->line : 0;
	uint32_t node = sym_find_node(ix, vaddr);
	if (node == SYM_NONE) {
		/* No DWARF function here (assembly, or no DWARF at all): the
		 * symbol table names it, the line table may still place it. */
		uint32_t symbol_fn = sym_find_symbol_function(ix, vaddr);
		if (symbol_fn == SYM_NONE)
			return 0;
		memset(&frames[0], 0, sizeof(frames[0]));
		name_frame(m, symbol_fn, &frames[0]);
		frames[0].file = file;
		frames[0].line = line;
		return 1;
	}
	int n = 0;
	for (; node != SYM_NONE && n < max; node = ix->nodes[node].parent, n++) {
		const struct sym_node *nd = &ix->nodes[node];
		struct symbol_frame *frame = &frames[n];
		memset(frame, 0, sizeof(*frame));
		int outermost = nd->parent == SYM_NONE;
		name_frame(m, outermost ? outer_function(m, nd->function, vaddr) : nd->function, frame);
		if (frame->function[0] == '\0')
			frame->function = frame->function_parameters = frame->linkage_name = "??";
		frame->file = file;
		frame->line = line;
		frame->inlined = !outermost;
		file = nd->call_file;
		line = nd->call_line;
	}
	return n;
}

/* The FDEs are read on the first address no symbol names: most modules
 * never need them. The module's .eh_frame (and any .debug_frame of it or
 * of its debug file) bounds the functions; a debug file's .eh_frame is
 * NOBITS, and duplicates are merged. */
int symbol_module_code_extent(struct symbol_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	if (m == NULL || !m->usable)
		return 0;
	if (!m->code_loaded) {
		m->code_loaded = 1;
		for (size_t i = 0; i < m->nfiles; i++)
			if (strcmp(m->files[i].kind, "module") == 0 || strcmp(m->files[i].kind, "debug") == 0)
				sym_fde_load(&m->code, m->files[i].path);
		sym_code_ranges_finish(&m->code);
	}
	return sym_code_range_find(&m->code, vaddr, lo, hi);
}

void symbolizer_free(struct symbolizer *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nmodules; i++) {
		free(s->modules[i]->want);
		sym_index_free(&s->modules[i]->ix);
		sym_code_ranges_free(&s->modules[i]->code);
		free(s->modules[i]->files);
		free(s->modules[i]->path);
		free(s->modules[i]);
	}
	free(s->modules);
	for (int i = 0; s->debug_dirs != NULL && s->debug_dirs[i] != NULL; i++)
		free(s->debug_dirs[i]);
	free(s->debug_dirs);
	sym_strings_free(&s->strings);
	sym_debuginfod_free(s->debuginfod);
	free(s);
}
