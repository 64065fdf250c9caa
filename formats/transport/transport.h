/*
 * transport.h - how the in-process agent hands records to the collect process.
 *
 * collect creates one shared memory file (a sealed memfd that can grow but
 * never shrink). It holds a one-page header followed by chunks; each chunk is
 * a page of ring descriptors and TRANSPORT_RINGS_PER_CHUNK single-producer,
 * single-consumer byte rings. Each thread of the program claims a ring and
 * is its only writer; collect is the only reader of every ring. A record
 * becomes visible when the producer publishes its new head with a release
 * store, so whatever the program recorded is in collect's hands the moment it
 * is written: a SIGKILLed or crashed program loses nothing but the record it
 * was writing.
 *
 * The memory starts with one chunk and grows with the number of threads:
 * collect keeps a margin of free rings (transport_chunks_wanted), extends the
 * file and publishes the new chunk count; an agent that finds every ring taken
 * maps the chunks published since, or wakes collect (TRANSPORT_WAKE_SIGNAL),
 * which frees the rings of ended threads and grows at once; a thread that
 * starts or ends then waits for it (a futex on rings_changed, which whoever
 * frees or adds rings bumps: transport_rings_changed), a sample in the
 * meantime is counted lost. Only collect changes the file's size, so a file-size limit of
 * the program can never send it SIGXFSZ.
 *
 * The program inherits no descriptor of it: the agent opens collect's own
 * descriptor through /proc/COLLECT_PID/fd/N (TRANSPORT_ENV), maps what it
 * needs and closes it again at once.
 *
 * Rings never block the signal handler: a sample that does not fit is dropped
 * and counted in the ring's `lost` counter, which collect reports.
 */
#ifndef IPSCOPE_TRANSPORT_H
#define IPSCOPE_TRANSPORT_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TRANSPORT_MAGIC 0x33505049u /* "IPP3" */
#define TRANSPORT_HEADER_BYTES 4096u
#define TRANSPORT_RING_BYTES (256u << 10) /* power of two; pages are only touched when used */
#define TRANSPORT_RINGS_PER_CHUNK 32u /* power of two */
#define TRANSPORT_MAX_CHUNKS 512u /* 16384 rings (4 GiB): more concurrent threads are counted lost */
#define TRANSPORT_PREEMPTED_NS 1000000u
#define TRANSPORT_WAKE_SIGNAL SIGURG /* agent -> collect: rings needed now (ignored by default) */
#define TRANSPORT_ENV "IPSCOPE_SHM" /* "COLLECT_PID:FD[:allocs]": the memfd as collect holds it */
/* TRANSPORT_ENV's tail when allocations are recorded: an agent reads it before it attaches (it starts at
 * the first allocation then, which may come before its constructor). */
#define TRANSPORT_ENV_ALLOCS ":allocs"
#define TRANSPORT_ENV_PID "IPSCOPE_PID" /* --no-follow: the one process the agent may run in */

/* What the agent records (bits of transport_header.mode): CPU samples, or wall-clock samples of every
 * thread (WALL, instead of CPU), and allocations. */
enum transport_mode { TRANSPORT_MODE_CPU = 1, TRANSPORT_MODE_ALLOCS = 2, TRANSPORT_MODE_WALL = 4 };
/* How allocations are chosen (transport_header.alloc_scheme). */
enum transport_alloc_scheme {
	TRANSPORT_ALLOC_ALL = 0, /* every allocation */
	TRANSPORT_ALLOC_RATE = 1, /* each with probability alloc_threshold / 2^64 */
	TRANSPORT_ALLOC_BYTES = 2, /* each byte with probability 1 / alloc_mean_bytes */
};
#define TRANSPORT_ALLOC_RING_BYTES (4u << 20) /* rings of an allocation run: ~87000 events */
enum transport_source {
	TRANSPORT_SOURCE_NONE = 0,
	TRANSPORT_SOURCE_PERF = 1, /* perf task-clock for user mode, CPU-time timer for kernel mode */
	TRANSPORT_SOURCE_TIMER = 2, /* CPU-time timers only */
};
enum transport_agent_state { AGENT_NOT_STARTED = 0, AGENT_RUNNING = 1, AGENT_FAILED = 2 };

