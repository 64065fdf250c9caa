/*
 * frametab_chain.h - a thread's cache for the table walk (frametab.c): the
 * rows its walks looked up, and the chains of its recent walks, which a walk
 * follows where its stack is theirs (frametab_chain.c says how). What the
 * walk and the chains share.
 */
#ifndef IPSCOPE_FRAMETAB_CHAIN_H
#define IPSCOPE_FRAMETAB_CHAIN_H

#include <stdint.h>

#define CACHE_SLOTS 1024u /* rows looked up, by pc */
#define CHAIN_MAX 128u /* frames a chain holds; a deeper walk's chain ends open there */
#define CHAINS 8u /* slots of chains, by the sp their walk started from */
#define WAYS 2u /* chains a slot keeps, the last walk's first */
#define CHAIN_RBP_MAX 8u /* frames whose CFA is rbp's a chain followed from its first frame checks quickly */

enum { CHAIN_EXACT = 1, CHAIN_RBP = 2 }; /* chain_frame.flags: pc exact; the step took the CFA from rbp */
enum chain_end { END_OPEN, END_ROW, END_LOWPC }; /* cap or CHAIN_MAX; ROW_END's row; a return address < 0x4000 */

struct chain_frame {
	uint64_t pc, sp, bp; /* the state the step from this frame starts from */
	int16_t rbp_off; /* where the step read the saved rbp, from the next frame's sp; 0: it did not */
	uint8_t flags, pad[5];
};

struct chain {
	uint64_t token; /* its walk's frames: a walk with other frames has another */
	uint32_t n; /* frames; after the last, the CFA of an END_LOWPC step (.sp) */
	uint32_t end; /* enum chain_end: what follows frame n - 1 */
	int walked; /* what its walk returned */
	int plain; /* at most CHAIN_RBP_MAX steps took the CFA from rbp: a walk from its first frame checks */
	uint32_t nrbp; /* those steps' frames' rbp, from the place of the last save before each (0: the walk's) */
	uint16_t rbp_frame[CHAIN_RBP_MAX];
	uint64_t rbp_at[CHAIN_RBP_MAX];
	struct chain_frame frame[CHAIN_MAX + 1];
};

struct frametab_cache {
	uint32_t seq; /* the set's sequence count the rows and chains were learnt under; 1: none */
	volatile uint32_t busy; /* a walk uses it (one that interrupts it goes without) */
	uint64_t stack_lo, stack_hi; /* the chains' stack bounds */
	uint64_t tokens; /* the last token given */
	uint8_t slot_chain[CHAINS][WAYS]; /* the chain[]s of each slot (by their first frame's sp) */
	uint8_t spare, last; /* the chain[] in no slot; the slot of the last walk's */
	struct cache_slot {
		uint64_t pc; /* 0: empty */
		int32_t cfa_off;
		int16_t rbp_off;
		uint8_t kind, pad;
	} slot[CACHE_SLOTS];
	struct chain chain[CHAINS * WAYS + 1];
};

/* One walk's use of the chains. */
struct walk {
	const struct chain *old; /* the chain it may follow; NULL: none */
	const struct chain *alt; /* its slot's other chain, from the same first state: tried where old's words differ */
	struct chain *rec; /* where it records its own; NULL: no cache */
	struct chain *spare; /* the cache's spare chain */
	uint32_t j; /* old's first frame whose sp is not below the walk's */
	uint32_t slot; /* its chain's, by its first sp */
	int mine, done, same, norecord; /* old is its slot's, met at its first frame; nothing (more) to look
					   * for in old; its frames all old's; a signal frame */
	uint32_t end; /* enum chain_end */
};

/* A word of the stack (the walk checked it is there); not a sanitizer's business when a test links this. */
__attribute__((no_sanitize_address)) static inline uint64_t load(uint64_t at)
{
	return *(const volatile uint64_t *)(uintptr_t)at;
}

/* Frame f's state, as the walk recorded it (its step's rule is added by the step). */
static inline void chain_record(struct walk *w, uint32_t f, uint64_t pc, uint64_t sp, uint64_t bp, int exact)
{
	if (w->rec && f < CHAIN_MAX)
		w->rec->frame[f] =
			(struct chain_frame){ pc, sp, bp, 0, (uint8_t)(exact ? CHAIN_EXACT : 0), { 0 } };
}

/* Whether a state of the walk is one of old's: then old's frame w->j is it. */
static inline int chain_has(struct walk *w, uint64_t pc, uint64_t sp, int exact)
{
	const struct chain *old = w->old;
	while (w->j < old->n && old->frame[w->j].sp < sp)
		w->j++;
	if (w->j == old->n)
		return 0;
	const struct chain_frame *e = &old->frame[w->j];
	return e->sp == sp && e->pc == pc && (e->flags & CHAIN_EXACT) == (exact ? CHAIN_EXACT : 0);
}

/* Start a walk from pc, sp with the cache (busy, its seq the set's): empties what an other seq or other
 * stack bounds learnt, picks the chain to follow and where to record. */
void chain_begin(struct frametab_cache *c, struct walk *w, uint32_t seq, uint64_t stack_lo, uint64_t stack_hi,
		 uint64_t pc, uint64_t sp);
/* Follow old from frame w->j, the state of the walk's frame *n - 1, copying its pcs into ips while the
 * stack holds the words it read. 1: the walk ended there (w->end says how); 0: it goes on the usual way
 * from *pc, *sp, *bp, *exact (the state of frame *n - 1, verified), looking for its states in old's
 * frames after that one. */
int chain_follow(struct walk *w, uint64_t *pc, uint64_t *sp, uint64_t *bp, int *exact, uint64_t lowest,
		 uint64_t *ips, uint32_t *n, uint32_t cap);
/* End the walk: ok, its n frames become a chain and their token is returned; else 0, nothing kept. */
uint64_t chain_end(struct frametab_cache *c, struct walk *w, uint32_t n, int ok);

#endif
