/*
 * frametab_build.c - one object's .eh_frame run into frame-table rows
 * (frametab.c says what a row is and who reads them): the header's sorted
 * FDE list, each FDE's CIE (parsed once per run of FDEs that share it), and
 * its CFA program, interpreted for the registers a walk follows (the CFA,
 * rbp, rsp and the return address). Every read of the image is bounded by
 * the segment that holds .eh_frame; a program it cannot follow marks its
 * FDE's range as one libunwind unwinds. A whole object is parsed from a
 * copy of its .eh_frame_hdr and .eh_frame taken while the loader listed it
 * (a memcpy), so the loader's lock is not held for the milliseconds a parse
 * takes (a handler's libunwind fallback would wait for it); a block of it
 * (frametab_build_block: the FDEs of 16 KiB of text, tens of microseconds)
 * in place, inside the loader's callback. Runs outside signal handlers only.
 */
#include "frametab_internal.h"
#include "map_grow.h"

#include <elf.h>
#include <string.h>
#include <sys/mman.h>

#define STATE_STACK 16

/* ---- reading the loaded image ---- */

/* Reads of the image, or of a copy of it: delta is the copy's address less the image's (0: the image),
 * so a pc-relative pointer is taken from where the byte was in the image. */
struct cursor {
	const uint8_t *p, *end;
	int bad;
	uint64_t delta;
};

static uint8_t get_u8(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

static uint64_t get_fixed(struct cursor *c, unsigned size)
{
	if ((size_t)(c->end - c->p) < size) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, c->p, size); /* little-endian */
	c->p += size;
	return v;
}

static uint64_t get_uleb(struct cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint8_t b = get_u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80) || c->bad)
			return v;
	}
}