/* Written by collect before the program starts; agent_* fields by the agent. */
struct transport_header {
	uint32_t magic;
	uint32_t ring_bytes;
	uint32_t rings_per_chunk;
	uint32_t max_chunks;
	uint32_t mode;
	uint32_t max_frames;
	uint64_t interval_ns;
	uint32_t pid; /* the first process: it alone sets the agent_* fields below */
	uint32_t requested_source; /* enum transport_source; NONE: the best available */
	uint32_t requested_signal; /* 0: the agent picks a free real-time signal */
	_Atomic uint32_t agent_state;
	uint32_t source; /* enum transport_source, set before agent_state = RUNNING */
	uint32_t signal; /* the sampling signal, set before agent_state = RUNNING */
	/* The program installed its own handler for the sampling signal (its
	 * number): sampling stopped there. */
	_Atomic uint32_t signal_taken;
	_Atomic uint32_t nchunks; /* chunks collect made and published (collect writes) */
	_Atomic uint32_t next_stack_id;
	_Atomic uint32_t next_module_id;
	_Atomic uint32_t images; /* program images that attached: 1 + execs in the same process */
	_Atomic uint32_t perf_fallback_threads; /* threads that could not map a perf event: timer only */
	_Atomic uint32_t threads_without_ring; /* threads that ended without ever getting a ring */
	/* An agent found every ring taken and sent collect TRANSPORT_WAKE_SIGNAL; collect clears it. */
	_Atomic uint32_t wake_pending;
	_Atomic uint64_t lost_no_ring; /* samples dropped: the thread had no ring */
	/* Sampling is off (--delay, --paused, SIGUSR2, ipscope_stop()): nothing is recorded. */
	_Atomic uint32_t paused;
	_Atomic uint32_t ever_paused; /* sampling was off for a while: the samples cover only part of the run */
	uint32_t follow; /* 1: every process of the tree attaches (not --no-follow) */
	/* Wall mode: samples of threads that ended between being chosen and being sampled. */
	_Atomic uint64_t exited_unsampled;
	_Atomic uint64_t sampler_cpu_ns; /* wall mode: CPU time of the agents' sampler threads */
	/* collect's CLOCK_MONOTONIC at its last drain: records that must not be
	 * dropped wait for room only while collect is alive. */
	_Atomic uint64_t consumer_heartbeat_ns;
	char agent_error[256];
	/* Allocation recording (mode & TRANSPORT_MODE_ALLOCS), written by collect. */
	uint32_t alloc_scheme; /* enum transport_alloc_scheme */
	uint32_t alloc_reserved;
	uint64_t alloc_threshold; /* TRANSPORT_ALLOC_RATE: a 64-bit random number below it is chosen */
	uint64_t alloc_mean_bytes; /* TRANSPORT_ALLOC_BYTES */
	/* Written by the agent. */
	_Atomic uint32_t allocs_seen; /* some thread called an interposed allocation function */
	/* Not 0: the program's malloc is not the one the agent interposes (a
	 * statically linked allocator); what defines it is in agent_error. */
	_Atomic uint32_t allocator_elsewhere;
	_Atomic uint64_t alloc_events_lost; /* nested events that found the side buffer full */
	_Atomic uint64_t alloc_nested; /* events recorded from inside another (signal handlers) */
	_Atomic uint64_t alloc_unwind_skipped; /* allocations inside the loader: stack of their caller only */
	/* Each image that attaches (the first process, a fork child, an exec'd
	 * program) takes the next number: its stream of allocation events, with
	 * a seq of its own (transport_ring.stream). */
	_Atomic uint32_t next_stream;
	/* Records that must not be lost (processes, modules, threads' names and ends) that found no
	 * ring for 1 s, or 20 ms once collect cannot grow (agent_ring_waiting). */
	_Atomic uint64_t records_lost;
	_Atomic uint32_t cannot_grow; /* collect mapped its last chunk, or failed to map one */
	/* Allocations the agents could not record: made before an agent started on a thread that could
	 * not start it (alloc_hooks.c), and their bytes. */
	_Atomic uint64_t allocs_unrecorded;
	_Atomic uint64_t alloc_bytes_unrecorded;
	/* Objects loaded with RTLD_DEEPBIND whose malloc family the agent pointed at its hooks after their
	 * constructors ran (alloc_rebind.c), and the first one's path (its tail when long). */
	_Atomic uint32_t deepbind_rebound;
	char deepbind_library[124];
	/* An allocator's own API is loaded (jemalloc's mallocx...), which the hooks do not see: "NAME in
	 * PATH" (alloc_hooks.c). */
	_Atomic uint32_t allocator_api;
	char allocator_api_text[124];
	/* The program installed a seccomp filter: the call that did (sandbox.c). */
	_Atomic uint32_t sandboxed;
	char sandbox_text[124];
	/* CPU time threads used after their last sample, charged at their ends as samples (sampler.c):
	 * periods, and threads charged. */
	_Atomic uint64_t exit_charged;
	_Atomic uint64_t exit_charged_threads;
	/* Wall mode: sampler threads started, in any process (collect's wall_watch.c then looks for the new one). */
	_Atomic uint32_t wall_samplers;
	/* Threads waiting for a ring (agent_ring_waiting), and the futex word they wait on: bumped, and
	 * its waiters woken, when rings are freed or added while any waits (transport_rings_changed).
	 * Polling instead, 1500 threads starting at once kept collect from the CPU it needed to grow. */
	_Atomic uint32_t ring_waiters;
	_Atomic uint32_t rings_changed;
};

