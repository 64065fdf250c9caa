/*
 * remote_unwind.c - a walk of another process's stack from a copy of it
 * (remote.h): perf's copy of the user stack at a sample, or one read with
 * process_vm_readv for a blocked thread.
 *
 * It follows the agent's table walk (frametab.c) over the same rows: CFA =
 * rsp+off or rbp+off, the return address at CFA-8, rbp saved at CFA+k or
 * unchanged; the signal trampoline's frame is stepped through by the
 * ucontext on the stack. It reads only the copy: a word outside it, a row
 * of another kind (a DWARF expression, the PLT's) or a pc in no object ends
 * the walk there, and the stack is kept as far as it got, marked truncated.
 * Unlike the agent it has no libunwind to fall back to and no cache: it
 * runs in collect, on the other core.
 */
#include "remote.h"
#include "remote_internal.h"

#include "frametab_internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static int by_text_lo(const void *a, const void *b)
{
	const struct remote_object *x = a, *y = b;
	return x->text_lo < y->text_lo ? -1 : x->text_lo > y->text_lo;
}

/* The object whose executable mapping holds pc, or NULL. */
static struct remote_object *object_of(struct remote_modules *rm, uint64_t pc)
{
	if (!rm->sorted) {
		if (rm->n > 1)
			qsort(rm->objects, rm->n, sizeof *rm->objects, by_text_lo);
		rm->sorted = 1;
		rm->last = 0;
	}
	if (rm->last < rm->n && pc >= rm->objects[rm->last].text_lo && pc < rm->objects[rm->last].text_hi)
		return &rm->objects[rm->last];
	uint32_t lo = 0, hi = rm->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (rm->objects[mid].text_lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= rm->objects[lo - 1].text_hi)
		return NULL;
	rm->last = lo - 1;
	return &rm->objects[lo - 1];
}

#define MAX_EH_SEGMENT (256ull << 20) /* the segment read to build an object's rows, at most */

/* The object's rows, built from its file's .eh_frame_hdr segment the first time (its file is closed then); NULL:
 * none. */
