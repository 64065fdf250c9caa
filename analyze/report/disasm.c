/*
 * disasm.c - per-instruction costs of the functions FUNCTION names
 * (disasm.h): charges per innermost location, the functions' extents from
 * the symbol table or the FDEs (both as the symbolizer reads them for the
 * reports), their bytes from the module file, decoded by libcapstone.
 *
 * Why capstone and not objdump as a child: the bytes come from a file the
 * trace names (untrusted), and here they are read once, through a
 * descriptor opened as a regular file, and decoded in process; objdump
 * would open the path itself and its text output would have to be parsed
 * back into addresses. Capstone is Debian's libcapstone, maintained, and
 * decodes x86 and arm64 alike.
 */
#include "disasm.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <gelf.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "arith.h"
#include "file.h"
#include "symbolize.h"

/* The most bytes of one function decoded: a crafted symbol size cannot make us read a whole file. */
#define DISASM_MAX_BYTES (16u << 20)

/* One innermost location with a value, at the ELF address of the instruction it means. */
struct charge {
	uint32_t module;
	uint64_t vaddr;
	uint32_t function; /* profile function of its code (the outermost of the chain) */
	uint32_t location;
};

/* A module's file, opened on first need. */
struct module_file {
	int opened;
	struct symbol_module *sm;
	const char *path; /* the symbolizer's: where the module was read */
	int fd;
	Elf *elf;
	char why[512];    /* why there are no bytes, "" when there are */
};

struct builder {
	const struct profile *p;
	struct symbolizer *sym;
	struct module_file *mods;
	uint32_t nvalues;
	int64_t *loc_values; /* per location, nvalues each */
	struct charge *charges; /* by module, then address */
	uint32_t ncharges;
};

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static struct module_file *module_file(struct builder *b, uint32_t module)
{
	struct module_file *mf = &b->mods[module];
	if (mf->opened)
		return mf;
	mf->opened = 1;
	mf->fd = -1;
	const struct profile_module *pm = &b->p->modules[module];
	const char *hex = profile_string(b->p, pm->build_id);
	uint8_t id[64];
	size_t idlen = 0;
	for (; hex[2 * idlen] && hex[2 * idlen + 1] && idlen < sizeof(id); idlen++) {
		int h = hex_digit(hex[2 * idlen]), l = hex_digit(hex[2 * idlen + 1]);
		if (h < 0 || l < 0)
			break;
		id[idlen] = (uint8_t)(h << 4 | l);
	}
	char warning[sizeof(mf->why)] = ""; /* it ends up in why: no longer than it */
	mf->sm = symbolizer_module(b->sym, profile_string(b->p, pm->path), id, idlen, warning, sizeof(warning));
	const struct symbol_file *files;
	if (!mf->sm || symbol_module_files(mf->sm, &files) == 0) {
		snprintf(mf->why, sizeof(mf->why), "%s", warning[0] ? warning : "the module file was not found");
		return mf;
	}
	mf->path = files[0].path;
	if ((mf->fd = open_regular_file(mf->path)) < 0) {
		snprintf(mf->why, sizeof(mf->why), "%s: %s", mf->path, open_error_text(errno));
		return mf;
	}
	elf_version(EV_CURRENT);
	mf->elf = elf_begin(mf->fd, ELF_C_READ_MMAP, NULL);
	if (!mf->elf || elf_kind(mf->elf) != ELF_K_ELF)
		snprintf(mf->why, sizeof(mf->why), "%s: not an ELF file", mf->path);
	return mf;
}

static void module_file_close(struct module_file *mf)
{
	if (mf->elf)
		elf_end(mf->elf);
	if (mf->fd >= 0)
		close(mf->fd);
}

