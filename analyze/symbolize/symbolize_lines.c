/*
 * symbolize_lines.c - DWARF 2-5 line tables, decoded straight from the
 * .debug_line bytes (symbolize_sections.c hands them over, decompressed;
 * a split unit's file names are in its .debug_line.dwo, without rows).
 *
 * libdwarf's dwarf_srclines_b allocates an object per row and dwarf_srcfiles
 * re-parses every header to build the same file names again: together they
 * were much of the time to load libc's debug info (bench/README.md,
 * "analyze: symbolizing"). This decoder walks each
 * line program once, keeps only the rows that change file or line, and
 * composes file names as binutils does (comp_dir / directory / name, the
 * compile directory only in front of relative directories). A DWARF 5 file
 * register N names entry N of the file table, as the standard, elfutils and
 * LLVM read it; libdwarf 20210528 and binutils 2.40 take entry N-1 and name
 * the wrong file where entries 0 and 1 differ. Every read is bounds-checked:
 * a damaged table ends early, it never reads outside its section.
 */
#include "symbolize_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

/* ---- bounds-checked reading ---- */

struct reader {
	const uint8_t *p, *end;
	int bad; /* a read ran past end: everything after reads as 0 */
};

static uint64_t read_fixed(struct reader *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) /* little-endian: x86-64 and aarch64 */
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t read_uleb(struct reader *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t read_sleb(struct reader *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		b = *r->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40)) /* sign-extended without shifting into int64_t's sign */
		v = (int64_t)((uint64_t)v | ~(uint64_t)0 << shift);
	return v;
}