static int64_t get_sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		b = get_u8(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer; datarel: the base of datarel encodings (the header's address). */
static uint64_t get_encoded(struct cursor *c, uint8_t enc, uint64_t datarel)
{
	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	uint64_t at = (uint64_t)(uintptr_t)c->p - c->delta, v;
	switch (enc & 0x0f) {
	case 0x00: v = get_fixed(c, 8); break;
	case 0x01: v = get_uleb(c); break;
	case 0x02: v = get_fixed(c, 2); break;
	case 0x03: v = get_fixed(c, 4); break;
	case 0x04: v = get_fixed(c, 8); break;
	case 0x09: v = (uint64_t)get_sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)get_fixed(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)get_fixed(c, 4); break;
	case 0x0c: v = get_fixed(c, 8); break;
	default: c->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break; /* pcrel */
	case 0x30: v += datarel; break;
	default: c->bad = 1; return 0; /* textrel, funcrel, aligned: not on x86-64 Linux */
	}
	if (enc & 0x80) /* indirect: only the personality routine is, and it is skipped */
		v = 0;
	return v;
}

/* ---- running CFA programs into rows ---- */

enum where { W_SAME, W_UNDEF, W_CFAREL, W_OTHER };

struct rule {
	uint8_t where;
	int64_t off;
};

struct cfa_state {
	uint64_t cfa_reg; /* DWARF register: 6 rbp, 7 rsp */
	int64_t cfa_off;
	int cfa_expr;
	struct rule rbp, rsp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	int has_z, signal;
	const uint8_t *insns, *end;
};

struct builder {
	struct row *rows;
	uint32_t nrows, capacity;
	size_t bytes;
	uint64_t base, delta; /* delta: the object's (struct object) */
	uint64_t limit; /* rows from here on are not this table's (a block's end; UINT64_MAX: none) */
	int clip; /* a block: a row that starts before base holds from base */
	int failed;
	/* The last CIE, parsed and its initial instructions run: FDEs share a few CIEs, in runs. */
	const uint8_t *cie_at;
	int cie_parsed, cie_ok;
	struct cie cie;
	struct cfa_state cie_state;
};

static struct rule *rule_of(struct cfa_state *s, uint64_t reg, uint64_t ra_reg)
{
	if (reg == ra_reg)
		return &s->ra;
	if (reg == 6)
		return &s->rbp;
	if (reg == 7)
		return &s->rsp;
	return NULL; /* a register the walk does not follow */
}

/* Whether a rule for rbp or rsp is one libunwind's trace follows: unsaved, or saved near the CFA. */
static int simple_rule(const struct rule *r)
{
	return r->where == W_SAME || r->where == W_UNDEF ||
	       (r->where == W_CFAREL && r->off > -(1 << 14) && r->off < (1 << 14) && r->off != -1 && r->off != 0);
}

static struct row classify(const struct cfa_state *s, int signal)
{
	struct row r = { 0, 0, 0, ROW_OTHER, 0 };
	if (signal) {
		r.kind = ROW_SIGNAL;
		return r;
	}
	if (s->ra.where == W_UNDEF || s->rbp.where == W_UNDEF) { /* the end of the stack, by the ABI */
		r.kind = ROW_END;
		return r;
	}
	if (s->cfa_expr || (s->cfa_reg != 6 && s->cfa_reg != 7) || s->cfa_off <= -(1 << 28) ||
	    s->cfa_off >= (1 << 28))
		return r;
	if (s->ra.where != W_CFAREL || s->ra.off != -8 || !simple_rule(&s->rbp) || !simple_rule(&s->rsp))
		return r;
	r.kind = s->cfa_reg == 7 ? ROW_RSP : ROW_RBP;
	r.cfa_off = (int32_t)s->cfa_off;
	r.rbp_off = s->rbp.where == W_CFAREL ? (int16_t)s->rbp.off : 0;
	return r;
}

static int grow_rows(struct builder *b)
{
	uint32_t capacity = b->capacity ? 2 * b->capacity : 4096;
	size_t bytes = (size_t)capacity * sizeof(struct row);
	void *m = map_grow(b->rows, b->bytes, bytes);
	if (!m) {
		b->failed = 1;
		return -1;
	}
	b->rows = m;
	b->bytes = bytes;
	b->capacity = capacity;
	return 0;
}

/* Append the row for [pc, ...); a later FDE overrides whatever an earlier one said from pc on. */
static void emit(struct builder *b, uint64_t pc, struct row r)
{
	if (pc >= b->limit)
		return;
	if (b->clip && pc < b->base)
		pc = b->base;
	if (b->failed || pc < b->base || pc - b->base > UINT32_MAX) {
		b->failed = 1;
		return;
	}
	r.start = (uint32_t)(pc - b->base);
	while (b->nrows && b->rows[b->nrows - 1].start >= r.start)
		b->nrows--;
	if (b->nrows) {
		const struct row *last = &b->rows[b->nrows - 1];
		if (last->kind == r.kind && last->cfa_off == r.cfa_off && last->rbp_off == r.rbp_off)
			return;
	}
	if (b->nrows == b->capacity && grow_rows(b) < 0)
		return;
	b->rows[b->nrows++] = r;
}

/* Run a CFA program from loc; emits a row at every advance. 0, or -1 when it cannot be followed. */
static int run_program(struct builder *b, const struct cie *cie, const uint8_t *p, const uint8_t *end,
		       struct cfa_state *s, const struct cfa_state *initial, uint64_t *loc, uint64_t loc_end,
		       int emitting)
{
	struct cfa_state stack[STATE_STACK];
	int depth = 0, changed = 1; /* since the last row: whether to classify at the next advance */
	struct cursor c = { p, end, 0, b->delta };
	while (c.p < c.end && !c.bad) {
		uint8_t op = get_u8(&c);
		if ((op >> 6) != 1 && (op < 0x01 || op > 0x04))
			changed = 1; /* not an advance (nop and args_size too, harmlessly) */
		uint64_t reg, delta = 0;
		int64_t off;
		struct rule *r;
		switch (op >> 6) {
		case 1: delta = (op & 0x3f) * cie->code_align; goto advance;
		case 2:
			off = (int64_t)get_uleb(&c) * cie->data_align;
			if ((r = rule_of(s, op & 0x3f, cie->ra_reg)))
				*r = (struct rule){ W_CFAREL, off };
			continue;
		case 3:
			if ((r = rule_of(s, op & 0x3f, cie->ra_reg)))
				*r = *rule_of((struct cfa_state *)initial, op & 0x3f, cie->ra_reg);
			continue;
		}
		switch (op) {
		case 0x00: break; /* nop */
		case 0x01: { /* set_loc */
			uint64_t to = get_encoded(&c, cie->fde_enc, 0);
			if (to < *loc)
				return -1;
			delta = to - *loc;
			goto advance;
		}
		case 0x02: delta = get_fixed(&c, 1) * cie->code_align; goto advance;
		case 0x03: delta = get_fixed(&c, 2) * cie->code_align; goto advance;
		case 0x04: delta = get_fixed(&c, 4) * cie->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = get_uleb(&c);
			off = (int64_t)get_uleb(&c) * cie->data_align;
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_CFAREL, off };
			break;
		case 0x06: /* restore_extended */
			reg = get_uleb(&c);
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = *rule_of((struct cfa_state *)initial, reg, cie->ra_reg);
			break;
		case 0x07: /* undefined */
			if ((r = rule_of(s, get_uleb(&c), cie->ra_reg)))
				*r = (struct rule){ W_UNDEF, 0 };
			break;
		case 0x08: /* same_value */
			if ((r = rule_of(s, get_uleb(&c), cie->ra_reg)))
				*r = (struct rule){ W_SAME, 0 };
			break;
		case 0x09: /* register */
			reg = get_uleb(&c);
			get_uleb(&c);
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_OTHER, 0 };
			break;
		case 0x0a: /* remember_state: the CFA rule too, as libgcc and libunwind keep it */
			if (depth == STATE_STACK)
				return -1;
			stack[depth++] = *s;
			break;
		case 0x0b: /* restore_state */
			if (!depth)
				return -1;
			*s = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			s->cfa_reg = get_uleb(&c);
			s->cfa_off = (int64_t)get_uleb(&c);
			s->cfa_expr = 0;
			break;
		case 0x0d: s->cfa_reg = get_uleb(&c); s->cfa_expr = 0; break; /* def_cfa_register */
		case 0x0e: s->cfa_off = (int64_t)get_uleb(&c); break; /* def_cfa_offset */
		case 0x0f: /* def_cfa_expression */
			off = (int64_t)get_uleb(&c);
			if (off < 0 || off > c.end - c.p)
				return -1;
			c.p += off;
			s->cfa_expr = 1;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = get_uleb(&c);
			off = (int64_t)get_uleb(&c);
			if (off < 0 || off > c.end - c.p)
				return -1;
			c.p += off;
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_OTHER, 0 };
			break;
		case 0x11: /* offset_extended_sf */
			reg = get_uleb(&c);
			off = get_sleb(&c) * cie->data_align;
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_CFAREL, off };
			break;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = get_uleb(&c);
			s->cfa_off = get_sleb(&c) * cie->data_align;
			s->cfa_expr = 0;
			break;
		case 0x13: s->cfa_off = get_sleb(&c) * cie->data_align; break; /* def_cfa_offset_sf */
		case 0x14: /* val_offset */
		case 0x2f: /* GNU_negative_offset_extended */
			reg = get_uleb(&c);
			get_uleb(&c);
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_OTHER, 0 };
			break;
		case 0x15: /* val_offset_sf */
			reg = get_uleb(&c);
			get_sleb(&c);
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_OTHER, 0 };
			break;
		case 0x2e: get_uleb(&c); break; /* GNU_args_size */
		default: return -1;
		}
		continue;
	advance:
		/* A block's table (limit, clip) says nothing past its end, and a row that a later one replaces
		 * before its start is said only if it lasts until there: the big FDEs that span many blocks
		 * (an interpreter's loop) are run for each, but classified only there. */
		if (emitting && changed && *loc < loc_end && *loc < b->limit) {
			if (b->clip && *loc + delta <= b->base) {
				*loc += delta;
				continue; /* still changed: said at the next advance if it lasts */
			}
			emit(b, *loc, classify(s, cie->signal));
		}
		changed = 0;
		*loc += delta;
	}
	return c.bad ? -1 : 0;
}

