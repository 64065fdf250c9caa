/*
 * symbolize_index.c - the per-module address index and the string pool.
 *
 * DWARF gives nested address ranges (a subprogram, the calls inlined into it,
 * the calls inlined into those). Rather than walking that tree per address,
 * sym_index_finish flattens it once into disjoint segments, each naming the
 * innermost node that covers it; a lookup is then one binary search, and the
 * node's parent links give the inline chain.
 */
#include "symbolize_internal.h"
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- string pool ---- */

/* Strings hash with hashmap.h's hash_bytes. */

static char *pool_alloc(struct sym_strings *st, size_t n)
{
	if (st->nchunks == 0 || st->chunk_used + n > st->chunk_size) {
		size_t size = n > 65536 ? n : 65536;
		ALLOC_GROW(st->chunks, st->nchunks + 1, st->chunks_cap);
		st->chunks[st->nchunks++] = realloc_or_abort(NULL, size);
		st->chunk_size = size;
		st->chunk_used = 0;
	}
	char *p = st->chunks[st->nchunks - 1] + st->chunk_used;
	st->chunk_used += n;
	return p;
}

static void pool_rehash(struct sym_strings *st)
{
	size_t nslots = st->nslots ? st->nslots * 2 : 1024;
	const char **slots = realloc_or_abort(NULL, nslots * sizeof(*slots));
	memset(slots, 0, nslots * sizeof(*slots));
	for (size_t i = 0; i < st->nslots; i++) {
		const char *s = st->slots[i];
		if (s == NULL)
			continue;
		size_t j = hash_bytes(s, strlen(s)) & (nslots - 1);
		while (slots[j] != NULL)
			j = (j + 1) & (nslots - 1);
		slots[j] = s;
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = nslots;
}

const char *sym_intern_n(struct sym_strings *st, const char *s, size_t n)
{
	if (2 * (st->nused + 1) > st->nslots)
		pool_rehash(st);
	size_t j = hash_bytes(s, n) & (st->nslots - 1);
	for (; st->slots[j] != NULL; j = (j + 1) & (st->nslots - 1))
		if (strncmp(st->slots[j], s, n) == 0 && st->slots[j][n] == '\0')
			return st->slots[j];
	char *copy = pool_alloc(st, n + 1);
	memcpy(copy, s, n);
	copy[n] = '\0';
	st->slots[j] = copy;
	st->nused++;
	return copy;
}

const char *sym_intern(struct sym_strings *st, const char *s)
{
	return s ? sym_intern_n(st, s, strlen(s)) : NULL;
}

const char *sym_intern_printable(struct sym_strings *st, const char *s)
{
	size_t n = 0, bad = 0;
	for (; s[n]; n++)
		bad += (unsigned char)s[n] < 0x20 || s[n] == 0x7f;
	if (bad == 0)
		return sym_intern_n(st, s, n);
	char *copy = realloc_or_abort(NULL, n + 1);
	for (size_t i = 0; i <= n; i++)
		copy[i] = i < n && ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	const char *interned = sym_intern_n(st, copy, n);
	free(copy);
	return interned;
}

void sym_strings_free(struct sym_strings *st)
{
	for (size_t i = 0; i < st->nchunks; i++)
		free(st->chunks[i]);
	free(st->chunks);
	free(st->slots);
	memset(st, 0, sizeof(*st));
}

/* ---- building ---- */

/*
 * Map in the pages of a large fresh array before it is written: one system
 * call instead of a page fault per 4 KB, which on a virtual machine cost
 * more than filling the line rows (a few MB for libc) did. Only an advice:
 * on a kernel without MADV_POPULATE_WRITE (before 5.14) the faults come as
 * before.
 */
static void prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	if (n < ((size_t)256 << 10))
		return; /* small arrays live in the heap's pages already mapped */
	long size = sysconf(_SC_PAGESIZE);
	uintptr_t page = size > 0 ? (uintptr_t)size : 4096;
	uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t end = ((uintptr_t)p + n) & ~(page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
	(void)p, (void)n;
#endif
}

uint32_t sym_add_function(struct sym_index *ix, const char *linkage_name, const char *file,
			  uint32_t line)
{
	ALLOC_GROW(ix->functions, ix->nfunctions + 1, ix->functions_cap);
	ix->functions[ix->nfunctions] = (struct sym_function){
		.linkage_name = linkage_name, .file = file, .line = line};
	return ix->nfunctions++;
}

uint32_t sym_add_node(struct sym_index *ix, uint32_t function, uint32_t parent,
		      const char *call_file, uint32_t call_line)
{
	ALLOC_GROW(ix->nodes, ix->nnodes + 1, ix->nodes_cap);
	ix->nodes[ix->nnodes] = (struct sym_node){
		.function = function, .parent = parent, .call_file = call_file, .call_line = call_line};
	if (parent != SYM_NONE)
		ix->has_inlines = 1;
	return ix->nnodes++;
}

void sym_add_range(struct sym_index *ix, uint64_t lo, uint64_t hi, uint32_t node, uint32_t depth)
{
	/* Functions removed by --gc-sections keep their DWARF at address 0 (or a
	 * tombstone near ~0): nothing there is code of this module. */
	if (lo >= hi || lo == 0 || hi >= UINT64_MAX - 1)
		return;
	ALLOC_GROW(ix->ranges, ix->nranges + 1, ix->ranges_cap);
	ix->ranges[ix->nranges++] = (struct sym_range){.lo = lo, .hi = hi, .node = node, .depth = depth};
}

void sym_add_row(struct sym_index *ix, uint64_t addr, const char *file, uint32_t line)
{
	if (ix->nrows == ix->rows_cap) {
		size_t old_cap = ix->rows_cap;
		ALLOC_GROW(ix->rows, ix->nrows + 1, ix->rows_cap);
		prefault(ix->rows + old_cap, (ix->rows_cap - old_cap) * sizeof(*ix->rows));
	}
	ix->rows[ix->nrows] = (struct sym_row){
		.addr = addr, .file = file, .line = line, .order = (uint32_t)ix->nrows};
	ix->nrows++;
}

void sym_add_unit_range(struct sym_index *ix, uint64_t lo, uint64_t hi)
{
	if (lo >= hi || lo == 0 || hi >= UINT64_MAX - 1)
		return;
	ALLOC_GROW(ix->unit_ranges, ix->nunit_ranges + 1, ix->unit_ranges_cap);
	ix->unit_ranges[ix->nunit_ranges++] = (struct sym_range){.lo = lo, .hi = hi};
}

void sym_add_symbol(struct sym_index *ix, uint64_t addr, uint64_t size, uint64_t limit,
		    uint32_t function, uint32_t rank, int label)
{
	ALLOC_GROW(ix->symbols, ix->nsymbols + 1, ix->symbols_cap);
	ix->symbols[ix->nsymbols++] = (struct sym_symbol){.addr = addr, .size = size, .limit = limit,
							  .function = function, .rank = rank,
							  .label = label != 0};
}

/* ---- paged keys for the lookups ---- */

/*
 * Sorted keys plus, for each 2^shift-byte page of the address span, the index
 * of its first key: a search then only bisects the keys of one page, which
 * with the shift chosen for about one key per page is a handful of compares
 * in one cache line instead of 18 cache misses across 2 MB.
 */
static void keys_build(struct sym_keys *k, uint64_t *keys, size_t n)
{
	memset(k, 0, sizeof(*k));
	k->keys = keys;
	k->n = n;
	if (n == 0)
		return;
	k->base = keys[0];
	uint64_t span = keys[n - 1] - keys[0];
	unsigned shift = 0;
	while ((span >> shift) > n)
		shift++;
	k->shift = shift;
	k->npages = (size_t)(span >> shift) + 1;
	k->page_first = realloc_or_abort(NULL, (k->npages + 1) * sizeof(*k->page_first));
	prefault(k->page_first, (k->npages + 1) * sizeof(*k->page_first));
	size_t i = 0;
	for (size_t page = 0; page <= k->npages; page++) {
		uint64_t page_start = k->base + ((uint64_t)page << shift);
		while (i < n && keys[i] < page_start)
			i++;
		k->page_first[page] = (uint32_t)i;
	}
}

static void keys_free(struct sym_keys *k)
{
	free(k->keys);
	free(k->page_first);
	memset(k, 0, sizeof(*k));
}

/* How many keys are <= addr (so the last of them is keys[result - 1]). */
static size_t keys_count_at_or_below(const struct sym_keys *k, uint64_t addr)
{
	if (k->n == 0 || addr < k->base)
		return 0;
	uint64_t page = (addr - k->base) >> k->shift;
	if (page >= k->npages)
		return k->n;
	/* Keys before the page are <= addr, keys after it are > addr. */
	return u64_first_above(k->keys, k->page_first[page], k->page_first[page + 1], addr);
}

/* Build the key index of an array of structs by one uint64_t member. */
#define KEYS_OF(keys, array, count, member)                                  \
	do {                                                                 \
		uint64_t *keys_ = realloc_or_abort(NULL, ((count) + 1) * sizeof(*keys_)); \
		prefault(keys_, ((count) + 1) * sizeof(*keys_));                  \
		for (size_t i_ = 0; i_ < (count); i_++)                      \
			keys_[i_] = (array)[i_].member;                      \
		keys_build((keys), keys_, (count));                          \
	} while (0)

static void build_lookup_keys(struct sym_index *ix)
{
	KEYS_OF(&ix->segment_keys, ix->segments, ix->nsegments, lo);
	KEYS_OF(&ix->unit_keys, ix->unit_ranges, ix->nunit_ranges, lo);
	KEYS_OF(&ix->row_keys, ix->rows, ix->nrows, addr);
	KEYS_OF(&ix->symbol_keys, ix->symbols, ix->nsymbols, addr);
}

/* ---- sorting and flattening ---- */

/* qsort, which must not be handed an empty (NULL) array. */
static void sort_array(void *base, size_t n, size_t size, int (*compare)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, compare);
}

