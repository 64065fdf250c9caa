/*
 * frametab_fde.c - the .eh_frame format read into frame-table rows
 * (frametab.c says what a row is and who reads them): an object's
 * .eh_frame_hdr (frametab_find_object), each FDE's CIE (parsed once per run
 * of FDEs that share it), and its CFA program, interpreted for the registers
 * a walk follows (the CFA, rbp, rsp and the return address). Every read of
 * the image is bounded by the segment that holds .eh_frame; a program it
 * cannot follow marks its FDE's range as one libunwind unwinds. Which FDEs
 * are run, and where their rows go, is frametab_build.c's. Runs outside
 * signal handlers only.
 */
#include "frametab_fde.h"
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

/* A factored offset times the data alignment, wrapping as the hardware does: a crafted file's (collect -p reads
 * any) must not overflow a signed product (its rows are then ROW_OTHER or bad reads the walk refuses). */
static int64_t scaled(uint64_t factored, int64_t align)
{
	return (int64_t)(factored * (uint64_t)align);
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
			off = scaled(get_uleb(&c), cie->data_align);
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
			off = scaled(get_uleb(&c), cie->data_align);
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
			off = scaled((uint64_t)get_sleb(&c), cie->data_align);
			if ((r = rule_of(s, reg, cie->ra_reg)))
				*r = (struct rule){ W_CFAREL, off };
			break;
		case 0x12: /* def_cfa_sf */
			s->cfa_reg = get_uleb(&c);
			s->cfa_off = scaled((uint64_t)get_sleb(&c), cie->data_align);
			s->cfa_expr = 0;
			break;
		case 0x13: s->cfa_off = scaled((uint64_t)get_sleb(&c), cie->data_align); break; /* def_cfa_offset_sf */
		case 0x09: /* register */
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
int frametab_add_fde(struct builder *b, const uint8_t *fde, const uint8_t *limit)
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
	if (!cie_ptr || cie_ptr > (uint64_t)(id_at - b->floor))
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

int frametab_find_object(const struct dl_phdr_info *info, uint64_t delta, struct object *o)
{
	memset(o, 0, sizeof *o);
	o->bias = info->dlpi_addr;
	o->delta = delta;
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
	const uint8_t *h = (const uint8_t *)(uintptr_t)(o->hdr + delta);
	if (h[0] != 1 || h[3] != 0x3b) /* version 1, a table of datarel sdata4 pairs */
		return -1;
	struct cursor c = { h + 4, (const uint8_t *)(uintptr_t)(o->seg_hi + delta), 0, delta };
	o->eh_frame = get_encoded(&c, h[1], o->hdr);
	o->fde_count = get_encoded(&c, h[2], o->hdr);
	o->table = (uint64_t)(uintptr_t)c.p - delta;
	if (c.bad || o->fde_count > ((uint64_t)(c.end - c.p)) / 8 || o->eh_frame < o->seg_lo || o->eh_frame >= o->seg_hi)
		return -1;
	return 0;
}