/* Parse the CIE at p (bounded by end; delta: the cursor's): 0 or -1. */
static int parse_cie(const uint8_t *p, const uint8_t *end, uint64_t delta, struct cie *cie)
{
	struct cursor c = { p, end, 0, delta };
	uint64_t length = get_fixed(&c, 4);
	if (length == 0xffffffffu)
		length = get_fixed(&c, 8);
	if (c.bad || length > (uint64_t)(c.end - c.p))
		return -1;
	c.end = c.p + length;
	if (get_fixed(&c, 4) != 0) /* a CIE's id */
		return -1;
	uint8_t version = get_u8(&c);
	const char *aug = (const char *)c.p;
	while (c.p < c.end && *c.p)
		c.p++;
	if (c.p >= c.end)
		return -1;
	c.p++;
	memset(cie, 0, sizeof *cie);
	cie->code_align = get_uleb(&c);
	cie->data_align = get_sleb(&c);
	cie->ra_reg = version == 1 ? get_u8(&c) : get_uleb(&c);
	if (aug[0] == 'z') {
		cie->has_z = 1;
		uint64_t len = get_uleb(&c);
		if (c.bad || len > (uint64_t)(c.end - c.p))
			return -1;
		const uint8_t *after = c.p + len;
		for (const char *a = aug + 1; *a; a++) {
			if (*a == 'R')
				cie->fde_enc = get_u8(&c);
			else if (*a == 'L')
				get_u8(&c);
			else if (*a == 'P')
				get_encoded(&c, get_u8(&c), 0);
			else if (*a == 'S')
				cie->signal = 1;
			else
				break; /* unknown: the length skips the rest */
		}
		c.p = after;
	} else if (aug[0]) {
		return -1; /* "eh" and other old forms */
	}
	if (c.bad)
		return -1;
	cie->insns = c.p;
	cie->end = c.end;
	return 0;
}