static int compare_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* Outer ranges first at equal start, so inner ones override them. */
static int compare_ranges(const void *pa, const void *pb)
{
	const struct sym_range *a = pa, *b = pb;
	int c = compare_u64(a->lo, b->lo);
	if (c == 0)
		c = (a->depth > b->depth) - (a->depth < b->depth);
	if (c == 0)
		c = compare_u64(b->hi, a->hi);
	if (c == 0)
		c = (a->node > b->node) - (a->node < b->node);
	return c;
}

/* At one address, a sequence's end comes before the next sequence's first
 * row, and rows of one sequence keep their order (the last one wins). */
static int compare_rows(const void *pa, const void *pb)
{
	const struct sym_row *a = pa, *b = pb;
	int c = compare_u64(a->addr, b->addr);
	if (c == 0)
		c = (a->file != NULL) - (b->file != NULL);
	if (c == 0)
		c = (a->order > b->order) - (a->order < b->order);
	return c;
}

/* Lower address first; among aliases the preferred binding, then the name
 * order, so the choice does not depend on qsort. */
static int compare_symbols(const void *pa, const void *pb)
{
	const struct sym_symbol *a = pa, *b = pb;
	int c = compare_u64(a->addr, b->addr);
	if (c == 0)
		c = (a->rank < b->rank) - (a->rank > b->rank);
	if (c == 0)
		c = (a->function > b->function) - (a->function < b->function);
	return c;
}

