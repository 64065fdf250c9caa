/*
 * frametab.c - frame tables from .eh_frame, and the walk over them that the
 * agent's captures use before libunwind (capture.c).
 *
 * The tables. When an object is mapped (modules.c's rescan: start, every
 * dlopen and dlclose; never in a signal handler) it is published with its
 * executable range; its rows are built then, whole (eager: allocations
 * unwind tens of thousands of times before anything else could build them),
 * or 16 KiB of text at a time, a block when a walk first meets it unbuilt
 * (the walk declines, and the agent's thread builds it: frametab_build_wanted;
 * the stack libunwind then takes asks for the blocks of all its frames).
 * A CPU profile samples a few dozen blocks of a large object: a small part
 * of its rows, and of the time building them all takes (bench/README.md).
 * Building reads the PT_GNU_EH_FRAME header from the loaded image, inside
 * dl_iterate_phdr's callback so the object cannot be unmapped meanwhile
 * (whole objects from a copy taken there), and runs the FDEs' CFA programs
 * once into rows:
 * from this pc on, CFA = rsp+off or rbp+off, the return address at CFA-8,
 * rbp saved at CFA+k or unchanged (libunwind's "standard frame", which its
 * trace cache keeps). A row whose rule is anything else (a DWARF
 * expression, as the PLT's and realigned frames' are, a CFA in another
 * register) says so, and so do the gaps between FDEs. A row is 12 bytes,
 * rows are sorted by pc, and a per-KiB index bounds each binary search to
 * the rows of one KiB of text. Rows live in read-only mappings of their own:
 * nothing here touches malloc.
 *
 * Publication. Readers are signal handlers and malloc hooks, so they take
 * no lock: the set of objects is one static array under a sequence count
 * that the writer makes odd while it changes the array, and an object's
 * rows appear by one atomic pointer store. A walk that started on an odd
 * count, or ends on another count than it started with, is thrown away
 * (FRAMETAB_CHANGED), and every pointer it may have read meanwhile stays
 * valid, because nothing is ever unmapped or reused for another object: one
 * retired by dlclose is kept and taken again if the same object (same
 * address, same header bytes) comes back, so a program that loads and
 * unloads one plugin in a loop does not grow, and a program that loads many
 * distinct ones keeps their rows (a few hundred KiB for a large library).
 *
 * The walk reads two words of stack per frame (the return address, the
 * saved rbp when the row says it was saved) and checks each read against
 * the thread's stack: at or above the current sp (a leaf's red zone for a
 * saved rbp an epilogue already popped), below its top, and the CFA must
 * climb. Anything else ends the walk with a negative answer and the
 * caller unwinds with libunwind instead, so a stack is either what libunwind
 * would say or libunwind's own. The kernel's signal trampoline (glibc's
 * __restore_rt: an "S" FDE, and its code bytes mov $15,%rax; syscall) is
 * stepped through from the ucontext it leaves on the stack, as libunwind
 * does. Where a walk reaches a state (pc, sp) a recent walk of its thread
 * went through, it follows that walk's chain instead of looking rows up, a
 * load and a compare a frame, and goes on the usual way at the first word of
 * stack that differs (frametab_chain.c), so its frames are the same.
 */
#include "frametab.h"
#include "frametab_chain.h"
#include "frametab_internal.h"

#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <ucontext.h>

#define MAX_TABLES 4096
#define MAX_PENDING 1024 /* built per rescan; more wait for a walk to ask again */
#define BLOCK_SHIFT 14 /* lazily, rows are built per 16 KiB of text (a few dozen functions) */
#define MAX_BLOCKS 65536 /* 1 GiB of text in all; an object beyond that is built whole */

/* One loaded object, from a pool: never freed, so a reader's pointer stays good. */
struct table {
	uint64_t text_lo, text_hi; /* its executable segment: the pcs it answers for */
	uint64_t load_bias, hdr, fingerprint; /* identity, to take it again after a dlclose/dlopen */
	const struct rows *_Atomic rows; /* the whole object's; NULL until built */
	_Atomic int wanted; /* a walk met it, or one of its blocks, unbuilt */
	uint32_t block0, nblocks; /* its blocks: block_rows[block0 ..], text_lo on; 0: none, built whole */
	struct table *next; /* every table made */
};