/* One FDE's rows; limit: the end of the segment holding .eh_frame. 1 when it said anything, 0 when skipped. */
static int add_fde(struct builder *b, const uint8_t *fde, const uint8_t *limit)
{
	struct cursor c = { fde, limit, 0, b->delta };
	uint64_t length = get_fixed(&c, 4);
	if (length == 0xffffffffu)
		length = get_fixed(&c, 8);
	if (c.bad || length > (uint64_t)(c.end - c.p) || length < 8)
		return 0;
	c.end = c.p + length;
	const uint8_t *id_at = c.p;
	uint64_t cie_ptr = get_fixed(&c, 4);
	if (!cie_ptr || cie_ptr > (uint64_t)(id_at - (const uint8_t *)0))
		return 0;
	const uint8_t *cie_at = id_at - cie_ptr;
	if (cie_at != b->cie_at) {
		static const struct cfa_state at_call = { 7, 8, 0, { W_SAME, 0 }, { W_SAME, 0 }, { W_SAME, 0 } };
		uint64_t loc = 0;
		b->cie_at = cie_at;
		b->cie_state = at_call;
		b->cie_parsed = parse_cie(cie_at, limit, b->delta, &b->cie) == 0;
		b->cie_ok = b->cie_parsed &&
			    run_program(b, &b->cie, b->cie.insns, b->cie.end, &b->cie_state, &at_call, &loc, 0, 0) == 0 &&
			    loc == 0;
	}
	if (!b->cie_parsed)
		return 0; /* a gap in the table: libunwind's */
	const struct cie *cie = &b->cie;
	uint64_t start = get_encoded(&c, cie->fde_enc, 0);
	uint64_t range = get_encoded(&c, cie->fde_enc & 0x0f, 0);
	if (cie->has_z) {
		uint64_t len = get_uleb(&c);
		if (len > (uint64_t)(c.end - c.p))
			return 0;
		c.p += len;
	}
	if (c.bad || !range || (start < b->base && !b->clip))
		return 0;
	struct cfa_state s = b->cie_state;
	uint64_t loc = start, end = start + range;
	if (!b->cie_ok || run_program(b, cie, c.p, c.end, &s, &b->cie_state, &loc, end, 1) < 0)
		emit(b, start, (struct row){ 0, 0, 0, ROW_OTHER, 0 });
	else if (loc < end)
		emit(b, loc, classify(&s, cie->signal));
	emit(b, end, (struct row){ 0, 0, 0, ROW_NONE, 0 });
	return 1;
}

/* ---- building one object's table ---- */

/* FNV-1a over 8-byte words (and the tail bytes): python3.11's 82 KB header byte by byte took 0.1-0.25 ms
 * at every rescan and every build of what walks asked for. */
static uint64_t hash_bytes(const uint8_t *p, size_t n, uint64_t h)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 1099511628211ull;
	}
	for (; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}