static void emit_segment(struct sym_index *ix, uint64_t lo, uint64_t hi, uint32_t node)
{
	if (lo >= hi)
		return;
	if (ix->nsegments > 0) {
		struct sym_range *last = &ix->segments[ix->nsegments - 1];
		if (last->node == node && last->hi == lo) {
			last->hi = hi;
			return;
		}
	}
	ix->segments[ix->nsegments++] = (struct sym_range){.lo = lo, .hi = hi, .node = node};
}

/*
 * Sweep the ranges in start order with a stack of the ones still open: the
 * top of the stack is the innermost range covering the current position.
 * Each range yields at most two segments per push/pop, so 2n+1 is enough.
 * Badly nested input (a child sticking out of its parent) is clipped, never
 * read out of bounds.
 */
static void flatten_ranges(struct sym_index *ix)
{
	sort_array(ix->ranges, ix->nranges, sizeof(*ix->ranges), compare_ranges);
	ix->segments = realloc_or_abort(NULL, (2 * ix->nranges + 1) * sizeof(*ix->segments));
	ix->nsegments = 0;
	struct sym_range *stack = realloc_or_abort(NULL, (ix->nranges + 1) * sizeof(*stack));
	size_t depth = 0;
	uint64_t pos = 0;
	for (size_t i = 0; i <= ix->nranges; i++) {
		const struct sym_range *r = i < ix->nranges ? &ix->ranges[i] : NULL;
		/* Close every open range that ends before r starts. */
		while (depth > 0 && (r == NULL || stack[depth - 1].hi <= r->lo)) {
			struct sym_range *top = &stack[--depth];
			if (pos < top->hi) {
				emit_segment(ix, pos, top->hi, top->node);
				pos = top->hi;
			}
		}
		if (r == NULL)
			break;
		if (depth > 0 && pos < r->lo)
			emit_segment(ix, pos, r->lo, stack[depth - 1].node);
		if (pos < r->lo)
			pos = r->lo;
		stack[depth++] = *r;
	}
	free(stack);
	free(ix->ranges);
	ix->ranges = NULL;
	ix->nranges = ix->ranges_cap = 0;
}