static const struct rows *rows_of(struct remote_object *ob)
{
	if (ob->tables_tried)
		return ob->rows;
	ob->tables_tried = 1;
	const ElfW(Phdr) *eh = NULL, *load = NULL;
	for (unsigned i = 0; ob->phdr && i < ob->phnum; i++)
		if (ob->phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &ob->phdr[i];
	for (unsigned i = 0; eh && i < ob->phnum && !load; i++) {
		const ElfW(Phdr) *ph = &ob->phdr[i];
		if (ph->p_type == PT_LOAD && eh->p_vaddr >= ph->p_vaddr && eh->p_vaddr - ph->p_vaddr < ph->p_filesz)
			load = ph;
	}
	/* Of that segment, only from .eh_frame_hdr (or .eh_frame, when it comes first) to its end: a program's
	 * read-only data before them can be large. */
	ElfW(Phdr) part = load ? *load : (ElfW(Phdr)){ 0 };
	uint8_t hdr[8];
	if (load && remote_object_read(ob, load->p_offset + (eh->p_vaddr - load->p_vaddr), hdr, sizeof hdr) == 0) {
		uint64_t from = eh->p_vaddr;
		if (hdr[1] == 0x1b) { /* eh_frame_ptr: pcrel sdata4 (what every linker writes) */
			int32_t rel;
			memcpy(&rel, hdr + 4, 4);
			uint64_t eh_frame = eh->p_vaddr + 4 + (uint64_t)(int64_t)rel;
			if (eh_frame >= load->p_vaddr && eh_frame < from)
				from = eh_frame;
		}
		part.p_offset += from - load->p_vaddr;
		part.p_filesz -= from - load->p_vaddr;
		part.p_vaddr = from;
	}
	uint8_t *segment = load && part.p_filesz <= MAX_EH_SEGMENT ? malloc(part.p_filesz ? part.p_filesz : 1) : NULL;
	if (segment && remote_object_read(ob, part.p_offset, segment, part.p_filesz) == 0) {
		/* The loader's view of the object, with only the two headers the rows come from: where
		 * .eh_frame_hdr is, and the part read (its file size: what was read). */
		load = &part;
		ElfW(Phdr) ph[2] = { *eh, part };
		ph[1].p_memsz = ph[1].p_filesz;
		struct dl_phdr_info info = { .dlpi_addr = ob->bias, .dlpi_name = ob->path, .dlpi_phdr = ph, .dlpi_phnum = 2 };
		uint64_t delta = (uint64_t)(uintptr_t)segment - (ob->bias + load->p_vaddr);
		struct object o;
		if (frametab_find_object(&info, delta, &o) == 0)
			ob->rows = frametab_build_rows(&o);
	}
	free(segment);
	if (ob->fd >= 0)
		close(ob->fd);
	ob->fd = -1;
	ob->mem = NULL;
	return ob->rows;
}

/* The word at address at of the stack copied from sp, or 0 with *bad set when the copy does not hold it. */
static uint64_t word(const uint8_t *stack, uint64_t sp, uint64_t size, uint64_t at, int *bad)
{
	uint64_t v = 0;
	if (at < sp || at - sp > size || size - (at - sp) < 8) {
		*bad = 1;
		return 0;
	}
	memcpy(&v, stack + (at - sp), 8);
	return v;
}

int remote_modules_holds_code(struct remote_modules *rm, uint64_t addr)
{
	return object_of(rm, addr) != NULL;
}

uint32_t remote_unwind(struct remote_modules *rm, uint64_t pc, uint64_t sp, uint64_t bp, const uint8_t *stack,
		       uint64_t size, uint64_t *ips, uint32_t cap, uint32_t *flags)
{
	const uint64_t base = sp, top = sp + size;
	uint32_t n = 0;
	int exact = 1, bad = 0, reached_root = 0;
	*flags = 0;
	if (!cap)
		return 0;
	ips[n++] = pc;
	while (n < cap) {
		/* A return address is the instruction after a call: its caller's rule is the one before it. */
		uint64_t at = exact ? pc : pc - 1;
		struct remote_object *ob = object_of(rm, at);
		const struct rows *rows = ob ? rows_of(ob) : NULL;
		const struct row *r = rows ? frametab_row_of(rows, at) : NULL;
		if (!r)
			break;
		if (r->kind == ROW_SIGNAL) {
			/* The ucontext the kernel pushed is where the handler returned to. */
			uint64_t g = sp + offsetof(ucontext_t, uc_mcontext.gregs);
			uint64_t new_sp = word(stack, base, size, g + 8 * REG_RSP, &bad);
			pc = word(stack, base, size, g + 8 * REG_RIP, &bad);
			bp = word(stack, base, size, g + 8 * REG_RBP, &bad);
			if (bad || new_sp <= sp || new_sp >= top)
				break;
			sp = new_sp;
			exact = 1;
		} else {
			if (r->kind == ROW_END) {
				reached_root = 1;
				break;
			}
			if (r->kind != ROW_RSP && r->kind != ROW_RBP)
				break;
			uint64_t cfa = (r->kind == ROW_RSP ? sp : bp) + (uint64_t)(int64_t)r->cfa_off;
			if (cfa <= sp || cfa > top || cfa - sp < 8)
				break;
			uint64_t ret = word(stack, base, size, cfa - 8, &bad);
			uint64_t saved = cfa + (uint64_t)(int64_t)r->rbp_off;
			/* A slot below sp: an epilogue popped rbp already (gcc leaves the rule), the register holds it. */
			if (r->rbp_off && saved >= sp)
				bp = word(stack, base, size, saved, &bad);
			if (bad)
				break;
			pc = ret;
			sp = cfa;
			exact = 0;
		}
		if (pc < 0x4000) { /* where libunwind's trace stops too */
			reached_root = 1;
			break;
		}
		ips[n++] = pc;
	}
	if (!reached_root)
		*flags |= REMOTE_UNWIND_TRUNCATED;
	return n;
}
