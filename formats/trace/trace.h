/*
 * trace.h - the ipscope trace: record types, the writer collect uses and the
 * streaming reader analyze uses. The byte layout is specified in
 * formats/trace/TRACE_FORMAT.md; this header is the C view of it.
 *
 * A trace is a zstd stream whose decompressed bytes are a file header followed
 * by self-delimiting records. The writer flushes the zstd stream on demand so a
 * file cut at any point decodes to a prefix of whole records; the reader returns
 * that prefix and reports the cut (trace_reader_truncated).
 */
#ifndef IPSCOPE_TRACE_H
#define IPSCOPE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_VERSION_MAJOR 1
/* 1.1: JIT_MAP records; 1.2: THREAD cpu_ns, END agent cost; 1.3: ALLOCS;
 * 1.4: PROCESS records, a sample's system call, END exited_unsampled;
 * 1.5: ALLOCS_IDS (allocations without addresses); 1.6: attached traces (collect -p) */
#define TRACE_VERSION_MINOR 6

enum trace_type {
	TRACE_META = 1,          /* key/value text: command line, mode, interval... */
	TRACE_MODULE = 2,        /* an ELF object mapped into a process */
	TRACE_MODULE_UNLOAD = 3, /* that object was unmapped (dlclose) */
	TRACE_THREAD = 4,        /* a thread started, was renamed or exited */
	TRACE_STACK = 5,         /* a distinct backtrace, written once, referenced by id */
	TRACE_SAMPLES = 6,       /* a batch of timer samples */
	TRACE_LOSS = 7,          /* samples the agent had to drop, counted */
	TRACE_END = 8,           /* last record: exit status and totals */
	TRACE_ALLOCS = 9,        /* 1.3: a batch of allocations and frees of one process, in seq order */
	/* reserved, not written: 10 (FREES: frees travel in ALLOCS) */
	TRACE_PROCESS = 11,      /* 1.4: a process of the tree forked, exec'd or exited */
	TRACE_JIT_MAP = 12,      /* 1.1: a JIT's /tmp/perf-PID.map, copied at the end of the run */
	TRACE_ALLOCS_PACKED = 13, /* 1.3, 1.4 writers: ALLOCS column by column; read as TRACE_ALLOCS */
	TRACE_ALLOCS_IDS = 14,    /* 1.5: ALLOCS without addresses, blocks by reference; read as TRACE_ALLOCS */
};