/* The blocks' rows, NULL until built (&no_rows: nothing there), and whether a walk asked for them. */
static const struct rows *_Atomic block_rows[MAX_BLOCKS];
static _Atomic uint8_t block_wanted[MAX_BLOCKS];
static uint32_t blocks_used;
static const struct rows no_rows; /* base = end = 0: every lookup misses (libunwind's) */

static struct {
	_Atomic uint32_t seq; /* odd while the writer changes what follows */
	uint32_t count;
	struct table *table[MAX_TABLES]; /* sorted by text_lo */
} set;

static struct table pool[2 * MAX_TABLES], *all_tables;
static uint32_t pool_used;
static _Atomic int wanted_any;

/* ---- the set, its rescan, and building what walks asked for ---- */

/* Objects to build once the loader's callback returned: their copies (frametab_copy_object). */
struct pending {
	struct table *table;
	struct object object;
};

struct rescan {
	struct table *found[MAX_TABLES];
	uint32_t n;
	int eager;
	struct pending pending[MAX_PENDING];
	uint32_t npending;
};

static struct rescan scan; /* large: static, the writer is one at a time */

/* The loader's count of objects unloaded, as the last rescan saw it (its tables are the published set);
 * -1: unknown. While it stays the same, an object at an address is the one that rescan found there. */
static long long published_subs = -1;

/* Inside the loader's callback: copy what t's rows are built from, to build them after it. */
static void defer_build(struct table *t, struct object *o)
{
	if (scan.npending == MAX_PENDING || atomic_load(&t->rows) || frametab_copy_object(o) < 0)
		return;
	scan.pending[scan.npending++] = (struct pending){ t, *o };
}

static void build_deferred(void)
{
	for (uint32_t i = 0; i < scan.npending; i++) {
		struct pending *p = &scan.pending[i];
		atomic_store_explicit(&p->table->rows, frametab_build_rows(&p->object), memory_order_release);
		frametab_drop_copy(&p->object);
	}
	scan.npending = 0;
}

static struct table *known_table(const struct object *o)
{
	for (struct table *t = all_tables; t; t = t->next)
		if (t->load_bias == o->bias && t->hdr == o->hdr && t->fingerprint == o->fingerprint)
			return t;
	return NULL;
}

static int has_subs(const struct dl_phdr_info *info, size_t size)
{
	return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct rescan *r = data;
	published_subs = has_subs(info, size) ? (long long)info->dlpi_subs : -1;
	struct object o;
	if (r->n == MAX_TABLES || frametab_find_object(info, 0, &o) < 0 || !o.text_hi)
		return 0;
	o.fingerprint = frametab_fingerprint(&o);
	struct table *t = known_table(&o);
	if (!t && pool_used < sizeof pool / sizeof *pool) {
		t = &pool[pool_used++];
		t->text_lo = o.text_lo;
		t->text_hi = o.text_hi;
		t->load_bias = o.bias;
		t->hdr = o.hdr;
		t->fingerprint = o.fingerprint;
		uint64_t nblocks = ((o.text_hi - o.text_lo) >> BLOCK_SHIFT) + 1;
		if (nblocks <= MAX_BLOCKS - blocks_used) {
			t->block0 = blocks_used;
			t->nblocks = (uint32_t)nblocks;
			blocks_used += (uint32_t)nblocks;
		}
		t->next = all_tables;
		all_tables = t;
	}
	if (!t)
		return 0;
	if (r->eager)
		defer_build(t, &o);
	r->found[r->n++] = t;
	return 0;
}