/* Each sample's values to the innermost location that is code (an allocation's "malloc 32 B" leaf is not). */
static void charge_samples(struct builder *b, const uint32_t *types)
{
	const struct profile *p = b->p;
	b->loc_values = calloc_or_abort(p->nlocations ? (size_t)p->nlocations * b->nvalues : 1, sizeof(int64_t));
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_stack *s = &p->stacks[p->samples[i].stack];
		uint32_t loc = UINT32_MAX;
		for (uint32_t d = 0; d < s->depth && loc == UINT32_MAX; d++) {
			uint32_t l = p->stack_locations[s->first + d];
			uint32_t fn = p->lines[p->locations[l].first_line].function;
			if (!(p->functions[fn].flags & PROFILE_FUNCTION_ALLOC_LEAF))
				loc = l;
		}
		if (loc == UINT32_MAX)
			continue;
		int64_t *v = &b->loc_values[(size_t)loc * b->nvalues];
		for (uint32_t k = 0; k < b->nvalues; k++)
			v[k] = sat_add_i64(v[k], profile_sample_value(p, i, types[k]), NULL);
	}
}

static int by_module_address(const void *a, const void *b)
{
	const struct charge *x = a, *y = b;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static void collect_charges(struct builder *b)
{
	const struct profile *p = b->p;
	b->charges = calloc_or_abort(p->nlocations ? p->nlocations : 1, sizeof(*b->charges));
	for (uint32_t l = 0; l < p->nlocations; l++) {
		const struct profile_location *loc = &p->locations[l];
		int any = 0;
		for (uint32_t k = 0; k < b->nvalues; k++)
			any |= b->loc_values[(size_t)l * b->nvalues + k] != 0;
		if (!any || loc->module >= p->nmodules)
			continue;
		uint64_t at = loc->address - ((loc->flags & PROFILE_LOCATION_RETURN) ? 1 : 0);
		b->charges[b->ncharges++] = (struct charge){
			.module = loc->module,
			.vaddr = at - p->modules[loc->module].load_bias,
			.function = p->lines[loc->first_line + loc->nlines - 1].function,
			.location = l,
		};
	}
	qsort(b->charges, b->ncharges, sizeof(*b->charges), by_module_address);
}

/* Index of the first charge at or above (module, vaddr). */
static uint32_t first_charge(const struct builder *b, uint32_t module, uint64_t vaddr)
{
	uint32_t lo = 0, hi = b->ncharges;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct charge *c = &b->charges[mid];
		if (c->module < module || (c->module == module && c->vaddr < vaddr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The extent of the code at c: its symbol's, its FDE's, or its address alone. */
static void extent_of(struct builder *b, const struct charge *c, struct disasm_function *f)
{
	struct module_file *mf = module_file(b, c->module);
	const char *name = NULL;
	f->module = c->module;
	if (mf->sm && symbol_module_symbol_extent(mf->sm, c->vaddr, &f->lo, &f->hi, &name) && f->hi > f->lo) {
		f->bounds = DISASM_SYMBOL;
		f->name = strdup_or_abort(name ? name : "");
		return;
	}
	if (mf->sm && symbol_module_code_extent(mf->sm, c->vaddr, &f->lo, &f->hi)) {
		/* Named by its start as the reports name stripped code (resolve.c):
		 * the same FDEs, read once per module by the same symbolizer. */
		const char *path = profile_string(b->p, b->p->modules[c->module].path), *slash = strrchr(path, '/');
		char fde_name[4200];
		snprintf(fde_name, sizeof(fde_name), "%s+0x%llx", slash ? slash + 1 : path, (unsigned long long)f->lo);
		f->name = strdup_or_abort(fde_name);
		f->bounds = DISASM_FDE;
		return;
	}
	/* Neither (the module file is missing, or code outside every FDE): the
	 * addresses of one named function, or every unnamed one of the module,
	 * so a missing file gives one listing, not one per address. */
	const struct profile_function *pf = &b->p->functions[c->function];
	const char *path = profile_string(b->p, b->p->modules[c->module].path), *slash = strrchr(path, '/');
	f->function = (pf->flags & PROFILE_FUNCTION_UNKNOWN) ? UINT32_MAX : c->function;
	f->name = strdup_or_abort(f->function == UINT32_MAX ? (slash ? slash + 1 : path) : profile_string(b->p, pf->name));
	f->bounds = DISASM_ADDRESSES;
	f->lo = c->vaddr;
	f->hi = c->vaddr + 1;
}

/* Is charge c f's? */
static int holds(const struct builder *b, const struct disasm_function *f, const struct charge *c)
{
	if (f->module != c->module)
		return 0;
	if (f->bounds != DISASM_ADDRESSES)
		return f->lo <= c->vaddr && c->vaddr < f->hi;
	return f->function == UINT32_MAX ? (b->p->functions[c->function].flags & PROFILE_FUNCTION_UNKNOWN) != 0
					 : f->function == c->function;
}

/* f's bytes from the module file into *buf (freed by the caller): their number, 0 with f->note said. */
static size_t read_bytes(struct module_file *mf, struct disasm_function *f, uint8_t **buf)
{
	*buf = NULL;
	if (!mf->elf) {
		snprintf(f->note, sizeof(f->note), "no code to disassemble: %s", mf->why);
		return 0;
	}
	size_t nph;
	if (elf_getphdrnum(mf->elf, &nph) != 0)
		nph = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(mf->elf, (int)i, &ph) || ph.p_type != PT_LOAD || f->lo < ph.p_vaddr ||
		    f->lo - ph.p_vaddr >= ph.p_filesz)
			continue;
		uint64_t n = f->hi - f->lo, room = ph.p_filesz - (f->lo - ph.p_vaddr);
		n = n < room ? n : room;
		n = n < DISASM_MAX_BYTES ? n : DISASM_MAX_BYTES;
		if (n < f->hi - f->lo)
			snprintf(f->note, sizeof(f->note), "only the first %llu of its %llu bytes are in the file and decoded",
				 (unsigned long long)n, (unsigned long long)(f->hi - f->lo));
		*buf = calloc_or_abort(n, 1);
		ssize_t got = pread(mf->fd, *buf, n, (off_t)(ph.p_offset + (f->lo - ph.p_vaddr)));
		if (got == (ssize_t)n)
			return n;
		free(*buf);
		*buf = NULL;
		snprintf(f->note, sizeof(f->note), "no code to disassemble: %s could not be read", mf->path);
		return 0;
	}
	snprintf(f->note, sizeof(f->note), "no code to disassemble: no segment of %s holds 0x%llx", mf->path,
		 (unsigned long long)f->lo);
	return 0;
}

static int capstone_open(Elf *elf, csh *h)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return -1;
	cs_err e = eh.e_machine == EM_X86_64 ? cs_open(CS_ARCH_X86, CS_MODE_64, h)
		 : eh.e_machine == EM_386     ? cs_open(CS_ARCH_X86, CS_MODE_32, h)
		 : eh.e_machine == EM_AARCH64 ? cs_open(CS_ARCH_ARM64, CS_MODE_ARM, h)
					      : CS_ERR_ARCH;
	if (e != CS_ERR_OK)
		return -1;
	if (eh.e_machine == EM_X86_64 || eh.e_machine == EM_386)
		cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT); /* as objdump and perf annotate print */
	cs_option(*h, CS_OPT_SKIPDATA, CS_OPT_ON); /* bytes that decode to nothing: ".byte", and on */
	return 0;
}