/* Well-known META keys (values are text). Unknown keys are kept and shown. */
#define TRACE_META_COMMAND "command"          /* argv joined by spaces, shell-quoted */
#define TRACE_META_MODE "mode"                /* "cpu", "wall" (1.4), "allocs", "cpu,allocs", "wall,allocs" */
#define TRACE_META_INTERVAL_NS "interval_ns"  /* decimal */
#define TRACE_META_SOURCE "source"            /* "perf-task-clock+cpu-timer", "posix-cpu-timer"... */
#define TRACE_META_START_REALTIME_NS "start_realtime_ns" /* CLOCK_REALTIME at start */
#define TRACE_META_START_MONOTONIC_NS "start_monotonic_ns" /* same instant, CLOCK_MONOTONIC */
#define TRACE_META_PID "pid"
#define TRACE_META_HOSTNAME "hostname"
#define TRACE_META_COLLECTOR "collector"      /* "ipscope VERSION" */
#define TRACE_META_MAX_FRAMES "max_frames"
#define TRACE_META_SIGNAL "signal"            /* the agent's sampling signal, decimal (1.2) */
#define TRACE_META_SIGNAL_TAKEN "signal_taken" /* the program installed a handler for it: sampling stopped (1.2) */
#define TRACE_META_ATTACHED "attached"        /* "1": collect -p profiled a running process from outside (1.6) */
#define TRACE_META_FOLLOW "follow"            /* "1": every process of the tree was followed, "0": --no-follow (1.4) */
#define TRACE_META_PAUSED "paused"            /* "1": sampling started off (--paused, --delay) (1.4) */
#define TRACE_META_DELAY_NS "delay_ns"        /* --delay, decimal (1.4) */
#define TRACE_META_DURATION_NS "duration_ns"  /* --duration, decimal (1.4) */
#define TRACE_META_SAMPLER_CPU_NS "sampler_cpu_ns" /* wall mode, at the end: the agents' sampler threads' CPU time (1.4) */
#define TRACE_META_RECORDS_LOST "records_lost" /* at the end, when not 0: process, module or thread records that found no buffer (1.5) */
#define TRACE_META_ALLOCS_UNRECORDED "allocs_unrecorded" /* at the end, when not 0: allocations made before the agent could start (1.5) */
#define TRACE_META_ALLOC_BYTES_UNRECORDED "alloc_bytes_unrecorded" /* their bytes (1.5) */
#define TRACE_META_DEEPBIND_LIBRARIES "deepbind_libraries" /* at the end, when not 0: libraries loaded with RTLD_DEEPBIND whose constructors' allocations were not recorded (1.5) */
#define TRACE_META_DEEPBIND_LIBRARY "deepbind_library" /* the first one's path (1.5) */
#define TRACE_META_ALLOCATOR_API "allocator_api" /* at the end: "NAME in PATH", an allocator's own API was loaded, whose allocations are not recorded (1.5) */
#define TRACE_META_EXIT_CHARGED "exit_charged" /* at the end, when not 0: periods of CPU time threads used after their last sample, charged at their ends (TRACE_STACK_EXIT_CHARGE) (1.5) */
#define TRACE_META_EXIT_CHARGED_THREADS "exit_charged_threads" /* how many threads were (1.5) */
#define TRACE_META_SECCOMP "seccomp" /* at the end: the call that installed the program's seccomp filter (sandbox.c) (1.5) */
#define TRACE_META_ALLOC_SCHEME "alloc_scheme" /* 1.3: "all", "rate" or "bytes": which allocations were recorded */
#define TRACE_META_ALLOC_RATE "alloc_rate"     /* 1.3: scheme rate: the probability of each allocation */
#define TRACE_META_ALLOC_MEAN_BYTES "alloc_mean_bytes" /* 1.3: scheme bytes: the mean bytes per recorded byte */
/* The agent's identity in a trace (TRACE_FORMAT.md, MODULE): its module's file name, and the
 * function whose address stands for the time its hooks spent recording allocations. */
#define TRACE_AGENT_FILE_NAME "libipscope-agent.so"
#define TRACE_AGENT_ALLOC_MARKER "agent_recording_allocations"
/* Whether a MODULE path is the agent's (its file name is TRACE_AGENT_FILE_NAME, or a versioned .so.N of it). */
int trace_path_is_agent(const char *path);

/* The values of TRACE_META_ALLOC_SCHEME; anything else reads as "all". */
#define TRACE_ALLOC_SCHEME_ALL "all"     /* every allocation */
#define TRACE_ALLOC_SCHEME_RATE "rate"   /* each with probability alloc_rate */
#define TRACE_ALLOC_SCHEME_BYTES "bytes" /* each byte with probability 1 / alloc_mean_bytes */

struct trace_meta {
	const char *key;
	const char *value;
};

#define TRACE_SEGMENT_EXEC 1u
#define TRACE_SEGMENT_WRITE 2u
#define TRACE_SEGMENT_READ 4u

/* One PT_LOAD segment: runtime address = module.load_bias + vaddr. */
struct trace_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t file_offset;
	uint32_t flags; /* TRACE_SEGMENT_* */
};