/* FREE -> CLAIMING (a thread won it, is writing its pid and tid) -> OWNED -> CLOSED (by its
 * thread, or by collect once the thread is gone) -> FREE (by collect, once drained). Owner ids
 * are written before OWNED is published, so collect never reads a previous owner's. */
enum transport_ring_state { RING_FREE = 0, RING_OWNED = 1, RING_CLOSED = 2, RING_CLAIMING = 3 };
/* The ring is the wall sampler's: its samples and losses are other threads'. */
#define RING_AGENT_SAMPLER 1u

/* Producer and consumer positions sit on separate cache lines. The ring's
 * size is the header's ring_bytes (TRANSPORT_RING_BYTES, or
 * TRANSPORT_ALLOC_RING_BYTES when allocations are recorded). */
struct transport_ring {
	_Atomic uint32_t state;
	uint32_t tid;
	_Atomic uint64_t lost; /* samples dropped because this ring was full */
	/* What the sampling signal handler cost this thread (CLOCK_MONOTONIC):
	 * handler_ns over handler_timed of handler_calls calls; a call that took
	 * over TRANSPORT_PREEMPTED_NS was preempted, not slow, and is left out. */
	_Atomic uint64_t handler_ns;
	_Atomic uint64_t handler_timed;
	_Atomic uint64_t handler_calls;
	uint32_t pid; /* the process of the thread that owns it */
	uint32_t flags; /* RING_AGENT_* */
	/* The owner's image (header.next_stream): its TR_HEAP events are numbered by one seq of
	 * that image, which collect orders them by. */
	uint32_t stream;
	char pad0[12];
	_Atomic uint64_t head; /* bytes ever written (producer) */
	uint64_t reserved_head; /* producer-private: head after the pending record */
	/* Producer-private: a tail it read (never above the real one): the consumer's line is read
	 * again only when this one says full. */
	uint64_t tail_seen;
	char pad1[40];
	_Atomic uint64_t tail; /* bytes ever consumed (collect) */
	char pad2[56];
};

