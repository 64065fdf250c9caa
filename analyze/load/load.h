/*
 * load.h - read a trace into a profile: every record through the streaming
 * reader and its consumer (load_internal.h), each distinct address
 * symbolized once, names interned. What went wrong or looked wrong goes to
 * the diagnostics sink, never to stderr.
 */
#ifndef IPSCOPE_LOAD_H
#define IPSCOPE_LOAD_H

#include <stdint.h>

#include "diagnostics.h"
#include "profile.h"

/* load_options.sample_times */
#define LOAD_TIMES_NONE 0
#define LOAD_TIMES_EXACT 1
#define LOAD_TIMES_BINNED 2
/* BINNED's default bound: 2 M rows, about 200 MiB while they stream in. */
#define LOAD_TIME_ROWS (2u << 20)

struct load_options {
	const char *const *debug_dirs; /* --debug-dir, in the order given */
	int ndebug_dirs;
	const char *const *search_dirs; /* --search-dir: modules and debug files */
	int nsearch_dirs;
	int demangle;    /* 1 unless --no-demangle */
	int keep_clones; /* --keep-clones */
	int full_names;  /* --full-names: C++ return type and parameters */
	int raw_names;   /* --raw-names: internal aliases as DWARF names them */
	int offline;     /* --offline: never ask debuginfod */
	/* The report hides system frames, and matches no function names (tree, flat without -C, --focus or
	 * --ignore): system modules none of whose frames it shows are named from their symbol tables alone,
	 * their debug info unread (load_stacks.c). */
	int system_names_only;
	double debuginfod_timeout; /* --debuginfod-timeout SECONDS (0: the default) */
	/*
	 * 0: do not resolve addresses (every frame is module+0xoffset); modules
	 * are still opened when open_modules is set so their flags say what
	 * debug info exists. analyze info uses this to stay fast.
	 */
	int symbolize;
	int open_modules;
	/* Allocation traces (load_allocs.c). */
	int scale;            /* --scale: sampled allocations weighed up to estimates of the whole */
	int no_alloc_leaves;  /* --no-alloc-leaves: no "malloc 32 B" leaves */
	uint32_t alloc_bins;  /* rows per stack over time (plots); 0: one row per stack for the run */
	/*
	 * How rows keep the samples' times (LOAD_TIMES_*). NONE: one row per
	 * distinct (stack, thread, label, weight), its values summed as the
	 * samples stream in, so that memory follows the distinct keys, not the
	 * run's length (profile_sample.merged). EXACT: one row per trace sample,
	 * in trace order, with its own time. BINNED (speedscope's sample order,
	 * the one-run plots): EXACT's rows while there are at most time_rows of
	 * them; past that, samples summed per key and time bin, the bins widened
	 * (doubled) until the rows fit again, so memory stays bounded and a
	 * thread's rows still come in time order, bin by bin.
	 */
	int sample_times;
	uint64_t time_rows; /* BINNED's bound on rows; 0: LOAD_TIME_ROWS */
	const struct diag_sink *diag; /* where messages go; NULL: nowhere */
};

/* Defaults: demangle, merge clones, symbolize, no sink. */
void load_options_init(struct load_options *o);

/* What the trace itself says beyond the profile, for analyze info. */
struct load_meta {
	uint32_t key;   /* string ids in the profile */
	uint32_t value;
};

/* A process of the trace (PROCESS records, 1.4). */
#define LOAD_PROCESS_FORKED 0x1u       /* a fork: its command line is its parent's */
#define LOAD_PROCESS_EXITED 0x2u       /* its end was recorded */
#define LOAD_PROCESS_STATUS_UNKNOWN 0x4u /* ...without a wait status */
#define LOAD_PROCESS_NOT_PROFILED 0x8u /* it exec'd a program the agent could not enter, or a fork it did not follow (reason) */

struct load_process {
	uint32_t pid, parent;
	uint64_t start_ns, end_ns;     /* 0: unknown */
	int32_t wait_status;
	uint32_t flags;                /* LOAD_PROCESS_* */
	uint32_t path, command, reason; /* string ids in the profile */
};