struct trace_module {
	uint32_t pid;
	uint32_t id; /* unique within the trace; unload records name it */
	uint64_t time_ns; /* CLOCK_MONOTONIC when it was seen */
	uint64_t load_bias; /* runtime address minus ELF virtual address */
	const char *path; /* as the loader knows it; main program is absolute */
	const uint8_t *build_id; /* NT_GNU_BUILD_ID bytes, NULL when absent */
	uint32_t build_id_len;
	uint32_t nsegments;
	const struct trace_segment *segments;
};

struct trace_module_unload {
	uint32_t pid;
	uint32_t id;
	uint64_t time_ns;
};

#define TRACE_THREAD_START 1u
#define TRACE_THREAD_NAME 2u
#define TRACE_THREAD_EXIT 4u
/* The process was ending with the thread still running: cpu_ns is its CPU time then (1.2). */
#define TRACE_THREAD_AT_END 8u

struct trace_thread {
	uint32_t pid;
	uint32_t tid;
	uint64_t time_ns;
	uint32_t flags; /* TRACE_THREAD_* */
	const char *name; /* "" when unknown */
	uint64_t cpu_ns; /* the thread's CPU time at time_ns as the agent measured it; 0: unknown (1.2) */
};

/* ips[0] is the exact interrupted pc; ips[1..] are return addresses. */
#define TRACE_STACK_LEAF_EXACT 1u
/* The unwinder stopped at max_frames: the root part is missing. */
#define TRACE_STACK_TRUNCATED 2u
/* (1.5) A thread's CPU time after its last sample, charged at its end on this stack (its last sample's, or
 * the function it was started with): readers show a "[thread exit: unsampled]" leaf below it. */
#define TRACE_STACK_EXIT_CHARGE 4u

struct trace_stack {
	uint32_t id; /* unique within the trace, any value */
	uint32_t flags; /* TRACE_STACK_* */
	uint32_t nframes;
	const uint64_t *ips; /* innermost first */
};

/* A sample's thread state (wall mode; a CPU sample is always ON_CPU). */
#define TRACE_STATE_ON_CPU 0u          /* running on a CPU */
#define TRACE_STATE_RUNNABLE 1u        /* waiting for a CPU */
#define TRACE_STATE_SLEEPING 2u        /* blocked (in the system call `syscall`) */
#define TRACE_STATE_UNINTERRUPTIBLE 3u /* blocked in an uninterruptible wait (I/O) */
#define TRACE_STATE_STOPPED 4u         /* stopped (SIGSTOP, a debugger) */

struct trace_sample {
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint32_t pid;
	uint32_t tid;
	uint32_t stack_id;
	uint32_t weight; /* timer periods this sample stands for (1 + overruns) */
	uint32_t state; /* TRACE_STATE_* */
	int32_t syscall; /* the system call number it waits in, -1: none or unknown (1.4; -1 before) */
};

struct trace_samples {
	uint32_t count;
	const struct trace_sample *samples;
};

/* trace_heap_event.kind (1.3): the function that allocated, or a free. */
enum trace_heap_kind {
	TRACE_HEAP_NONE = 0, /* nothing: a seq that was taken for no event */
	TRACE_HEAP_MALLOC = 1,
	TRACE_HEAP_CALLOC = 2,
	TRACE_HEAP_REALLOC = 3,
	TRACE_HEAP_REALLOCARRAY = 4,
	TRACE_HEAP_POSIX_MEMALIGN = 5,
	TRACE_HEAP_ALIGNED_ALLOC = 6,
	TRACE_HEAP_MEMALIGN = 7,
	TRACE_HEAP_VALLOC = 8,
	TRACE_HEAP_PVALLOC = 9,
	TRACE_HEAP_FREE = 15,
};
#define TRACE_HEAP_MOVED 0x1u      /* an allocation by realloc whose block moved */
#define TRACE_HEAP_BY_REALLOC 0x2u /* a free: realloc released the old block (moved or in place) */
#define TRACE_HEAP_TEMPORARY 0x4u  /* a free of its thread's latest allocation, nothing between on that thread */
#define TRACE_HEAP_NESTED 0x8u     /* recorded from a signal handler inside another event */
#define TRACE_HEAP_RESTORED 0x10u  /* realloc failed after its free: the block lives on */