/* Ring records: an 8-byte header, payload, padded to 8 bytes. */
enum transport_record_type {
	TR_PAD = 0, /* filler up to the end of the ring */
	TR_STACK = 1,
	TR_SAMPLE = 2,
	TR_THREAD = 3,
	TR_MODULE = 4,
	TR_MODULE_UNLOAD = 5,
	TR_EXEC = 6, /* the process exec'd a new image: every module before it is gone */
	TR_HEAP = 7, /* an allocation or free (struct tr_heap) */
	TR_PROCESS = 8, /* a process of the tree: attached, forked, exec'ing, reaped (struct tr_process) */
};

/* tr_heap.kind: the function that allocated, or what the event is. */
enum tr_heap_kind {
	TR_HEAP_NONE = 0, /* a seq taken for nothing (a free that was not of a recorded block) */
	TR_HEAP_MALLOC = 1,
	TR_HEAP_CALLOC = 2,
	TR_HEAP_REALLOC = 3,
	TR_HEAP_REALLOCARRAY = 4,
	TR_HEAP_POSIX_MEMALIGN = 5,
	TR_HEAP_ALIGNED_ALLOC = 6,
	TR_HEAP_MEMALIGN = 7,
	TR_HEAP_VALLOC = 8,
	TR_HEAP_PVALLOC = 9,
	TR_HEAP_FREE = 15, /* free(), or realloc's release of the old block (flag REALLOC) */
};
/* tr_heap.flags */
#define TR_HEAP_MOVED 0x1u /* an allocation by realloc whose block moved */
#define TR_HEAP_BY_REALLOC 0x2u /* a free: the old block of a realloc (moved or not) */
#define TR_HEAP_TEMPORARY 0x4u /* a free of the thread's latest allocation (no allocation or free since) */
#define TR_HEAP_NESTED 0x8u /* recorded from a signal handler inside another event */
#define TR_HEAP_RESTORED 0x10u /* a realloc failed after its free was recorded: the block lives on */

struct tr_heap {
	uint64_t seq; /* the image's own (agent_alloc_seq), from 1: see transport_ring.stream */
	uint64_t time_ns; /* CLOCK_MONOTONIC_COARSE */
	uint64_t address;
	uint64_t size; /* bytes asked for; 0 for a free */
	uint32_t stack_id; /* allocations; 0 for a free */
	uint16_t kind; /* enum tr_heap_kind */
	uint16_t flags; /* TR_HEAP_* */
};

struct tr_header {
	uint32_t type;
	uint32_t size; /* payload bytes, excluding this header and padding */
};

struct tr_stack {
	uint32_t id;
	uint32_t flags; /* TRACE_STACK_* */
	uint32_t nframes;
	uint32_t reserved;
	/* uint64_t ips[nframes], innermost first */
};

struct tr_sample {
	uint64_t time_ns;
	uint32_t tid;
	uint32_t stack_id;
	uint32_t weight;
	uint32_t state; /* TRACE_STATE_* */
	int32_t syscall; /* off CPU: the system call the thread waits in; -1: none or unknown */
	uint32_t reserved;
};

struct tr_thread {
	uint64_t time_ns;
	uint64_t cpu_ns; /* the thread's CPU time at time_ns; 0: not measured */
	uint32_t tid; /* may be another thread's (TRACE_THREAD_RUNNING_AT_END) */
	uint32_t flags; /* TRACE_THREAD_* */
	char name[16];
};

struct tr_module {
	uint64_t time_ns;
	uint64_t load_bias;
	uint32_t id;
	uint32_t build_id_len;
	uint32_t nsegments;
	uint32_t path_len;
	uint8_t build_id[32];
	/* struct tr_segment segments[nsegments]; char path[path_len] (no NUL) */
};

struct tr_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t file_offset;
	uint64_t flags;
};