static void add_insn(struct disasm_function *f, uint32_t *cap, uint64_t vaddr, uint32_t size, const char *text)
{
	ALLOC_GROW(f->insns, f->ninsns + 1, *cap);
	f->insns[f->ninsns++] = (struct disasm_insn){.vaddr = vaddr, .size = size, .text = strdup_or_abort(text)};
}

/* f's instructions decoded, each with its source line; 0, or -1 with f->note said. */
static int decode(struct builder *b, struct disasm_function *f)
{
	struct module_file *mf = module_file(b, f->module);
	uint8_t *buf;
	size_t n = read_bytes(mf, f, &buf);
	if (!n)
		return -1;
	csh h;
	if (capstone_open(mf->elf, &h) < 0) {
		free(buf);
		snprintf(f->note, sizeof(f->note), "no code to disassemble: capstone does not decode %s's machine",
			 mf->path);
		return -1;
	}
	cs_insn *insn = cs_malloc(h);
	const uint8_t *code = buf;
	size_t left = n;
	uint64_t at = f->lo;
	uint32_t cap = 0;
	char text[256];
	while (cs_disasm_iter(h, &code, &left, &at, insn)) {
		snprintf(text, sizeof(text), "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "", insn->op_str);
		add_insn(f, &cap, insn->address, insn->size, text);
	}
	cs_free(insn, 1);
	cs_close(&h);
	free(buf);
	for (uint32_t i = 0; i < f->ninsns; i++) {
		struct symbol_frame frames[16];
		int nf = symbol_module_lookup(mf->sm, f->insns[i].vaddr, frames, 16);
		f->insns[i].line = nf > 0 ? frames[0].line : 0;
	}
	return 0;
}

/* The instruction holding vaddr: the last one starting at or below it (there is one: the first is at lo). */
static uint32_t insn_at(const struct disasm_function *f, uint64_t vaddr)
{
	uint32_t lo = 0, hi = f->ninsns;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (f->insns[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

/* f's charges onto its instructions (or, without code, onto one row per charged address). */
static void charge_function(struct builder *b, struct disasm_function *f)
{
	int by_address = f->bounds == DISASM_ADDRESSES;
	uint32_t first = first_charge(b, f->module, by_address ? 0 : f->lo);
	uint32_t end = by_address ? first_charge(b, f->module + 1, 0) : first_charge(b, f->module, f->hi);
	if (by_address) {
		struct module_file *mf = module_file(b, f->module);
		snprintf(f->note, sizeof(f->note), "%s: costs by address only",
			 mf->elf ? "no symbol or FDE holds this code" : mf->why);
	}
	if (by_address || decode(b, f) < 0 || f->ninsns == 0) {
		uint32_t cap = f->ninsns;
		for (uint32_t i = first; i < end; i++)
			if (holds(b, f, &b->charges[i]) &&
			    (f->ninsns == 0 || f->insns[f->ninsns - 1].vaddr != b->charges[i].vaddr))
				add_insn(f, &cap, b->charges[i].vaddr, 0, "");
		if (f->ninsns) {
			f->lo = f->insns[0].vaddr;
			f->hi = f->insns[f->ninsns - 1].vaddr + 1;
		}
	}
	f->values = calloc_or_abort((size_t)f->ninsns * b->nvalues + 1, sizeof(int64_t));
	uint32_t stray = 0;
	for (uint32_t i = first; i < end; i++) {
		const struct charge *c = &b->charges[i];
		if (!holds(b, f, c))
			continue;
		uint32_t at = insn_at(f, c->vaddr);
		const struct disasm_insn *in = &f->insns[at];
		stray += c->vaddr >= in->vaddr + (in->size ? in->size : 1);
		const int64_t *v = &b->loc_values[(size_t)c->location * b->nvalues];
		for (uint32_t k = 0; k < b->nvalues; k++) {
			int64_t *cell = &f->values[(size_t)at * b->nvalues + k];
			*cell = sat_add_i64(*cell, v[k], NULL);
			f->totals[k] = sat_add_i64(f->totals[k], v[k], NULL);
		}
	}
	if (stray && !f->note[0])
		snprintf(f->note, sizeof(f->note),
			 "%u charged addresses are not at an instruction the decoding found (charged to the one before)",
			 stray);
}

/* Does function fn's name match: a substring, or the regular expression when it compiled? */
static int name_matches(const struct profile *p, uint32_t fn, const char *pattern, const regex_t *re)
{
	const char *name = profile_string(p, p->functions[fn].name);
	return strstr(name, pattern) != NULL || (re && regexec(re, name, 0, NULL, 0) == 0);
}

static int by_total(const void *a, const void *b)
{
	const struct disasm_function *x = a, *y = b;
	uint64_t vx = abs_i64(x->totals[0]), vy = abs_i64(y->totals[0]);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int disasm_table_build(struct disasm_table *dt, const struct profile *p, const struct load_options *lo,
		       const char *pattern, const uint32_t *types, uint32_t nvalues, const char *trace, char *err,
		       size_t errlen)
{
	memset(dt, 0, sizeof(*dt));
	dt->nvalues = nvalues;
	struct symbolizer_options so = {
		.debug_dirs = lo->debug_dirs,
		.ndebug_dirs = lo->ndebug_dirs,
		.search_dirs = lo->search_dirs,
		.nsearch_dirs = lo->nsearch_dirs,
		.demangle = lo->demangle,
		.keep_clones = lo->keep_clones,
		.full_names = lo->full_names,
		.raw_names = lo->raw_names,
		.offline = lo->offline,
		.debuginfod_timeout = lo->debuginfod_timeout,
	};
	struct builder b = {.p = p, .nvalues = nvalues, .sym = symbolizer_new(&so)};
	if (!b.sym)
		abort_out_of_memory();
	b.mods = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*b.mods));
	charge_samples(&b, types);
	collect_charges(&b);
	regex_t re;
	int have_re = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0;
	int8_t *matched = calloc_or_abort(p->nfunctions ? p->nfunctions : 1, 1); /* 0 unknown, 1 yes, -1 no */
	uint32_t cap = 0;
	for (uint32_t i = 0; i < b.ncharges; i++) {
		const struct charge *c = &b.charges[i];
		if (!matched[c->function])
			matched[c->function] = name_matches(p, c->function, pattern, have_re ? &re : NULL) ? 1 : -1;
		if (matched[c->function] < 0)
			continue;
		int known = 0; /* a function found already holds it (charges come in address order) */
		for (uint32_t j = dt->nfunctions; j-- > 0 && !known;)
			known = holds(&b, &dt->functions[j], c);
		if (known)
			continue;
		ALLOC_GROW(dt->functions, dt->nfunctions + 1, cap);
		struct disasm_function *f = &dt->functions[dt->nfunctions++];
		memset(f, 0, sizeof(*f));
		extent_of(&b, c, f);
	}
	free(matched);
	if (have_re)
		regfree(&re);
	for (uint32_t i = 0; i < dt->nfunctions; i++) {
		struct disasm_function *f = &dt->functions[i];
		charge_function(&b, f);
		const char *path = b.mods[f->module].path;
		f->file = path && b.mods[f->module].elf ? strdup_or_abort(path) : NULL;
	}
	if (dt->nfunctions > 1) /* none: functions is NULL, which qsort must not be given */
		qsort(dt->functions, dt->nfunctions, sizeof(*dt->functions), by_total);
	for (uint32_t m = 0; m < p->nmodules; m++)
		module_file_close(&b.mods[m]);
	free(b.mods);
	free(b.charges);
	free(b.loc_values);
	symbolizer_free(b.sym);
	if (dt->nfunctions == 0) {
		snprintf(err, errlen, "no function of %s matches '%s' where samples end (analyze flat lists them)", trace,
			 pattern);
		return -1;
	}
	return 0;
}

void disasm_table_free(struct disasm_table *dt)
{
	for (uint32_t i = 0; i < dt->nfunctions; i++) {
		struct disasm_function *f = &dt->functions[i];
		for (uint32_t j = 0; j < f->ninsns; j++)
			free(f->insns[j].text);
		free(f->insns);
		free(f->values);
		free(f->name);
		free(f->file);
	}
	free(dt->functions);
	memset(dt, 0, sizeof(*dt));
}
