/*
 * frametab_chain.c - a thread's cache for the table walk (frametab.c), and
 * the chains in it: the walk follows one of its thread's recent walks where
 * its stack is that walk's, with a load and a compare per frame instead of a
 * row lookup.
 *
 * The rows of recent lookups (frametab.c's lookup): a slot is the lookup pc
 * and its row, indexed by the pc's low bits, so a hit is a load and a
 * compare. A thread never runs two walks at once (the agent's handler does
 * not unwind inside a hook, nor a hook inside the handler), and busy makes
 * sure of it: a walk that finds the cache busy goes without it. The set's
 * sequence count it was filled under empties it after a rescan.
 *
 * A chain is a walk as it went: each frame's state (pc, sp = the CFA below
 * it, rbp, whether pc is exact), its step's rule (CFA from rbp or rsp, where
 * rbp was saved) and how the walk ended. A state and the rows fix what the
 * walk reads next, so once a new walk reaches a state of a chain (equal pc,
 * sp and exactness; rbp only matters where a rule takes the CFA from it, and
 * is compared there), the rest of the walk is the chain's as long as the
 * stack holds the words the chain read: each step is a load of the return
 * address and a compare with the chain's next pc (and a load of the saved
 * rbp, and the check of its place against this walk's lowest address), no
 * row lookup. At the first word that differs (two callers with equal frame
 * sizes give equal CFAs, and differ in a return address deeper down) the
 * walk goes on the usual way from the state it verified, so it gives exactly
 * the frames the full walk gives, and its end (ROW_END's row, a return
 * address below 0x4000, or the cap) is checked as the walk would. A chain
 * holds no signal frame (a walk through one keeps no chain).
 *
 * Which chain. A thread's allocations come from a few call paths of
 * different depths (lua5.4's binary trees: a table, a closure, a string;
 * their stacks share main ... luaV_execute and differ in the last frames),
 * so the cache keeps WAYS chains in each of CHAINS slots, by the sp their
 * walk started from, the last walk's first; a walk whose first state is a
 * chain of its slot follows it from its first frame, keeping it as it goes
 * (a step is then its return address alone: the same first sp, the same
 * lowest address; and the rbp of the few frames whose CFA is rbp's), and
 * where a word differs it goes on with the slot's other chain when its
 * frames up to there are the same (two paths with one first sp, as lua's
 * allocations often take). Else it looks for its states in the last walk's
 * chain as it goes (sps only climb: a merge, a compare a frame), copying
 * what it follows into the spare chain, which then takes its slot. How many
 * walks a chain answers, with the last chain alone and with the slots, is
 * measured on lua5.4 binary_trees (bench/README.md).
 *
 * Tokens. A walk whose frames are all those of the chain it followed from
 * its first frame keeps that chain's token; any other gets a new one: equal
 * tokens (unique across the process's caches) mean equal frames, which
 * capture.c uses to recall the stack id without hashing. A rescan, other
 * stack bounds or a walk that failed drop what they could have made stale.
 *
 * Memory: one mapping per thread, 16 KiB of rows and 17 chains of 4 KiB.
 */
#include "frametab.h"
#include "frametab_chain.h"

#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

static _Atomic uint64_t cache_generation = 1; /* the high bits of each new cache's tokens */