/* Sort the compile units' ranges and merge the ones that touch. */
static void merge_unit_ranges(struct sym_index *ix)
{
	sort_array(ix->unit_ranges, ix->nunit_ranges, sizeof(*ix->unit_ranges), compare_ranges);
	size_t kept = 0;
	for (size_t i = 0; i < ix->nunit_ranges; i++) {
		struct sym_range r = ix->unit_ranges[i];
		if (kept > 0 && r.lo <= ix->unit_ranges[kept - 1].hi) {
			if (r.hi > ix->unit_ranges[kept - 1].hi)
				ix->unit_ranges[kept - 1].hi = r.hi;
		} else {
			ix->unit_ranges[kept++] = r;
		}
	}
	ix->nunit_ranges = kept;
}

struct row_run {
	size_t first, count;
};

static int compare_runs(const void *pa, const void *pb, void *rows)
{
	const struct row_run *a = pa, *b = pb;
	return compare_rows(&((struct sym_row *)rows)[a->first], &((struct sym_row *)rows)[b->first]);
}

/*
 * Line rows arrive as sequences, each already in address order and ended by
 * an end marker: sorting the sequences by their first address and laying
 * them end to end is enough when they do not overlap, and costs far less
 * than sorting 300 000 rows. Overlapping sequences (rare) get a full sort.
 */
static void sort_rows(struct sym_index *ix)
{
	struct row_run *runs = NULL;
	size_t nruns = 0, cap = 0, start = 0;
	for (size_t i = 0; i < ix->nrows; i++) {
		if (ix->rows[i].file != NULL && i + 1 < ix->nrows)
			continue;
		ALLOC_GROW(runs, nruns + 1, cap);
		runs[nruns++] = (struct row_run){.first = start, .count = i + 1 - start};
		start = i + 1;
	}
	if (nruns > 1)
		qsort_r(runs, nruns, sizeof(*runs), compare_runs, ix->rows);
	int disjoint = 1;
	for (size_t r = 0; r + 1 < nruns && disjoint; r++) {
		const struct sym_row *last = &ix->rows[runs[r].first + runs[r].count - 1];
		disjoint = compare_rows(last, &ix->rows[runs[r + 1].first]) < 0;
	}
	for (size_t r = 0; r < nruns && disjoint; r++)
		for (size_t i = 1; i < runs[r].count && disjoint; i++)
			disjoint = ix->rows[runs[r].first + i - 1].addr <= ix->rows[runs[r].first + i].addr;
	/* Sequences already in place (the usual case) need no copy. */
	int in_place = 1;
	for (size_t r = 0; r < nruns && in_place; r++)
		in_place = r == 0 || runs[r].first == runs[r - 1].first + runs[r - 1].count;
	if (!disjoint) {
		sort_array(ix->rows, ix->nrows, sizeof(*ix->rows), compare_rows);
	} else if (!in_place) {
		struct sym_row *sorted = realloc_or_abort(NULL, ix->nrows * sizeof(*sorted));
		prefault(sorted, ix->nrows * sizeof(*sorted));
		size_t n = 0;
		for (size_t r = 0; r < nruns; r++, n += runs[r - 1].count)
			memcpy(&sorted[n], &ix->rows[runs[r].first], runs[r].count * sizeof(*sorted));
		free(ix->rows);
		ix->rows = sorted;
		ix->rows_cap = ix->nrows;
	}
	free(runs);
}

/*
 * Internal aliases of public names: at an address with several names, every
 * other name that occurs at that address only maps to the preferred one
 * (the first after sorting). A static name used at two addresses maps to
 * nothing: it could be either function.
 */
static void map_public_names(struct sym_index *ix)
{
	/* How many addresses each name is at (sorted: one address, one group). */
	struct hashmap count, group_of;
	hashmap_init(&count, ix->nsymbols);
	hashmap_init(&group_of, ix->nsymbols);
	uint32_t group = 0;
	for (size_t i = 0; i < ix->nsymbols; i++) {
		group += i > 0 && ix->symbols[i - 1].addr != ix->symbols[i].addr;
		uint64_t key = (uint64_t)(uintptr_t)ix->functions[ix->symbols[i].function].linkage_name;
		uint32_t *last = hashmap_slot(&group_of, key);
		if (*last == group)
			continue;
		*last = group;
		uint32_t *n = hashmap_slot(&count, key);
		*n = *n == HASHMAP_NONE ? 1 : *n + 1;
	}
	hashmap_free(&group_of);
	hashmap_init(&ix->public_names, 64);
	for (size_t first = 0, i; first < ix->nsymbols; first = i) {
		uint32_t best = ix->symbols[first].function;
		const char *best_name = ix->functions[best].linkage_name;
		for (i = first + 1; i < ix->nsymbols && ix->symbols[i].addr == ix->symbols[first].addr; i++) {
			const char *name = ix->functions[ix->symbols[i].function].linkage_name;
			if (name != best_name && hashmap_get(&count, (uint64_t)(uintptr_t)name) == 1)
				*hashmap_slot(&ix->public_names, (uint64_t)(uintptr_t)name) = best;
		}
	}
	hashmap_free(&count);
}