void frametab_rescan(int (*iterate)(int (*)(struct dl_phdr_info *, size_t, void *), void *), int eager)
{
	scan.n = 0;
	scan.eager = eager;
	scan.npending = 0;
	published_subs = -1;
	iterate(on_object, &scan);
	/* insertion sort by address: a few hundred objects at most */
	for (uint32_t i = 1; i < scan.n; i++) {
		struct table *t = scan.found[i];
		uint32_t j = i;
		for (; j && scan.found[j - 1]->text_lo > t->text_lo; j--)
			scan.found[j] = scan.found[j - 1];
		scan.found[j] = t;
	}
	uint32_t seq = atomic_load_explicit(&set.seq, memory_order_relaxed);
	atomic_store_explicit(&set.seq, seq | 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	memcpy(set.table, scan.found, scan.n * sizeof *scan.found);
	set.count = scan.n;
	atomic_store_explicit(&set.seq, (seq | 1) + 1, memory_order_release);
	build_deferred(); /* published meanwhile without rows: walks there go to libunwind until each is built */
}

int frametab_wanted(void)
{
	return atomic_load_explicit(&wanted_any, memory_order_relaxed);
}

/* The blocks of t walks asked for, from the image (inside the loader's callback: a block takes tens of
 * microseconds, the loader's lock is held no longer than copying the object would). */
static void build_blocks(struct table *t, const struct object *o)
{
	for (uint32_t k = 0; k < t->nblocks; k++) {
		uint32_t i = t->block0 + k;
		if (!atomic_load_explicit(&block_wanted[i], memory_order_relaxed) || atomic_load(&block_rows[i]))
			continue;
		uint64_t lo = t->text_lo + ((uint64_t)k << BLOCK_SHIFT), hi = lo + (1ull << BLOCK_SHIFT);
		const struct rows *rows = frametab_build_block(o, lo, hi < t->text_hi ? hi : t->text_hi);
		atomic_store_explicit(&block_rows[i], rows ? rows : &no_rows, memory_order_release);
	}
}

static int on_wanted(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)data;
	struct object o;
	if (frametab_find_object(info, 0, &o) < 0)
		return 0;
	struct table *t = NULL;
	if (published_subs >= 0 && has_subs(info, size) && (long long)info->dlpi_subs == published_subs) {
		/* Nothing unloaded since the rescan: the published table of this address is this object. */
		for (uint32_t i = 0; i < set.count && !t; i++)
			if (set.table[i]->load_bias == o.bias && set.table[i]->hdr == o.hdr)
				t = set.table[i];
	} else {
		for (t = all_tables; t; t = t->next) /* the hash only where a table of this address is wanted */
			if (t->load_bias == o.bias && t->hdr == o.hdr && atomic_load(&t->wanted))
				break;
		if (t) {
			o.fingerprint = frametab_fingerprint(&o);
			t = known_table(&o);
		}
	}
	if (!t || !atomic_exchange(&t->wanted, 0) || atomic_load(&t->rows))
		return 0;
	if (t->nblocks)
		build_blocks(t, &o);
	else
		defer_build(t, &o);
	return 0;
}

void frametab_build_wanted(int (*iterate)(int (*)(struct dl_phdr_info *, size_t, void *), void *))
{
	if (!atomic_exchange(&wanted_any, 0))
		return;
	scan.npending = 0;
	iterate(on_wanted, NULL); /* while the objects cannot be unmapped: blocks built, whole objects copied */
	build_deferred();
}

void frametab_forget(void)
{
	/* The writer was another thread, gone in the child: what it left may be half written. */
	uint32_t seq = atomic_load(&set.seq);
	if (seq & 1) {
		set.count = 0;
		atomic_store(&set.seq, seq + 1);
	}
	/* What walks had asked the parent's builder for and it had not built yet (a fork early in a run,
	 * while it builds) is asked again here: left marked, no walk in the child would ask for it, and
	 * libunwind would answer there for the rest of the child's life. */
	for (uint32_t i = 0; i < blocks_used; i++)
		if (!atomic_load_explicit(&block_rows[i], memory_order_relaxed))
			atomic_store_explicit(&block_wanted[i], 0, memory_order_relaxed);
	for (struct table *t = all_tables; t; t = t->next)
		atomic_store_explicit(&t->wanted, 0, memory_order_relaxed);
	atomic_store(&wanted_any, 0);
}

void frametab_stats(uint32_t *tables, uint64_t *rows, uint32_t *blocks)
{
	*tables = *blocks = 0;
	*rows = 0;
	for (uint32_t i = 0; i < set.count; i++) {
		const struct table *t = set.table[i];
		const struct rows *r = atomic_load(&t->rows);
		uint64_t n = r ? r->nrows : 0;
		for (uint32_t k = 0; !r && k < t->nblocks; k++) {
			const struct rows *b = atomic_load(&block_rows[t->block0 + k]);
			if (b) {
				++*blocks;
				n += b->nrows;
			}
		}
		if (r || n) {
			++*tables;
			*rows += n;
		}
	}
}

/* ---- the walk ---- */