/* One allocation or free. */
struct trace_heap_event {
	uint64_t seq;     /* the process's event order */
	uint64_t time_ns; /* CLOCK_MONOTONIC_COARSE (a scheduler tick's resolution) */
	uint64_t address; /* the block; read from ALLOCS_IDS (1.5) its identity instead: equal for an
			   * allocation and its free, 0 for a free of no recorded block */
	uint64_t size;    /* allocations: bytes asked for */
	uint32_t tid;
	uint32_t stack_id; /* allocations: a STACK id */
	uint32_t kind;    /* enum trace_heap_kind */
	uint32_t flags;   /* TRACE_HEAP_* */
};

struct trace_allocs {
	uint32_t pid;
	uint32_t count;
	const struct trace_heap_event *events;
};

struct trace_loss {
	uint32_t pid;
	uint32_t tid; /* 0: not attributed to a thread */
	uint64_t time_ns;
	uint64_t samples; /* samples dropped since the previous loss record */
};

#define TRACE_END_EXITED 1u   /* wait_status is a WIFEXITED status */
#define TRACE_END_SIGNALED 2u /* the program died from a signal */
#define TRACE_END_DETACHED 4u /* (1.6) collect -p stopped watching: the program runs on (wait_status 0) */
#define TRACE_END_STATUS_UNKNOWN 8u /* (1.6) collect -p saw the program end, not how (wait_status 0) */

/* PROCESS kinds (1.4) */
#define TRACE_PROCESS_FORKED 1u
#define TRACE_PROCESS_EXECED 2u
#define TRACE_PROCESS_EXITED 3u
/* PROCESS flags (1.4) */
#define TRACE_PROCESS_NOT_PROFILED 1u /* exec'd a program the agent could not enter (reason says why) */
#define TRACE_PROCESS_STATUS_UNKNOWN 2u /* exited: nobody collect hears from reaped it */

struct trace_process {
	uint32_t pid;
	uint32_t parent_pid; /* 0: unknown */
	uint64_t time_ns;
	uint32_t kind;       /* TRACE_PROCESS_* */
	int32_t wait_status; /* exited: raw status from waitpid */
	const char *path;    /* exec'd: the program; "" otherwise */
	const char *command; /* exec'd: argv joined by spaces, shell-quoted; "" otherwise */
	uint32_t flags;      /* TRACE_PROCESS_NOT_PROFILED... */
	const char *reason;  /* not profiled: why ("statically linked"...); "" otherwise */
};

struct trace_end {
	uint64_t time_ns;
	int32_t wait_status; /* raw status from waitpid */
	uint32_t flags;
	uint64_t samples; /* totals as collect counted them */
	uint64_t weight;
	uint64_t lost_samples;
	uint64_t agent_ns; /* time the agent's signal handler took, all threads (1.2) */
	uint64_t agent_signals; /* signals it handled (1.2) */
	uint64_t exited_unsampled; /* wall mode: samples of threads that ended between being chosen and sampled (1.4) */
};

/* Part of a JIT runtime's symbol map (perf's "START SIZE name" text lines,
 * hex): whole lines, in file order; a long map spans several records. */
struct trace_jit_map {
	uint32_t pid;
	uint64_t time_ns;     /* when collect read it */
	const char *path;     /* the file it was read from */
	const uint8_t *text;  /* not NUL-terminated; may hold anything */
	uint32_t text_len;
};

struct trace_record {
	enum trace_type type;
	uint64_t offset; /* byte offset of the record in the decompressed stream */
	union {
		struct trace_meta meta;
		struct trace_module module;
		struct trace_module_unload unload;
		struct trace_thread thread;
		struct trace_stack stack;
		struct trace_samples samples;
		struct trace_loss loss;
		struct trace_end end;
		struct trace_jit_map jit_map;
		struct trace_process process;
		struct trace_allocs allocs;
	} u;
};