/*
 * One symbol per address (the preferred alias, its largest size), without
 * the labels inside a sized function, each with its extent: a sized symbol
 * ends at its size, an unsized one at the next symbol, neither past its
 * section. An address is never given to a function that ended before it.
 */
static void finish_symbols(struct sym_index *ix)
{
	sort_array(ix->symbols, ix->nsymbols, sizeof(*ix->symbols), compare_symbols);
	map_public_names(ix);
	size_t kept = 0;
	uint64_t covered = 0; /* end of the sized symbols so far */
	for (size_t i = 0; i < ix->nsymbols; i++) {
		struct sym_symbol *sym = &ix->symbols[i];
		if (kept > 0 && ix->symbols[kept - 1].addr == sym->addr) {
			struct sym_symbol *k = &ix->symbols[kept - 1];
			if (sym->size > k->size)
				k->size = sym->size;
			k->label &= sym->label;
		} else if (!(sym->label && sym->size == 0 && sym->addr < covered)) {
			ix->symbols[kept++] = *sym;
		}
		if (sym->size > 0 && sym->addr + sym->size > covered)
			covered = sym->addr + sym->size;
	}
	ix->nsymbols = kept;
	for (size_t i = 0; i < kept; i++) {
		struct sym_symbol *sym = &ix->symbols[i];
		uint64_t end = sym->size > 0 ? sym->addr + sym->size
					     : i + 1 < kept ? ix->symbols[i + 1].addr : sym->limit;
		if (end < sym->limit)
			sym->limit = end;
	}
}

void sym_index_finish(struct sym_index *ix)
{
	flatten_ranges(ix);
	merge_unit_ranges(ix);
	sort_rows(ix);
	finish_symbols(ix);
	build_lookup_keys(ix);
}

void sym_index_free(struct sym_index *ix)
{
	free(ix->functions);
	free(ix->nodes);
	free(ix->ranges);
	free(ix->segments);
	free(ix->unit_ranges);
	free(ix->rows);
	keys_free(&ix->segment_keys);
	keys_free(&ix->unit_keys);
	keys_free(&ix->row_keys);
	keys_free(&ix->symbol_keys);
	free(ix->symbols);
	if (ix->public_names.slots != NULL)
		hashmap_free(&ix->public_names);
	memset(ix, 0, sizeof(*ix));
}

/* ---- lookups ---- */

uint32_t sym_find_node(const struct sym_index *ix, uint64_t addr)
{
	size_t n = keys_count_at_or_below(&ix->segment_keys, addr);
	if (n == 0 || addr >= ix->segments[n - 1].hi)
		return SYM_NONE;
	return ix->segments[n - 1].node;
}

const struct sym_row *sym_find_row(const struct sym_index *ix, uint64_t addr)
{
	size_t n = keys_count_at_or_below(&ix->unit_keys, addr);
	if (n == 0 || addr >= ix->unit_ranges[n - 1].hi)
		return NULL;
	n = keys_count_at_or_below(&ix->row_keys, addr);
	if (n == 0 || ix->rows[n - 1].file == NULL)
		return NULL;
	return &ix->rows[n - 1];
}

const struct sym_symbol *sym_find_symbol(const struct sym_index *ix, uint64_t addr)
{
	size_t n = keys_count_at_or_below(&ix->symbol_keys, addr);
	if (n == 0)
		return NULL;
	/* The nearest symbol below, if its extent reaches addr (finish_symbols). */
	const struct sym_symbol *sym = &ix->symbols[n - 1];
	return addr < sym->limit ? sym : NULL;
}

uint32_t sym_find_symbol_function(const struct sym_index *ix, uint64_t addr)
{
	const struct sym_symbol *sym = sym_find_symbol(ix, addr);
	return sym ? sym->function : SYM_NONE;
}

uint32_t sym_find_public_name(const struct sym_index *ix, const char *name)
{
	if (ix->public_names.slots == NULL || name == NULL)
		return SYM_NONE;
	uint32_t fn = hashmap_get(&ix->public_names, (uint64_t)(uintptr_t)name);
	return fn == HASHMAP_NONE ? SYM_NONE : fn;
}