/* The table covering pc, among those published (the caller checks the sequence count afterwards). */
static const struct table *table_of(uint64_t pc)
{
	uint32_t lo = 0, hi = set.count;
	if (hi > MAX_TABLES)
		return NULL;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct table *t = set.table[mid];
		if (!t)
			return NULL;
		if (pc < t->text_lo)
			hi = mid;
		else if (pc >= t->text_hi)
			lo = mid + 1;
		else
			return t;
	}
	return NULL;
}

/* glibc's x86-64 signal restorer: mov $15,%rax; syscall (rt_sigreturn). Only read where an "S" FDE
 * covers pc, so in an object that is mapped (libc's). */
static int is_sigreturn(const struct table *t, uint64_t pc)
{
	static const uint8_t code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
	return pc >= t->text_lo && pc + sizeof code <= t->text_hi && memcmp((const void *)(uintptr_t)pc, code, sizeof code) == 0;
}

/* The rows that answer for pc in t (its own or its block's), or NULL: not built yet, and whoever builds
 * (outside handlers) is told, *asked set when this was the first to ask since the last build. */
static const struct rows *rows_for(const struct table *t, uint64_t pc, int *asked)
{
	const struct rows *rows = atomic_load_explicit(&t->rows, memory_order_acquire);
	if (rows)
		return rows;
	if (t->nblocks) {
		uint64_t k = (pc - t->text_lo) >> BLOCK_SHIFT;
		if (pc < t->text_lo || k >= t->nblocks)
			return NULL;
		uint32_t i = t->block0 + (uint32_t)k;
		rows = atomic_load_explicit(&block_rows[i], memory_order_acquire);
		if (rows || atomic_load_explicit(&block_wanted[i], memory_order_relaxed))
			return rows;
		atomic_store_explicit(&block_wanted[i], 1, memory_order_relaxed);
	} else if (atomic_load_explicit(&t->wanted, memory_order_relaxed)) {
		return NULL;
	}
	atomic_store_explicit(&((struct table *)t)->wanted, 1, memory_order_relaxed);
	/* Release: the builder, which takes wanted_any first, then sees what this asked for. */
	if (!atomic_exchange_explicit(&wanted_any, 1, memory_order_release))
		*asked = 1;
	return NULL;
}

int frametab_want(const uint64_t *ips, uint32_t n)
{
	uint32_t seq = atomic_load_explicit(&set.seq, memory_order_acquire);
	int asked = 0;
	if (seq & 1)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t pc = i ? ips[i] - 1 : ips[i]; /* a return address: its call's rule */
		const struct table *t = table_of(pc);
		if (t)
			rows_for(t, pc, &asked);
	}
	return asked;
}

/* The row for pc (kind ROW_NONE when none), by the cache or the tables; *t_out: its table, when looked up;
 * *asked: set when this lookup was the first to want an unbuilt object's rows. */
static inline struct row lookup(uint64_t pc, struct frametab_cache *c, const struct table **t_out, int *asked)
{
	struct cache_slot *slot = c ? &c->slot[(pc ^ (pc >> 10)) & (CACHE_SLOTS - 1)] : NULL;
	*t_out = NULL;
	struct row r = { 0, 0, 0, ROW_NONE, 0 };
	if (slot && slot->pc == pc) {
		r.cfa_off = slot->cfa_off;
		r.rbp_off = slot->rbp_off;
		r.kind = slot->kind;
		return r;
	}
	const struct table *t = table_of(pc);
	const struct rows *rows = t ? rows_for(t, pc, asked) : NULL;
	const struct row *found = rows ? frametab_row_of(rows, pc) : NULL;
	*t_out = t;
	if (!found)
		return r;
	r = *found;
	if (slot && (r.kind == ROW_RSP || r.kind == ROW_RBP || r.kind == ROW_END)) {
		slot->pc = pc;
		slot->cfa_off = r.cfa_off;
		slot->rbp_off = r.rbp_off;
		slot->kind = r.kind;
	}
	return r;
}