int frametab_find_object(const struct dl_phdr_info *info, struct object *o)
{
	memset(o, 0, sizeof *o);
	o->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			o->hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	if (!o->hdr)
		return -1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		if (o->hdr >= lo && o->hdr < hi) {
			o->seg_lo = lo;
			o->seg_hi = hi < lo + ph->p_filesz ? hi : lo + ph->p_filesz;
		}
		if ((ph->p_flags & PF_X) && !o->text_hi) {
			o->text_lo = lo;
			o->text_hi = hi;
		}
	}
	if (!o->seg_hi || o->hdr + 12 > o->seg_hi)
		return -1;
	const uint8_t *h = (const uint8_t *)(uintptr_t)o->hdr;
	if (h[0] != 1 || h[3] != 0x3b) /* version 1, a table of datarel sdata4 pairs */
		return -1;
	struct cursor c = { h + 4, (const uint8_t *)(uintptr_t)o->seg_hi, 0, 0 };
	o->eh_frame = get_encoded(&c, h[1], o->hdr);
	o->fde_count = get_encoded(&c, h[2], o->hdr);
	o->table = (uint64_t)(uintptr_t)c.p;
	if (c.bad || o->fde_count > ((uint64_t)(c.end - c.p)) / 8 || o->eh_frame < o->seg_lo || o->eh_frame >= o->seg_hi)
		return -1;
	return 0;
}

uint64_t frametab_fingerprint(const struct object *o)
{
	const uint8_t *h = (const uint8_t *)(uintptr_t)o->hdr;
	return hash_bytes(h, (size_t)(o->table + 8 * o->fde_count - o->hdr), 1469598103934665603ull);
}

int frametab_copy_object(struct object *o)
{
	uint64_t lo = o->hdr < o->eh_frame ? o->hdr : o->eh_frame;
	size_t bytes = (size_t)(o->seg_hi - lo);
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	memcpy(m, (const void *)(uintptr_t)lo, bytes);
	o->copy = m;
	o->copy_bytes = bytes;
	o->seg_lo = lo;
	o->delta = (uint64_t)(uintptr_t)m - lo;
	return 0;
}

void frametab_drop_copy(struct object *o)
{
	if (o->copy)
		munmap(o->copy, o->copy_bytes);
	o->copy = NULL;
}

/*
 * Blocks are many and small (a few KiB of rows each): a mapping apiece, mprotect'ed and its scratch
 * unmapped, cost two TLB shootdowns per block, each an interrupt of every CPU the program runs on
 * (2.7 ms of the agent's thread waiting for them over 60 blocks of python3.11, on this VM). So their
 * rows are carved from chunks that are never unmapped, made read-only once full, and their builder's
 * scratch is kept for the next. Builders run one at a time (modules.c's lock).
 */
#define ARENA_CHUNK (256u << 10)

static struct {
	uint8_t *base;
	size_t used, size;
} arena;

static struct {
	struct row *rows;
	uint32_t capacity;
	size_t bytes;
} block_scratch;

static void *arena_take(size_t bytes)
{
	bytes = (bytes + 15) & ~(size_t)15;
	if (!arena.base || arena.size - arena.used < bytes) {
		size_t size = bytes > ARENA_CHUNK ? (bytes + 4095) & ~(size_t)4095 : ARENA_CHUNK;
		void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		if (arena.base)
			mprotect(arena.base, arena.size, PROT_READ); /* full: nothing can scribble on it from here */
		arena.base = m;
		arena.used = 0;
		arena.size = size;
	}
	void *p = arena.base + arena.used;
	arena.used += bytes;
	return p;
}

static void free_builder(struct builder *b)
{
	if (b->clip) { /* a block's: the scratch is kept */
		block_scratch.rows = b->rows;
		block_scratch.capacity = b->capacity;
		block_scratch.bytes = b->bytes;
	} else if (b->rows) {
		munmap(b->rows, b->bytes);
	}
}

/* The initial location of the header's i-th FDE (sorted by it). */
static uint64_t fde_start(const struct object *o, const uint8_t *table, uint64_t i)
{
	int32_t at;
	memcpy(&at, table + 8 * i, 4);
	return o->hdr + (uint64_t)(int64_t)at;
}

/* Run the header's i-th FDE into b: 1 when it said anything (add_fde). */
static int add_fde_at(struct builder *b, const struct object *o, const uint8_t *table, uint64_t i)
{
	int32_t fde;
	memcpy(&fde, table + 8 * i + 4, 4);
	uint64_t at = o->hdr + (uint64_t)(int64_t)fde;
	if (at < o->seg_lo || at >= o->seg_hi)
		return 0;
	return add_fde(b, (const uint8_t *)(uintptr_t)(at + o->delta), (const uint8_t *)(uintptr_t)(o->seg_hi + o->delta));
}