struct load_stats {
	uint64_t compressed_bytes; /* trace size as read */
	uint64_t raw_bytes;        /* decompressed */
	unsigned version_major, version_minor;
	int truncated;             /* the stream ended without an END record */
	uint64_t stack_records;
	uint64_t truncated_stacks; /* stacks cut at max_frames */
	uint64_t truncated_samples; /* samples in them */
	uint64_t off_cpu_samples;  /* wall mode: samples of blocked threads */
	uint64_t exited_unsampled; /* END (1.4): weight of threads gone before their wall sample */
	struct load_process *processes; /* in the order they first appear */
	uint32_t nprocesses;
	uint64_t undefined_stack_samples; /* samples naming a stack no record defined */
	uint64_t end_samples;      /* totals the END record states (0 when truncated) */
	uint64_t end_weight;
	uint32_t end_flags;        /* TRACE_END_* */
	uint64_t agent_ns;         /* END (1.2): time the agent's signal handler took */
	uint64_t agent_signals;    /* END (1.2): signals it handled */
	/* Per profile thread (index < nthread_cpu): its CPU time as the agent
	 * measured it when it exited or the process ended; 0: not measured. */
	uint64_t *thread_cpu_ns;
	uint32_t nthread_cpu;
	struct load_meta *meta;    /* every META record, in order */
	uint32_t nmeta;
	uint64_t distinct_addresses;
	uint64_t unresolved_addresses; /* ended up as module+0xoffset */
	/* Figures that could not be true, corrected and said (load_samples.c). */
	uint32_t implausible_loss_threads;   /* threads whose lost count was clamped */
	uint32_t implausible_weight_threads; /* threads with sample weights clamped */
	uint64_t clamped_weights;            /* samples whose weight was clamped */
	uint64_t samples_outside_run;        /* times before the start or after the end */
	uint64_t samples_backwards;          /* earlier than their thread's previous one */
	uint64_t time_bin_ns;                /* LOAD_TIMES_BINNED: the bins' width; 0: a row per sample */
	uint32_t overbusy_threads;           /* more CPU time than the run lasted */
	uint32_t implausible_cpu_threads;    /* measured CPU times dropped (load.c) */
	int implausible_agent_cost;          /* END's agent figures dropped (load.c) */
	int value_saturated;                 /* some total reached the int64 limit */
	/* Allocations (load_allocs.c): the run's figures, as recorded (or scaled with --scale). */
	int has_allocs;
	int alloc_scaled;          /* the figures are estimates (--scale) */
	int64_t allocs, alloc_bytes, frees, freed_bytes;
	int64_t peak_bytes, peak_objects; /* live at the highest live heap */
	uint64_t peak_ns;          /* when, since the start */
	int64_t leaked_bytes, leaked_objects; /* live at the end */
	int64_t temporary, temporary_bytes;
	uint64_t unmatched_frees;  /* frees of blocks the trace never saw allocated (before the agent) */
	uint64_t hook_samples;     /* CPU weight in [ipscope: recording allocations] */
};

/*
 * Load path ("-" for stdin). On a corrupt trace, an unreadable or empty file
 * or a newer major version: an error through o->diag and NULL (the caller
 * exits 1). A truncated trace warns once and loads what was read; symbolizer
 * warnings (missing module, build-id mismatch) are said once each. stats may
 * be NULL; free with load_stats_free.
 */
struct profile *load_trace(const char *path, const struct load_options *o, struct load_stats *stats);
/*
 * Load paths[0..n) summed into one profile (merge.h: profile.ntraces says
 * how many; n == 1 is load_trace), with merge_flags (merge.h's
 * PROFILE_MERGE_*: diff keeps its runs apart). A trace that cannot be read,
 * or whose values mean other things than the first's (mode, interval...):
 * an error through o->diag and NULL.
 */
struct profile *load_traces(const char *const *paths, int n, const struct load_options *o, unsigned merge_flags);
void load_stats_free(struct load_stats *stats);

#endif