int frametab_unwind(uint64_t pc, uint64_t sp, uint64_t bp, uint64_t stack_lo, uint64_t stack_hi, uint64_t *ips,
		    uint32_t cap, struct frametab_cache *cache, uint64_t *token)
{
	if (token)
		*token = 0;
	if (!cap)
		return 0;
	if (sp < stack_lo || sp >= stack_hi)
		return FRAMETAB_BAD_STACK;
	uint32_t seq = atomic_load_explicit(&set.seq, memory_order_acquire);
	if (seq & 1)
		return FRAMETAB_CHANGED;
	if (cache && cache->busy)
		cache = NULL;
	struct walk w = { 0 };
	w.done = 1;
	if (cache) {
		cache->busy = 1;
		atomic_signal_fence(memory_order_seq_cst);
		chain_begin(cache, &w, seq, stack_lo, stack_hi, pc, sp);
	}
	uint32_t n = 0;
	int exact = 1, rc = 0, asked = 0;
	/* An epilogue past its pop of rbp may still name the slot (gcc leaves the rule): in the red zone. */
	uint64_t lowest = sp - stack_lo > 128 ? sp - 128 : stack_lo;
	ips[n++] = pc;
	while (n < cap) {
		uint32_t f = n - 1;
		if (!w.done && chain_has(&w, pc, sp, exact)) {
			if (chain_follow(&w, &pc, &sp, &bp, &exact, lowest, ips, &n, cap))
				break;
			f = n - 1;
		}
		chain_record(&w, f, pc, sp, bp, exact);
		/* A return address is the instruction after a call: its caller's rule is the one before it. */
		const struct table *t;
		struct row r = lookup(exact ? pc : pc - 1, cache, &t, &asked);
		if (r.kind == ROW_SIGNAL && t && is_sigreturn(t, pc)) {
			/* The ucontext the kernel pushed is where the handler returned to. */
			uint64_t uc = sp, greg = offsetof(ucontext_t, uc_mcontext.gregs);
			w.norecord = 1; /* a chain holds no signal frame */
			if (uc + sizeof(ucontext_t) > stack_hi) {
				rc = FRAMETAB_BAD_STACK;
				break;
			}
			uint64_t new_sp = load(uc + greg + 8 * REG_RSP);
			pc = load(uc + greg + 8 * REG_RIP);
			bp = load(uc + greg + 8 * REG_RBP);
			if (new_sp <= sp || new_sp >= stack_hi) {
				rc = FRAMETAB_BAD_STACK;
				break;
			}
			sp = new_sp;
			exact = 1;
		} else {
			if (r.kind == ROW_END) {
				w.end = END_ROW;
				break;
			}
			if (r.kind != ROW_RSP && r.kind != ROW_RBP) {
				rc = r.kind != ROW_NONE ? FRAMETAB_UNMODELLED /* or a trampoline of another kind */
				     : asked	    ? FRAMETAB_UNBUILT
						    : FRAMETAB_NO_TABLE;
				break;
			}
			uint64_t cfa = (r.kind == ROW_RSP ? sp : bp) + (uint64_t)(int64_t)r.cfa_off;
			if (cfa <= sp || cfa > stack_hi || cfa - sp < 8) {
				rc = FRAMETAB_BAD_STACK;
				break;
			}
			pc = load(cfa - 8);
			if (r.rbp_off) {
				uint64_t at = cfa + (uint64_t)(int64_t)r.rbp_off;
				if (at < lowest || at + 8 > stack_hi) {
					rc = FRAMETAB_BAD_STACK;
					break;
				}
				bp = load(at);
			}
			if (w.rec && f < CHAIN_MAX) {
				w.rec->frame[f].rbp_off = r.rbp_off;
				w.rec->frame[f].flags |= r.kind == ROW_RBP ? CHAIN_RBP : 0;
			}
			sp = cfa;
			exact = 0;
		}
		if (pc < 0x4000) { /* where libunwind's trace stops too */
			w.end = END_LOWPC;
			if (w.rec && n <= CHAIN_MAX)
				w.rec->frame[n].sp = sp;
			break;
		}
		ips[n++] = pc;
		w.end = END_OPEN;
	}
	atomic_thread_fence(memory_order_acquire);
	uint32_t now = atomic_load_explicit(&set.seq, memory_order_relaxed);
	if (cache) {
		if (now != seq)
			cache->seq = 1; /* what it learnt may be torn: empty it next time */
		uint64_t t = chain_end(cache, &w, n, rc >= 0 && now == seq && !w.norecord);
		if (token)
			*token = t;
		atomic_signal_fence(memory_order_seq_cst);
		cache->busy = 0;
	}
	if (now != seq)
		return FRAMETAB_CHANGED;
	return rc < 0 ? rc : (int)n;
}