/* b's rows, base to end, into a read-only mapping of their own with the per-KiB index; b is freed. */
static const struct rows *publish(struct builder *b, uint64_t end)
{
	if (b->failed || !b->nrows || end <= b->base) {
		free_builder(b);
		return NULL;
	}
	uint64_t span = end - b->base;
	uint32_t npages = (uint32_t)(span >> PAGE_SHIFT) + 2;
	size_t bytes = sizeof(struct rows) + (size_t)b->nrows * sizeof(struct row) + (size_t)npages * 4;
	void *m = b->clip ? arena_take(bytes) : mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!m || m == MAP_FAILED) {
		free_builder(b);
		return NULL;
	}
	struct rows *t = m;
	struct row *rows = (struct row *)(t + 1);
	uint32_t *pages = (uint32_t *)(rows + b->nrows);
	uint32_t nrows = b->nrows;
	memcpy(rows, b->rows, (size_t)nrows * sizeof(struct row));
	free_builder(b);
	uint32_t r = 0;
	for (uint32_t i = 0; i < npages; i++) {
		uint64_t at = (uint64_t)i << PAGE_SHIFT;
		while (r + 1 < nrows && rows[r + 1].start <= at)
			r++;
		pages[i] = r;
	}
	t->base = b->base;
	t->end = end;
	t->nrows = nrows;
	t->npages = npages;
	t->rows = rows;
	t->pages = pages;
	if (!b->clip)
		mprotect(m, bytes, PROT_READ); /* read-only from here: nothing can scribble on what handlers read */
	return t;
}

const struct rows *frametab_build_rows(const struct object *o)
{
	if (!o->fde_count)
		return NULL;
	const uint8_t *table = (const uint8_t *)(uintptr_t)(o->table + o->delta);
	struct builder b;
	memset(&b, 0, sizeof b);
	b.delta = o->delta;
	b.limit = UINT64_MAX;
	b.base = fde_start(o, table, 0);
	uint64_t end = b.base;
	for (uint64_t i = 0; i < o->fde_count && !b.failed; i++) {
		add_fde_at(&b, o, table, i);
		if (b.nrows && b.base + b.rows[b.nrows - 1].start > end)
			end = b.base + b.rows[b.nrows - 1].start;
	}
	return publish(&b, end);
}

/*
 * The rows of [lo, hi) alone: what frametab_build_rows says there, from the FDEs that start in it and
 * the one in force at lo. Over the whole object a row holds from its pc until a later FDE's row (in
 * the header's order) or its FDE's end, so at lo the answer is the last FDE starting at or before lo
 * that says anything (those that say nothing are skipped there too), then every FDE starting below hi.
 */
#define SKIPPED_BEFORE 64 /* FDEs said nothing before lo: stop looking, lo is in a gap (libunwind's) */

const struct rows *frametab_build_block(const struct object *o, uint64_t lo, uint64_t hi)
{
	if (!o->fde_count || lo >= hi)
		return NULL;
	const uint8_t *table = (const uint8_t *)(uintptr_t)(o->table + o->delta);
	struct builder b;
	memset(&b, 0, sizeof b);
	b.delta = o->delta;
	b.base = lo;
	b.limit = hi;
	b.clip = 1;
	b.rows = block_scratch.rows;
	b.capacity = block_scratch.capacity;
	b.bytes = block_scratch.bytes;
	uint64_t first = 0, n = o->fde_count; /* first: of the FDEs starting after lo */
	while (first < n) {
		uint64_t mid = first + (n - first) / 2;
		if (fde_start(o, table, mid) <= lo)
			first = mid + 1;
		else
			n = mid;
	}
	for (uint64_t i = first, tries = 0; i > 0 && tries < SKIPPED_BEFORE; i--, tries++)
		if (add_fde_at(&b, o, table, i - 1))
			break;
	for (uint64_t i = first; i < o->fde_count && !b.failed && fde_start(o, table, i) < hi; i++)
		add_fde_at(&b, o, table, i);
	return publish(&b, hi);
}
