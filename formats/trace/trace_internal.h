/*
 * trace_internal.h - byte layout constants and little-endian load/store
 * helpers shared by trace_writer.c and trace_reader.c. Private to formats/:
 * the layout itself is specified in formats/trace/TRACE_FORMAT.md, and every number
 * here must match that document.
 */
#ifndef IPSCOPE_TRACE_INTERNAL_H
#define IPSCOPE_TRACE_INTERNAL_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* File header: magic, u16 major, u16 minor, u32 header size (readers skip
 * whatever lies between the fields they know and header size). */
#define TRACE_MAGIC "IPSCOPE\x1a"
#define TRACE_MAGIC_LEN 8
#define TRACE_FILE_HEADER_SIZE 16

/* Record header: u16 type, u16 flags, u32 payload length. */
#define TRACE_RECORD_HEADER_SIZE 8
/* A reader that does not know the record's type must fail rather than skip it. */
#define TRACE_RECORD_FLAG_REQUIRED 1u
/* No record is longer than this: it bounds a reader's memory on corrupt input. */
#define TRACE_RECORD_MAX_PAYLOAD (64u << 20)

/* Fixed-size array entries as version 1.0 writes them. Readers accept larger
 * entry sizes (later minor versions append fields) and ignore the extra bytes. */
#define TRACE_SAMPLE_ENTRY_SIZE_1_0 28 /* u64 time, u32 pid, tid, stack_id, weight, state */
#define TRACE_SAMPLE_ENTRY_SIZE 32  /* 1.4: and i32 syscall */
#define TRACE_SEGMENT_ENTRY_SIZE 28 /* u64 vaddr, memsz, file_offset, u32 flags */

/* An ALLOCS entry: at most 7 varints of up to 10 bytes (1.3). */
#define TRACE_ALLOCS_MAX_ENTRY 70u
#define TRACE_ALLOCS_MIN_ENTRY 5u
/* An ALLOCS_PACKED entry's fewest bytes (a NONE entry: op, seq, tid and
 * time, one byte each). */
#define TRACE_ALLOCS_PACKED_MIN_ENTRY 4u

/* A process's live blocks for ALLOCS_PACKED's free references
 * (trace_heap_refs.c): writer address -> ordinal, reader ordinal + 1 -> address. */
struct trace_heap_slot {
	uint64_t key; /* 0: empty */
	uint64_t val;
};
struct trace_heap_table {
	struct trace_heap_slot *slots; /* key and value side by side: one cache line per look-up */
	uint64_t count;
	unsigned bits; /* 1 << bits slots */
};
/* ALLOCS_IDS: a new block's identity is this bit, the process's index in the
 * trace (from 0, in the order of their first allocation record) above bit 40,
 * and its allocation's ordinal below (no user-space address has bit 63, so
 * identities and 1.3's addresses never meet, nor two processes' identities). */
#define TRACE_HEAP_NEW_BLOCK (1ull << 63)
#define TRACE_HEAP_ORDINAL_BITS 40
#define TRACE_HEAP_FREED 64u /* an allocation's address may name one of the last this many frees' */
struct trace_heap_proc {
	uint32_t pid;
	uint32_t index; /* in the trace's order of processes */
	uint64_t next_ordinal; /* allocation entries of the process so far */
	struct trace_heap_table live; /* writer: address -> ordinal; reader: ordinal + 1 -> address, past the window */
	uint64_t *window; /* reader: the live address of ordinal o in [next - 2^window_bits, next) at o % 2^window_bits; 0: none */
	unsigned window_bits;
	uint64_t window_counted; /* reader: the window was found sparse at this ordinal: not counted again for a lap */
	uint64_t freed[TRACE_HEAP_FREED]; /* the latest frees' addresses, slot nfreed % 64 next; 0: used */
	uint64_t nfreed;
};
/* An allocation's reference to a recent free of the same address: j (1: the
 * latest free) or 0 (none: its address is written); the slot is used up. */
static inline unsigned trace_heap_freed_take(struct trace_heap_proc *p, uint64_t address)
{
	for (unsigned j = 1; address && j <= TRACE_HEAP_FREED && j <= p->nfreed; j++)
		if (p->freed[(p->nfreed - j) % TRACE_HEAP_FREED] == address) {
			p->freed[(p->nfreed - j) % TRACE_HEAP_FREED] = 0;
			return j;
		}
	return 0;
}
static inline void trace_heap_freed_push(struct trace_heap_proc *p, uint64_t address)
{
	if (address)
		p->freed[p->nfreed++ % TRACE_HEAP_FREED] = address;
}
struct trace_heap_procs {
	struct trace_heap_proc *procs;
	uint32_t count, cap;
	uint32_t last; /* procs[last] was asked for last (a process tree's records come in runs) */
};
/* The slot a key's probe starts at. */
static inline uint64_t trace_heap_table_home(const struct trace_heap_table *t, uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> (64 - t->bits);
}
/* Bring a key's first slot into the cache ahead of its look-up (a table of many live blocks
 * misses the cache at nearly every event). */
static inline void trace_heap_table_prefetch(const struct trace_heap_table *t, uint64_t key)
{
	if (t->slots)
		__builtin_prefetch(&t->slots[trace_heap_table_home(t, key)], 1);
}
/* Set key (nonzero) to val; 0, or -1 with errno ENOMEM. */
int trace_heap_table_put(struct trace_heap_table *t, uint64_t key, uint64_t val);
/* Set key (nonzero) to val in one probe: 1 and *old if it was there, 0 if not; -1 with ENOMEM. */
int trace_heap_table_swap(struct trace_heap_table *t, uint64_t key, uint64_t val, uint64_t *old);
/* 1 and *val if key was there (and is now removed), else 0. */
int trace_heap_table_take(struct trace_heap_table *t, uint64_t key, uint64_t *val);
/* Reader: the process's next allocation entry (ordinal next_ordinal, which is
 * then counted) lives at address (0: it is not live), past the common case
 * of a free slot in the window, which the reader's decoding loop takes
 * itself (trace_allocs.c: window_add); 0, or -1 with ENOMEM. */
int trace_heap_ordinal_add_slow(struct trace_heap_proc *p, uint64_t address);
/* The state of process pid, made empty the first time; NULL with ENOMEM. */
struct trace_heap_proc *trace_heap_proc_get(struct trace_heap_procs *ps, uint32_t pid);
/* Free every table; ps is empty afterwards. */
void trace_heap_procs_free(struct trace_heap_procs *ps);

/* Samples per SAMPLES record at most; a batch is also cut by every flush. */
#define TRACE_SAMPLES_PER_BATCH 4096u

/* The writer compresses and writes out every this many raw bytes, so that a
 * trace cut by a crash loses at most this much plus what collect still held. */
#define TRACE_WRITER_AUTOFLUSH (64u << 10)

/* memcpy keeps these legal on unaligned pointers; compilers turn each into a
 * single move (plus a bswap on big-endian hosts). */
static inline void trace_put_u16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof v);
}

static inline void trace_put_u32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof v);
}

static inline void trace_put_u64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof v);
}

static inline uint16_t trace_get_u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof v);
	return le16toh(v);
}

static inline uint32_t trace_get_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return le32toh(v);
}

static inline uint64_t trace_get_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return le64toh(v);
}

#endif