struct tr_exec {
	uint64_t time_ns;
};

/*
 * What an agent tells collect about a process (collect turns them into the
 * trace's PROCESS records). ATTACHED: this image of process pid started
 * (after collect started it, a fork+exec, a posix_spawn or an exec in
 * place); FORKED: pid is a fork of parent and goes on profiled; EXECING:
 * pid is about to exec path (or, from posix_spawn, did), so collect can tell
 * when no agent follows (a static or setuid program); EXEC_FAILED: it
 * returned; REAPED: the agent's wait() wrapper saw child pid end with
 * status; FORK_UNFOLLOWED: pid is a fork of parent the agent does not follow
 * (its forking thread was under a seccomp filter), path says why. The
 * process's command line follows the path.
 */
enum tr_process_kind {
	TR_PROCESS_ATTACHED = 1,
	TR_PROCESS_FORKED = 2,
	TR_PROCESS_EXECING = 3,
	TR_PROCESS_EXEC_FAILED = 4,
	TR_PROCESS_REAPED = 5,
	TR_PROCESS_FORK_UNFOLLOWED = 6,
};

struct tr_process {
	uint64_t time_ns;
	uint32_t kind; /* enum tr_process_kind */
	uint32_t pid;
	uint32_t parent;
	/* REAPED: the wait status. ATTACHED, FORKED: the recording thread's CPU time then, in microseconds
	 * (INT32_MAX: more), where collect's wall mode counts its time off CPU from (wall_watch.c). */
	int32_t status;
	uint32_t path_len;
	uint32_t command_len;
	/* char path[path_len], command[command_len] (no NULs; command: argv joined by spaces) */
};

struct tr_module_unload {
	uint64_t time_ns;
	uint32_t id;
	uint32_t reserved;
};

/*
 * A transport as this process maps it. The header's own copy of the geometry
 * lives in memory the program can scribble on, so neither side re-reads it
 * after set-up; chunk counts read from the header are checked against the
 * file's real size before anything is mapped.
 */
struct transport {
	struct transport_header *header;
	uint32_t ring_bytes; /* power of two */
	uint32_t rings_per_chunk; /* power of two */
	uint32_t chunk_shift; /* log2(rings_per_chunk): no division on the producer's path */
	uint32_t max_chunks;
	size_t chunk_bytes;
	size_t descriptor_bytes; /* of a chunk's ring descriptors: its rings' data follows them */
	_Atomic uint32_t nmapped; /* chunks[0 .. nmapped) are mapped here */
	uint8_t *_Atomic chunks[TRANSPORT_MAX_CHUNKS];
};

/* Bytes of one chunk, and of a file holding nchunks of them. */
size_t transport_chunk_bytes(uint32_t rings_per_chunk, uint32_t ring_bytes);
size_t transport_size(uint32_t nchunks, uint32_t rings_per_chunk, uint32_t ring_bytes);
/* File offset where chunk c starts. */
size_t transport_chunk_offset(const struct transport *t, uint32_t c);
/* Describe a mapped header (no chunk mapped yet); 0, or -1 if the geometry is impossible. */
int transport_init(struct transport *t, struct transport_header *header, uint32_t ring_bytes,
		   uint32_t rings_per_chunk, uint32_t max_chunks);
/* Install chunk c's mapping unless another thread did it first: 1 installed, 0 not (unmap yours). */
int transport_add_chunk(struct transport *t, uint32_t c, void *mapping);
/* Rings mapped here: every ring index below this can be used. */
uint32_t transport_nrings(const struct transport *t);
/* collect: how many chunks to add so that as many rings are free as are taken (at least a chunk's worth). */
uint32_t transport_chunks_wanted(const struct transport *t);
/* Rings were freed or added (their states published first): wakes the threads waiting for one. */
void transport_rings_changed(struct transport_header *h);
/* Waits while h->rings_changed is seen (a value read after counting oneself in ring_waiters and
 * before looking for a ring), until the CLOCK_MONOTONIC deadline (ns) or a wake-up; -1 when it could
 * not wait at all (no futex: the caller sleeps its own way). */