/* ---- writer ---- */

struct trace_writer;

/* Start a trace on fd (not closed by the writer); NULL with errno on failure. */
struct trace_writer *trace_writer_open(int fd, int zstd_level);
/* Each of these appends one record; 0 on success, -1 with errno on write failure. */
int trace_writer_meta(struct trace_writer *w, const char *key, const char *value);
int trace_writer_module(struct trace_writer *w, const struct trace_module *m);
int trace_writer_module_unload(struct trace_writer *w, const struct trace_module_unload *u);
int trace_writer_thread(struct trace_writer *w, const struct trace_thread *t);
int trace_writer_stack(struct trace_writer *w, const struct trace_stack *s);
/* Queue a sample; samples are written in batches, in the order given. */
int trace_writer_sample(struct trace_writer *w, const struct trace_sample *s);
int trace_writer_loss(struct trace_writer *w, const struct trace_loss *l);
int trace_writer_process(struct trace_writer *w, const struct trace_process *p);
/* One ALLOCS record of n events of process pid, in seq order; n at most TRACE_ALLOCS_MAX_EVENTS. */
#define TRACE_ALLOCS_MAX_EVENTS 65536u
int trace_writer_allocs(struct trace_writer *w, uint32_t pid, const struct trace_heap_event *events, uint32_t n);
/* One JIT_MAP record; text_len at most TRACE_JIT_MAP_MAX_TEXT (else EINVAL). */
#define TRACE_JIT_MAP_MAX_TEXT (1u << 20)
int trace_writer_jit_map(struct trace_writer *w, const struct trace_jit_map *j);
/* Push everything appended so far to fd as whole zstd blocks; 0 or -1/errno. */
int trace_writer_flush(struct trace_writer *w);
/* Bytes handed to fd so far, and uncompressed bytes appended so far. */
uint64_t trace_writer_compressed_bytes(const struct trace_writer *w);
uint64_t trace_writer_raw_bytes(const struct trace_writer *w);
/* Append END, finish the zstd frame, free w (even on error); 0 or -1/errno. */
int trace_writer_close(struct trace_writer *w, const struct trace_end *end);

/* ---- streaming reader ---- */

struct trace_reader;

/* Open path ("-" is stdin); NULL on failure with a one-line message in err. */
struct trace_reader *trace_reader_open(const char *path, char *err, size_t errlen);
/* Read from a buffer the caller keeps alive (fuzzing, tests); name is used in messages. */
struct trace_reader *trace_reader_open_memory(const void *data, size_t size, const char *name,
					      char *err, size_t errlen);
/* 1: *rec filled (pointers valid until the next call); 0: no more records; -1: corrupt. */
int trace_reader_next(struct trace_reader *r, struct trace_record *rec);
/* After 0: nonzero when the stream ended without an END record (cut-off trace). */
int trace_reader_truncated(const struct trace_reader *r);
/* After -1: "FILE: offset N: what is wrong". After 0 and truncated: a warning line. */
const char *trace_reader_error(const struct trace_reader *r);
/*
 * After -1: nonzero when the damage was found where it is (a record that
 * cannot be, a compressed block that does not decode), so that the records
 * returned before it can be kept, as a cut-off trace's are; 0 when it can be
 * anywhere (the content checksum at the frame's end).
 */
int trace_reader_damage_located(const struct trace_reader *r);
/* Compressed bytes consumed and decompressed bytes produced so far. */
uint64_t trace_reader_compressed_bytes(const struct trace_reader *r);
uint64_t trace_reader_raw_bytes(const struct trace_reader *r);
/* Version of the file being read. */
void trace_reader_version(const struct trace_reader *r, unsigned *major, unsigned *minor);
void trace_reader_close(struct trace_reader *r);

#endif