struct frametab_cache *frametab_cache_new(void)
{
	void *m = mmap(NULL, sizeof(struct frametab_cache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		       0);
	if (m == MAP_FAILED)
		return NULL;
	struct frametab_cache *c = m;
	c->seq = 1; /* never a published count's value at rest (those are even) */
	/* Tokens of different caches never meet: a stack table that outlived its thread's cache (or a
	 * cache made anew) cannot take a new cache's token for an old one's. */
	c->tokens = atomic_fetch_add_explicit(&cache_generation, 1, memory_order_relaxed) << 40;
	for (uint32_t i = 0; i < CHAINS; i++)
		for (uint32_t k = 0; k < WAYS; k++)
			c->slot_chain[i][k] = (uint8_t)(i * WAYS + k);
	c->spare = CHAINS * WAYS;
	return c;
}

void frametab_cache_free(struct frametab_cache *c)
{
	if (c)
		munmap(c, sizeof *c);
}

static void forget_chains(struct frametab_cache *c)
{
	for (uint32_t i = 0; i <= CHAINS * WAYS; i++)
		c->chain[i].n = 0;
}

/* Whether a walk from pc, sp starts in the state chain c starts from. */
static int starts_at(const struct chain *c, uint64_t pc, uint64_t sp)
{
	return c->n && c->frame[0].sp == sp && c->frame[0].pc == pc && (c->frame[0].flags & CHAIN_EXACT);
}

/* Whether the first p + 1 frames of a and b are the same states and steps (rbp too where a rule reads it). */
static int same_prefix(const struct chain *a, const struct chain *b, uint32_t p)
{
	if (p >= a->n || p >= b->n)
		return 0;
	for (uint32_t k = 0; k <= p; k++) {
		const struct chain_frame *x = &a->frame[k], *y = &b->frame[k];
		if (x->pc != y->pc || x->sp != y->sp || x->flags != y->flags || x->rbp_off != y->rbp_off ||
		    ((x->flags & CHAIN_RBP) && x->bp != y->bp))
			return 0;
	}
	return 1;
}

void chain_begin(struct frametab_cache *c, struct walk *w, uint32_t seq, uint64_t stack_lo, uint64_t stack_hi,
		 uint64_t pc, uint64_t sp)
{
	if (c->seq != seq) {
		memset(c->slot, 0, sizeof c->slot);
		c->seq = seq;
		forget_chains(c);
	}
	if (c->stack_lo != stack_lo || c->stack_hi != stack_hi) {
		c->stack_lo = stack_lo;
		c->stack_hi = stack_hi;
		forget_chains(c);
	}
	uint32_t h = (uint32_t)(((sp >> 4) * 0x9e3779b97f4a7c15ull) >> 61); /* CHAINS = 8 */
	const struct chain *way0 = &c->chain[c->slot_chain[h][0]], *way1 = &c->chain[c->slot_chain[h][1]];
	int mine0 = starts_at(way0, pc, sp), mine1 = starts_at(way1, pc, sp);
	w->slot = h;
	w->mine = mine0 || mine1;
	w->old = mine0 ? way0 : mine1 ? way1 : &c->chain[c->slot_chain[c->last][0]];
	w->alt = mine0 && mine1 ? way1 : NULL;
	if (w->mine) /* its lines, at once rather than a miss at a time */
		for (uint32_t i = 0; i < w->old->n; i += 2)
			__builtin_prefetch(&w->old->frame[i]);
	if (!w->old->n)
		w->old = NULL;
	w->rec = w->spare = &c->chain[c->spare];
	w->j = 0;
	w->done = !w->old;
}

int chain_follow(struct walk *w, uint64_t *pc, uint64_t *sp, uint64_t *bp, int *exact, uint64_t lowest,
		 uint64_t *ips, uint32_t *n, uint32_t cap)
{
	const struct chain *old = w->old;
	struct chain *rec = w->rec;
	uint32_t f = *n - 1, p = w->j, last = old->n - 1;
	if (w->mine) {
		/* Its slot's chain from the first frame on: the walk keeps it as it follows it. */
		w->mine = 0;
		w->same = 1;
		w->rec = rec = (struct chain *)old;
	} else if (f < CHAIN_MAX) {
		rec->frame[f] = old->frame[p]; /* and what it follows is copied after it */
	}
	/* rbp is loaded where a rule needs it (or the usual walk goes on): where the last step read it from. */
	uint64_t bp_at = 0, bp_was = *bp;
	uint32_t m = *n;
	for (;;) {
		if (rec == old && old->plain) {
			/* Its own chain from its first state: the same lowest address, so every place a step read rbp
			 * from passes the check again, and where a rule takes the CFA from rbp, rbp is the word its
			 * last save left (or the walk's own): a step is its return address, and such a frame's rbp. */
			const struct chain_frame *fr = old->frame;
			uint32_t stop = last < p + (cap - m) ? last : p + (cap - m);
			for (uint32_t r = 0;; r++) {
				uint32_t to = r < old->nrbp && old->rbp_frame[r] < stop ? old->rbp_frame[r] : stop;
				while (p < to && load(fr[p + 1].sp - 8) == fr[p + 1].pc)
					ips[m++] = fr[++p].pc;
				if (p < to || p == stop || (old->rbp_at[r] ? load(old->rbp_at[r]) : bp_was) != fr[p].bp)
					break;
			}
			for (uint32_t k = p; k-- > 0;)
				if (fr[k].rbp_off) {
					bp_at = fr[k + 1].sp + (uint64_t)(int64_t)fr[k].rbp_off;
					break;
				}
		}
		for (;; p++) {
			const struct chain_frame *e = &old->frame[p];
			if (m >= cap) {
				w->end = END_OPEN;
				*n = m;
				return 1;
			}
			if (p == last && old->end == END_ROW) {
				w->end = END_ROW;
				*n = m;
				return 1;
			}
			if (p == last && old->end == END_OPEN)
				break;
			if ((e->flags & CHAIN_RBP) && (bp_at ? load(bp_at) : bp_was) != e->bp)
				break;
			const struct chain_frame *next = e + 1;
			uint64_t ra = load(next->sp - 8), at = bp_at;
			if (e->rbp_off) {
				at = next->sp + (uint64_t)(int64_t)e->rbp_off;
				if (at < lowest) /* the usual step says why */
					break;
			}
			if (p == last) { /* END_LOWPC: next is the CFA alone */
				if (ra >= 0x4000)
					break;
				w->end = END_LOWPC;
				if (rec != old && m <= CHAIN_MAX)
					rec->frame[m].sp = next->sp;
				*n = m;
				return 1;
			}
			if (ra != next->pc)
				break;
			bp_at = at;
			if (rec != old && m < CHAIN_MAX)
				rec->frame[m] = *next;
			ips[m++] = ra;
		}
		/* Its slot's other chain, the same up to here, may be the one whose words these are. */
		if (rec != old || !w->alt || !same_prefix(w->alt, old, p))
			break;
		w->old = old = w->alt;
		w->alt = NULL;
		w->rec = rec = (struct chain *)old;
		last = old->n - 1;
	}
	/* The state of the frame at p, verified: the usual walk goes on from there, and meets old again where
	 * the stacks join again (two callers of one function, its caller the same). */
	w->same = 0;
	if (rec == old) { /* what it kept so far is old's (bp aside, where no rule reads it): old stays */
		memcpy(w->spare->frame, old->frame, (p + 1) * sizeof *old->frame);
		w->rec = w->spare;
	}
	w->j = p + 1;
	w->done = 0;
	*n = m;
	*pc = old->frame[p].pc;
	*sp = old->frame[p].sp;
	*bp = bp_at ? load(bp_at) : bp_was;
	*exact = old->frame[p].flags & CHAIN_EXACT;
	return 0;
}

uint64_t chain_end(struct frametab_cache *c, struct walk *w, uint32_t n, int ok)
{
	struct chain *rec = w->rec;
	if (!ok) {
		rec->n = 0;
		return 0;
	}
	int same = w->same && rec->n && rec->walked == (int)n;
	rec->n = n < CHAIN_MAX ? n : CHAIN_MAX;
	rec->end = n <= CHAIN_MAX ? w->end : END_OPEN;
	rec->walked = (int)n;
	if (!same) {
		rec->token = ++c->tokens;
		/* Where its frames whose CFA came from rbp had rbp from: the place of the last save before each. */
		uint64_t at = 0;
		rec->nrbp = 0;
		rec->plain = 1;
		for (uint32_t i = 0; i < rec->n && rec->plain; i++) {
			if (rec->frame[i].flags & CHAIN_RBP) {
				rec->plain = rec->nrbp < CHAIN_RBP_MAX;
				if (rec->plain) {
					rec->rbp_frame[rec->nrbp] = (uint16_t)i;
					rec->rbp_at[rec->nrbp++] = at;
				}
			}
			if (rec->frame[i].rbp_off && i + 1 < rec->n)
				at = rec->frame[i + 1].sp + (uint64_t)(int64_t)rec->frame[i].rbp_off;
		}
	}
	uint8_t r = (uint8_t)(rec - c->chain), *way = c->slot_chain[w->slot];
	if (r != way[0]) { /* it goes first in its slot; the spare, when it was that, takes the slot's last */
		if (r == c->spare)
			c->spare = way[WAYS - 1];
		for (uint32_t k = WAYS - 1; k > 0; k--)
			way[k] = way[k - 1];
		way[0] = r;
	}
	c->last = (uint8_t)w->slot;
	return rec->token;
}