/* A NUL-terminated string in place, NULL if unterminated. */
static const char *read_cstr(struct reader *r)
{
	const uint8_t *nul = r->bad ? NULL : memchr(r->p, 0, (size_t)(r->end - r->p));
	if (nul == NULL) {
		r->bad = 1;
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

/* The string at offset in a string section, NULL if out of bounds. */
static const char *section_string(const uint8_t *sec, uint64_t size, uint64_t offset)
{
	if (sec == NULL || offset >= size || memchr(sec + offset, 0, size - offset) == NULL)
		return NULL;
	return (const char *)sec + offset;
}

/* ---- header ---- */

struct header {
	unsigned version, offset_size, address_size;
	unsigned min_inst_length, line_range, opcode_base;
	int line_base, default_is_stmt;
	const uint8_t *opcode_lengths;
	const char **dirs; /* as numbered by the table (DWARF 5: 0 = compile dir) */
	size_t ndirs, dirs_cap;
	struct file_entry {
		const char *name; /* as written, NULL if unreadable */
		uint64_t dir;     /* directory index */
	} *files;
	size_t nfiles, files_cap;
};

static void header_free(struct header *h)
{
	free(h->dirs);
	free(h->files);
}

static void add_dir(struct header *h, const char *dir)
{
	ALLOC_GROW(h->dirs, h->ndirs + 1, h->dirs_cap);
	h->dirs[h->ndirs++] = dir;
}

static void add_name(struct header *h, const char *name, uint64_t dir)
{
	ALLOC_GROW(h->files, h->nfiles + 1, h->files_cap);
	h->files[h->nfiles++] = (struct file_entry){.name = name, .dir = dir};
}

/* One DWARF 5 attribute value of a directory or file entry: strings come
 * back in *string, numbers in *number; other forms are skipped. */
static void read_entry_value(struct reader *r, const struct sym_line_sections *d,
			     const struct header *h, uint64_t form, const char **string,
			     uint64_t *number)
{
	switch (form) {
	case DW_FORM_string: *string = read_cstr(r); break;
	case DW_FORM_line_strp:
		*string = section_string(d->line_str.data, d->line_str.size, read_fixed(r, h->offset_size));
		break;
	case DW_FORM_strp:
		*string = section_string(d->str.data, d->str.size, read_fixed(r, h->offset_size));
		break;
	case DW_FORM_udata: *number = read_uleb(r); break;
	case DW_FORM_data1: *number = read_fixed(r, 1); break;
	case DW_FORM_data2: *number = read_fixed(r, 2); break;
	case DW_FORM_data4: *number = read_fixed(r, 4); break;
	case DW_FORM_data8: *number = read_fixed(r, 8); break;
	case DW_FORM_data16: /* an MD5: two 8-byte reads skip it */
		read_fixed(r, 8);
		read_fixed(r, 8);
		break;
	case DW_FORM_block: {
		uint64_t n = read_uleb(r);
		if (n > (uint64_t)(r->end - r->p))
			r->bad = 1;
		else
			r->p += n;
		break;
	}
	/* Indexed strings need the CU's str_offsets base: the name stays unknown. */
	case DW_FORM_strx: read_uleb(r); break;
	case DW_FORM_strx1: read_fixed(r, 1); break;
	case DW_FORM_strx2: read_fixed(r, 2); break;
	case DW_FORM_strx3: read_fixed(r, 3); break;
	case DW_FORM_strx4: read_fixed(r, 4); break;
	default: r->bad = 1; /* unknown size: cannot go on */
	}
}

/* DWARF 5 directory or file name list: a format, then the entries. */
static void read_entries(struct reader *r, const struct sym_line_sections *d, struct header *h,
			 int files)
{
	uint64_t format[2 * 16];
	unsigned nformat = (unsigned)read_fixed(r, 1);
	if (nformat > 16) {
		r->bad = 1;
		return;
	}
	for (unsigned i = 0; i < 2 * nformat; i++)
		format[i] = read_uleb(r);
	uint64_t count = read_uleb(r);
	/* Every form read takes a byte at least: more entries than bytes left
	 * is damage, and entries of no field at all would read nothing while
	 * adding a name each, count times (2^64: a hang that eats memory). */
	if (count > (uint64_t)(r->end - r->p) || (nformat == 0 && count > 0)) {
		r->bad = 1;
		return;
	}
	for (uint64_t e = 0; e < count && !r->bad; e++) {
		const char *path = NULL;
		uint64_t dir = 0;
		for (unsigned i = 0; i < nformat && !r->bad; i++) {
			const char *string = NULL;
			uint64_t number = 0;
			read_entry_value(r, d, h, format[2 * i + 1], &string, &number);
			if (format[2 * i] == DW_LNCT_path)
				path = string;
			else if (format[2 * i] == DW_LNCT_directory_index)
				dir = number;
		}
		if (files)
			add_name(h, path, dir);
		else
			add_dir(h, path);
	}
}

/* Parse the header at r; r is left at the line program. 0 or -1. */
static int read_header(struct reader *r, const struct sym_line_sections *d, struct header *h)
{
	h->version = (unsigned)read_fixed(r, 2);
	if (h->version < 2 || h->version > 5)
		return -1;
	if (h->version >= 5) {
		h->address_size = (unsigned)read_fixed(r, 1);
		read_fixed(r, 1); /* segment selector size */
	}
	uint64_t header_length = read_fixed(r, h->offset_size);
	if (r->bad || header_length > (uint64_t)(r->end - r->p))
		return -1;
	const uint8_t *program = r->p + header_length;
	h->min_inst_length = (unsigned)read_fixed(r, 1);
	if (h->version >= 4)
		read_fixed(r, 1); /* maximum operations per instruction: VLIW only */
	h->default_is_stmt = (int)read_fixed(r, 1);
	h->line_base = (int8_t)read_fixed(r, 1);
	h->line_range = (unsigned)read_fixed(r, 1);
	h->opcode_base = (unsigned)read_fixed(r, 1);
	h->opcode_lengths = r->p;
	if (h->line_range == 0 || h->opcode_base == 0 ||
	    (size_t)(r->end - r->p) < h->opcode_base - 1)
		return -1;
	r->p += h->opcode_base - 1;
	if (h->version >= 5) {
		read_entries(r, d, h, 0);
		read_entries(r, d, h, 1);
	} else {
		const char *s;
		while ((s = read_cstr(r)) != NULL && *s != '\0')
			add_dir(h, s);
		while ((s = read_cstr(r)) != NULL && *s != '\0') {
			uint64_t dir = read_uleb(r);
			read_uleb(r); /* modification time */
			read_uleb(r); /* length */
			add_name(h, s, dir);
		}
	}
	if (r->bad || program > r->end)
		return -1;
	r->p = program;
	return 0;
}

/*
 * Full name of file i as binutils composes it: an absolute name as is;
 * otherwise its directory, with the compile directory in front unless that
 * directory is absolute. DWARF 2-4 number directories from 1 (0 is the
 * compile directory), DWARF 5 from 0.
 */
static const char *full_name(struct sym_strings *st, const struct header *h, size_t i,
			     const char *comp_dir)
{
	const char *name = h->files[i].name;
	if (name == NULL)
		return sym_intern(st, "??");
	if (name[0] == '/')
		return sym_intern_printable(st, name);
	uint64_t d = h->files[i].dir;
	const char *subdir = NULL;
	if (h->version >= 5)
		subdir = d < h->ndirs ? h->dirs[d] : NULL;
	else if (d > 0 && d <= h->ndirs)
		subdir = h->dirs[d - 1];
	const char *dir = subdir == NULL || subdir[0] != '/' ? comp_dir : NULL;
	if (dir == NULL) {
		dir = subdir;
		subdir = NULL;
	}
	if (dir == NULL)
		return sym_intern_printable(st, name);
	size_t n = strlen(dir) + (subdir ? strlen(subdir) + 1 : 0) + strlen(name) + 2;
	char stack_buf[1024];
	char *buf = n <= sizeof(stack_buf) ? stack_buf : realloc_or_abort(NULL, n);
	snprintf(buf, n, "%s%s%s/%s", dir, subdir ? "/" : "", subdir ? subdir : "", name);
	const char *interned = sym_intern_printable(st, buf);
	if (buf != stack_buf)
		free(buf);
	return interned;
}

/* ---- the line program ---- */

/* Row sink: drops sequences at address 0 (functions the linker removed)
 * and rows that repeat their predecessor's file and line. */
struct row_sink {
	struct sym_index *ix;
	int add_unit_ranges;
	int in_sequence, skip_sequence;
	uint64_t first;
	const char *last_file;
	uint64_t last_line;
};

static void sink_row(struct row_sink *k, uint64_t addr, const char *file, uint64_t line, int end)
{
	if (!k->in_sequence) {
		k->in_sequence = 1;
		k->skip_sequence = addr == 0;
		k->first = addr;
		k->last_file = NULL;
	}
	if (end)
		k->in_sequence = 0;
	if (k->skip_sequence)
		return;
	if (end) {
		sym_add_row(k->ix, addr, NULL, 0);
		if (k->add_unit_ranges)
			sym_add_unit_range(k->ix, k->first, addr);
		return;
	}
	if (line > UINT32_MAX)
		line = 0;
	if (file == k->last_file && line == k->last_line)
		return;
	sym_add_row(k->ix, addr, file, (uint32_t)line);
	k->last_file = file;
	k->last_line = line;
}

static void run_program(struct reader *r, const struct header *h, const struct sym_file_table *files,
			const char *unknown_file, struct row_sink *k)
{
	uint64_t addr = 0, file = 1, line = 1;
	const uint64_t const_add = ((255 - h->opcode_base) / h->line_range) * h->min_inst_length;
	while (r->p < r->end && !r->bad) {
		unsigned op = *r->p++;
		int emit = 0, end = 0;
		if (op >= h->opcode_base) {
			unsigned adjusted = op - h->opcode_base;
			addr += (adjusted / h->line_range) * h->min_inst_length;
			line += (uint64_t)(int64_t)(h->line_base + (int)(adjusted % h->line_range));
			emit = 1;
		} else if (op == 0) {
			uint64_t len = read_uleb(r);
			if (r->bad || len == 0 || len > (uint64_t)(r->end - r->p))
				return;
			const uint8_t *next = r->p + len;
			unsigned sub = *r->p++;
			if (sub == DW_LNE_end_sequence)
				emit = end = 1;
			else if (sub == DW_LNE_set_address && len - 1 <= 8)
				addr = read_fixed(r, (size_t)(len - 1));
			r->p = next; /* define_file, discriminator, vendor ops: skipped */
		} else {
			switch (op) {
			case DW_LNS_copy: emit = 1; break;
			case DW_LNS_advance_pc: addr += read_uleb(r) * h->min_inst_length; break;
			case DW_LNS_advance_line: line += (uint64_t)read_sleb(r); break;
			case DW_LNS_set_file: file = read_uleb(r); break;
			case DW_LNS_const_add_pc: addr += const_add; break;
			case DW_LNS_fixed_advance_pc: addr += read_fixed(r, 2); break;
			default: /* operands we do not need, counted by the header */
				for (unsigned i = 0; i < h->opcode_lengths[op - 1]; i++)
					read_uleb(r);
			}
		}
		if (!emit || r->bad)
			continue;
		const char *name = sym_file_name(files, file);
		sink_row(k, addr, name != NULL ? name : unknown_file, line, end);
		if (end) {
			addr = 0;
			file = line = 1;
		}
	}
}

int sym_lines_decode(const struct sym_line_sections *d, uint64_t offset, const char *comp_dir,
		     struct sym_strings *st, struct sym_file_table *files, struct sym_index *ix,
		     int add_unit_ranges)
{
	memset(files, 0, sizeof(*files));
	if (d->line.data == NULL || offset >= d->line.size)
		return -1;
	struct reader r = {.p = d->line.data + offset, .end = d->line.data + d->line.size};
	struct header h = {.offset_size = 4};
	uint64_t length = read_fixed(&r, 4);
	if (length == 0xffffffffu) {
		length = read_fixed(&r, 8);
		h.offset_size = 8;
	}
	if (r.bad || length > (uint64_t)(r.end - r.p))
		return -1;
	r.end = r.p + length;
	int result = read_header(&r, d, &h);
	if (result == 0) {
		files->one_based = h.version < 5;
		files->names = realloc_or_abort(NULL, (h.nfiles + 1) * sizeof(*files->names));
		for (size_t i = 0; i < h.nfiles; i++)
			files->names[i] = full_name(st, &h, i, comp_dir);
		files->count = h.nfiles;
		if (ix != NULL) {
			struct row_sink sink = {.ix = ix, .add_unit_ranges = add_unit_ranges};
			run_program(&r, &h, files, sym_intern(st, "??"), &sink);
			result = r.bad ? -1 : 0;
		}
	}
	header_free(&h);
	return result;
}

const char *sym_file_name(const struct sym_file_table *t, uint64_t index)
{
	if (t->one_based) {
		if (index == 0)
			return NULL;
		index--;
	}
	return index < t->count ? t->names[index] : NULL;
}