int transport_rings_wait(struct transport_header *h, uint32_t seen, uint64_t deadline_ns);

/* Inline: the producer's path runs at every allocation and free. */
/* The descriptor of ring i (i < transport_nrings). */
static inline struct transport_ring *transport_ring(const struct transport *t, uint32_t i)
{
	uint8_t *chunk = atomic_load_explicit(&t->chunks[i >> t->chunk_shift], memory_order_relaxed);
	return (struct transport_ring *)chunk + (i & (t->rings_per_chunk - 1));
}

/* The first byte of ring i's data. */
static inline uint8_t *transport_ring_data(const struct transport *t, uint32_t i)
{
	uint8_t *chunk = atomic_load_explicit(&t->chunks[i >> t->chunk_shift], memory_order_relaxed);
	return chunk + t->descriptor_bytes + (size_t)(i & (t->rings_per_chunk - 1)) * t->ring_bytes;
}

/* Producer: room for a record of payload_size bytes, or NULL when the ring is full. */
static inline void *transport_reserve(const struct transport *t, uint32_t ring, uint32_t type, uint32_t payload_size)
{
	struct transport_ring *r = transport_ring(t, ring);
	uint64_t size = (sizeof(struct tr_header) + (uint64_t)payload_size + 7) & ~(uint64_t)7;
	uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint64_t offset = head & (t->ring_bytes - 1);
	uint64_t to_end = t->ring_bytes - offset;
	uint64_t pad = size > to_end ? to_end : 0;

	if (size > t->ring_bytes / 2)
		return NULL;
	/* The consumer's tail only moves on: a tail seen before that leaves room is a safe answer, and
	 * its cache line (which collect writes) is not read at every record. A ring handed to a new
	 * owner starts at 0 again: a tail_seen above head is read anew too. */
	if (r->tail_seen > head || head + pad + size - r->tail_seen > t->ring_bytes) {
		uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		r->tail_seen = tail;
		if (tail > head || head + pad + size - tail > t->ring_bytes)
			return NULL;
	}
	uint8_t *data = transport_ring_data(t, ring);
	if (pad) {
		/* A record never wraps: fill the end of the ring and start at 0. */
		struct tr_header filler = { TR_PAD, (uint32_t)(pad - sizeof(struct tr_header)) };
		memcpy(data + offset, &filler, sizeof filler);
		head += pad;
		offset = 0;
	}
	struct tr_header rh = { type, payload_size };
	memcpy(data + offset, &rh, sizeof rh);
	r->reserved_head = head + size;
	/* Publish the filler now; the record itself only at commit. */
	if (pad)
		atomic_store_explicit(&r->head, head, memory_order_release);
	return data + offset + sizeof(struct tr_header);
}

/* Producer: publish the record last reserved in this ring. */
static inline void transport_commit(const struct transport *t, uint32_t ring)
{
	struct transport_ring *r = transport_ring(t, ring);
	atomic_store_explicit(&r->head, r->reserved_head, memory_order_release);
}

/* Hash of a backtrace, the same in the agent's and in collect's stack tables. */
uint64_t transport_hash_stack(const uint64_t *ips, uint32_t n, uint32_t flags);

/*
 * Consumer: copy each published record's payload into scratch (ring_bytes
 * bytes) and call fn on the copy, then release the space. Returns the records
 * seen, or -1 when the ring's positions are impossible (a corrupted program):
 * such a ring is left alone from then on by the caller.
 */
typedef void (*transport_record_fn)(void *ctx, uint32_t ring, uint32_t type, const void *payload,
				    uint32_t size);
int64_t transport_drain(const struct transport *t, uint32_t ring, uint8_t *scratch, transport_record_fn fn,
			void *ctx);

#endif
