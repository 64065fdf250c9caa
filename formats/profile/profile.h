/*
 * profile.h - the one data model every report and exporter reads.
 *
 * analyze builds a profile from a trace (analyze/load/load.c: read, symbolize each
 * distinct address once, intern), then filters produce new profiles, and
 * reports (tree, flat, source) and exporters (pprof, speedscope, folded) are
 * views over one. Tables are plain arrays indexed by uint32_t ids; strings are
 * interned and id 0 is always "".
 *
 * Shape, as pprof has it:
 *   sample -> stack -> locations (leaf first) -> lines (inline chain,
 *   innermost first) -> function -> module.
 * A "frame" in a report is one line of one location: an inlined call is a
 * frame of its own.
 *
 * Values, as pprof's sample_type list: a profile has value types (type and
 * unit, e.g. samples/count and cpu/nanoseconds), a default one, and the
 * period of its time type; every sample carries signed 64-bit values, and
 * every report and exporter is told which type to show. Totals, per type and
 * per thread, are computed from the samples, never stored beside them.
 */
#ifndef IPSCOPE_PROFILE_H
#define IPSCOPE_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/* module flags */
#define PROFILE_MODULE_HAS_FUNCTIONS 0x01u    /* some names were resolved */
#define PROFILE_MODULE_HAS_FILENAMES 0x02u
#define PROFILE_MODULE_HAS_LINE_NUMBERS 0x04u
#define PROFILE_MODULE_HAS_INLINE_FRAMES 0x08u
#define PROFILE_MODULE_SYSTEM 0x10u           /* libc, libstdc++, ld.so, the agent... */
#define PROFILE_MODULE_BUILD_ID_MISMATCH 0x20u /* file on disk is not what ran */
#define PROFILE_MODULE_NO_DEBUG_INFO 0x40u     /* symbol table only */
#define PROFILE_MODULE_MISSING 0x80u           /* file could not be opened (any reason) */
#define PROFILE_MODULE_NO_PERMISSION 0x100u    /* ...because reading it was not permitted */
#define PROFILE_MODULE_NOT_REGULAR 0x200u      /* ...because it is a FIFO, device, directory */

struct profile_module {
	uint32_t path;     /* string id */
	uint32_t build_id; /* string id: lowercase hex, "" when none */
	uint64_t start;    /* runtime range of the executable segment */
	uint64_t limit;
	uint64_t file_offset; /* file offset mapped at start */
	uint64_t load_bias;
	uint32_t flags; /* PROFILE_MODULE_* */
};

/* function flags */
#define PROFILE_FUNCTION_SYSTEM 0x1u  /* hidden unless -C (see PROFILE_MODULE_SYSTEM) */
#define PROFILE_FUNCTION_UNKNOWN 0x2u /* name is "module+0xoffset" */
/* What was allocated ("malloc 32 B"): a leaf below an allocating frame, not
 * code; flat charges it to the frame above (analyze/load/load_alloc_leaves.c). */
#define PROFILE_FUNCTION_ALLOC_LEAF 0x4u

struct profile_function {
	uint32_t name;        /* string id: demangled, clone suffixes merged */
	uint32_t system_name; /* string id: as in the binary (mangled) */
	uint32_t file;        /* string id of the defining source file, 0 unknown */
	uint32_t start_line;  /* 0 unknown */
	uint32_t module;      /* module index */
	uint32_t flags;       /* PROFILE_FUNCTION_* */
};

/* One entry of an inline chain: the function and the line within it. */
struct profile_line {
	uint32_t function; /* function index */
	uint32_t file;     /* string id of the file this line is in, 0 unknown */
	uint32_t line;     /* 0 unknown */
	uint32_t inlined;  /* 1 when this call was inlined into the next entry */
};

/* location flags */
/* The address is a return address: the instruction it stands for (the call)
 * is the one before it. A leaf sampled exactly is not (analyze source --asm
 * charges each location to the instruction it means). */
#define PROFILE_LOCATION_RETURN 0x1u

struct profile_location {
	uint64_t address; /* runtime address as sampled (return address for callers) */
	uint32_t module;  /* module index, UINT32_MAX when outside every module */
	uint32_t first_line; /* lines[first_line .. first_line+nlines): innermost first;
				these rows are this location's own, never shared */
	uint32_t nlines;  /* >= 1 */
	uint32_t flags;   /* PROFILE_LOCATION_* (in the padding: the struct stays 24 bytes) */
};

struct profile_stack {
	uint32_t first; /* stack_locations[first .. first+depth): leaf first */
	uint32_t depth;
};

/* thread flags */
#define PROFILE_THREAD_DIFF_BASE 0x1u /* a diff's: this thread ran in the base run */

struct profile_thread {
	uint32_t pid;
	uint32_t tid;
	uint32_t name;  /* string id */
	/*
	 * PROFILE_THREAD_*. A diff profile (analyze/diff/diff.h) holds the threads
	 * of both runs, the base run's flagged, with the base's values negated:
	 * as pprof's -diff_base has it, where base samples carry the label
	 * pprof::base. A run is a set of threads, so the flag costs nothing
	 * per sample.
	 */
	uint32_t flags;
	/* Totals are computed from the samples (profile_thread_totals), never
	 * stored here: a filter or a merge cannot leave them stale. */
	/*
	 * String id of the program its process runs, by its basename ("cc1",
	 * not the command line): what --comm selects and what tells apart the
	 * programs of one trace (flat's module names, folded roots, pprof's
	 * command label). 0: unknown (a trace before 1.4, a built profile).
	 */
	uint32_t command;
	/*
	 * Which trace of a merge that keeps runs apart (merge.h's
	 * PROFILE_MERGE_RUNS_APART, diff's sets of runs) the thread ran in:
	 * each thread is one run's. 0 otherwise.
	 */
	uint32_t run;
};

/*
 * A value type, as pprof's sample_type: what the numbers of a sample mean.
 * Each is read from one stored column of the samples' values, times scale:
 * a CPU trace stores one column, the weight in timer periods, which
 * samples/count shows as it is and cpu/nanoseconds times the interval, so a
 * sample costs 8 bytes of values, not 16 (with 10 million samples that is
 * 76 MiB less). A type of its own column has scale 1.
 */
struct profile_value_type {
	uint32_t type;   /* string id: "samples", "cpu", "wall", later "alloc_space"... */
	uint32_t unit;   /* string id: "count", "nanoseconds", "bytes" */
	uint32_t column; /* < profile.ncolumns */
	int64_t scale;   /* value = column value x scale (saturating) */
};

#define PROFILE_MAX_VALUE_TYPES 12
#define PROFILE_NO_VALUE UINT32_MAX

/*
 * One sample: a stack seen in a thread at a time, with one signed value per
 * stored column in profile.values (signed: a diff is new minus base). A
 * sample need not be one timer tick: an allocation profile holds one sample
 * per (stack, thread) with summed values, and nothing in the model counts
 * sample rows as anything but rows.
 *
 * Labels that later kinds of traces add go here, beside stack and thread, as
 * one 32-bit word (the struct grew from 16 to 24 bytes for it): a wall
 * sample's thread state (on/off CPU) and the system call it waits in
 * (PROFILE_LABEL_*), later an allocation's size class. The state is a label,
 * not a split of the values, because it is a property of the moment: a
 * filter (--state) selects samples by it and every report, exporter and diff
 * then reads an ordinary profile; the values keep their one meaning (wall
 * time). A process id is the thread's (profile_thread.pid), not a
 * per-sample label.
 */
struct profile_sample {
	uint32_t stack;  /* stack index */
	uint32_t thread; /* thread index */
	uint64_t time_ns; /* CLOCK_MONOTONIC; 0 when the sample stands for a whole run */
	uint32_t label;  /* PROFILE_LABEL(state, syscall); 0: on CPU (every CPU-profile sample) */
	/*
	 * Trace samples summed into this row beyond its first (in the padding:
	 * the struct stays 24 bytes). A loaded profile keeps one row per
	 * distinct (stack, thread, label, weight) with time_ns its earliest
	 * sample's, so that memory follows what is shown, not the run's length
	 * (load_options.sample_times keeps rows in time instead: one per sample,
	 * or past a bound one per key and time bin, see sample_bin_ns). Reports
	 * that say how many samples there were count 1 + merged per row
	 * (profile_sample_count); 0 in every row a profile builds otherwise.
	 */
	uint32_t merged;
};

/* The trace samples row s stands for. */
static inline uint64_t profile_sample_count(const struct profile_sample *s)
{
	return 1 + (uint64_t)s->merged;
}

/* A sample's state, as the trace's (TRACE_STATE_*): 0 on CPU, 1 waiting for one, 2 blocked in a system
 * call, 3 in an uninterruptible wait, 4 stopped; bits 8-31 hold the system call + 1 (0: none). */
#define PROFILE_STATE_ON_CPU 0u
#define PROFILE_STATE_RUNNABLE 1u
#define PROFILE_LABEL(state, syscall) (((uint32_t)(state) & 0xffu) | ((uint32_t)((syscall) + 1) << 8))
#define PROFILE_LABEL_STATE(label) ((label) & 0xffu)
#define PROFILE_LABEL_SYSCALL(label) ((int32_t)((label) >> 8) - 1)
/* Off CPU: blocked, waiting or stopped (a runnable thread wants a CPU: on). */
#define PROFILE_LABEL_OFF_CPU(label) (PROFILE_LABEL_STATE(label) > PROFILE_STATE_RUNNABLE)

#define PROFILE_END_DETACHED 1 /* the program ran on after the trace ended */
#define PROFILE_END_STATUS_UNKNOWN 2 /* the program ended, its status unknown */

struct profile {
	/* string table: strings[0] == "" */
	char **strings;
	uint32_t nstrings;
	uint32_t strings_capacity;
	void *string_index; /* private hash for interning */

	struct profile_module *modules;
	uint32_t nmodules;
	struct profile_function *functions;
	uint32_t nfunctions;
	struct profile_line *lines;
	uint32_t nlines;
	struct profile_location *locations;
	uint32_t nlocations;
	struct profile_stack *stacks;
	uint32_t nstacks;
	uint32_t *stack_locations;
	uint32_t nstack_locations;
	struct profile_thread *threads;
	uint32_t nthreads;
	struct profile_sample *samples; /* in order of their first sample's arrival */
	uint64_t nsamples;
	/* Sample i's stored values: values[i * ncolumns .. i * ncolumns + ncolumns). */
	int64_t *values;

	/* Value types: what the columns mean (profile_add_value_type). */
	struct profile_value_type value_types[PROFILE_MAX_VALUE_TYPES];
	uint32_t nvalue_types;
	uint32_t ncolumns;
	uint32_t default_value; /* the type reports show unless told otherwise */
	uint32_t period_type;   /* type whose unit period is in (pprof period_type), or
				   PROFILE_NO_VALUE; a CPU trace's is cpu/nanoseconds */
	int64_t period;         /* sampling interval in period_type's unit */

	/* private: allocated sizes of the tables above (profile.c owns these) */
	uint32_t modules_cap, functions_cap, lines_cap, locations_cap;
	uint32_t stacks_cap, stack_locations_cap, threads_cap;
	uint64_t samples_cap, values_cap;

	/* what the trace says about the run */
	uint32_t command;    /* string id */
	uint32_t mode;       /* string id: "cpu" or "wall" */
	uint32_t source;     /* string id: sampling source */
	uint64_t start_realtime_ns; /* wall clock at start, for pprof time_nanos */
	uint64_t start_ns;   /* CLOCK_MONOTONIC at start */
	uint64_t duration_ns;
	uint64_t lost_samples;
	int32_t wait_status;
	int ended; /* END record seen (not truncated) */
	int end_unknown; /* collect -p (1.6): PROFILE_END_DETACHED or PROFILE_END_STATUS_UNKNOWN; 0: wait_status holds */
	/*
	 * Traces summed into this profile (merge.h); 0 for one loaded alone.
	 * Then duration_ns and lost_samples are the runs' sums, command the
	 * first trace's, start_* the earliest.
	 */
	uint32_t ntraces;
	/*
	 * The values are exact counts, not samples (an allocation trace
	 * recorded at rate 1.0): they carry no sampling noise. Set by the
	 * loader from what the trace's META says of its sampling. It is about
	 * the allocation types: a trace with CPU samples too has noise there.
	 */
	int exact;
	/*
	 * Each sample row of the sampled types (period_type and the count it
	 * derives from) is one signal, whatever number of periods its weight
	 * stands for (a CPU-time timer's 1 + overruns, a wall sample of a
	 * thread looked at every few ticks): set by the loader for a trace's
	 * CPU and wall samples. diff's noise test takes those rows as its
	 * observations; a profile built otherwise (rows that aggregate many
	 * samples) is judged on its count type.
	 */
	int rows_are_signals;
	/*
	 * Allocation profiles (analyze/load/load_allocs.c) hold aggregated rows, not
	 * one sample per event: per (stack, thread, leaf "what was allocated"),
	 * the types alloc_objects/count and alloc_space/bytes (allocated),
	 * inuse_objects/inuse_space (the net live change: summed over a stack's
	 * rows, what was live at the end, i.e. leaked), peak_objects/peak_space
	 * (what was live at the moment of the highest live heap) and
	 * temporary_objects/temporary_space (freed before the allocating
	 * thread allocated again). Loaded for plots (load_options.alloc_bins),
	 * a stack has one row per time bin, at the bin's middle, and summing
	 * inuse_space in time order gives the live heap over time; its
	 * peak_* rows sit in the peak's bin. Otherwise one row per key, time 0.
	 * time_resolution_ns: the bins' width (0: rows are not binned).
	 */
	uint64_t time_resolution_ns;
	/*
	 * Sample rows summed per time bin (analyze's loader past its bound on
	 * rows in time): the bins' width, each row's time its bin's middle, so
	 * that a plot spreads the row over its bin; 0: each row of samples has
	 * its own sample's time (or stands for the whole run).
	 */
	uint64_t sample_bin_ns;
	/*
	 * Which allocations were recorded (PROFILE_ALLOCS_*; 0: no allocation
	 * types), the parameter (RATE, or the mean bytes N), whether the
	 * values were scaled up to estimates (--scale), and when the live heap
	 * was highest (ns since the start): the one allocation figure the rows
	 * cannot give. Everything else (totals, leaks = inuse, peak = summed
	 * peak_space, frees = alloc - inuse objects) is computed from the rows.
	 */
	uint32_t alloc_scheme;
	double alloc_parameter;
	int alloc_scaled;
	uint64_t alloc_peak_ns;
	/*
	 * A view of the allocations (analyze's --leaks, --peak, --temporary)
	 * keeps some blocks only, and every allocation type then counts only
	 * those: the run's figures (of the selected threads) before it stay
	 * here for headers, as PROFILE_ALLOC_RUN_* totals. alloc_view: string
	 * id of the view's type ("inuse_space"), 0 without a view.
	 */
	uint32_t alloc_view;
	int64_t alloc_run[8];
};

/* alloc_run's order (load_alloc_rows.c's): objects, then bytes, of each. */
#define PROFILE_ALLOC_RUN_ALLOC 0
#define PROFILE_ALLOC_RUN_INUSE 2
#define PROFILE_ALLOC_RUN_PEAK 4
#define PROFILE_ALLOC_RUN_TEMPORARY 6

#define PROFILE_ALLOCS_ALL 1u   /* every allocation: exact */
#define PROFILE_ALLOCS_RATE 2u  /* each with probability alloc_parameter */
#define PROFILE_ALLOCS_BYTES 3u /* each byte with probability 1 / alloc_parameter */

/* Empty profile with strings[0] == "" and no value types; NULL on out of memory. */
struct profile *profile_new(void);
void profile_free(struct profile *p);
/* Id of s, adding it if new; never fails (aborts on out of memory). */
uint32_t profile_intern(struct profile *p, const char *s);
/* Same for a string of n bytes that need not be NUL-terminated. */
uint32_t profile_intern_n(struct profile *p, const char *s, size_t n);
/* The string with id (id < nstrings). */
static inline const char *profile_string(const struct profile *p, uint32_t id)
{
	return p->strings[id];
}

/* Append one row to a table and return its index (aborts on out of memory). */
uint32_t profile_add_module(struct profile *p, const struct profile_module *m);
uint32_t profile_add_function(struct profile *p, const struct profile_function *f);
uint32_t profile_add_line(struct profile *p, const struct profile_line *l);
uint32_t profile_add_location(struct profile *p, const struct profile_location *l);
uint32_t profile_add_thread(struct profile *p, const struct profile_thread *t);
/* Append a stack of depth location ids (leaf first); returns the stack index. */
uint32_t profile_add_stack(struct profile *p, const uint32_t *locations, uint32_t depth);
/* Hash of a stack's location ids: what finding a stack by its locations keys on. */
uint64_t profile_locations_hash(const uint32_t *locations, uint32_t depth);
/* 1 when stack is exactly these depth locations. */
int profile_stack_is(const struct profile *p, uint32_t stack, const uint32_t *locations, uint32_t depth);
/* Append a sample with its ncolumns stored values; aborts without value types. */
void profile_add_sample(struct profile *p, const struct profile_sample *s, const int64_t *values);
/* Room for n samples in all, allocated exactly (growth doubles): for a builder that knows its count. */
void profile_reserve_samples(struct profile *p, uint64_t n);

/* ---- value types ---- */

/* Add a type stored in a column of its own (0 in samples added before); its index. */
uint32_t profile_add_value_type(struct profile *p, const char *type, const char *unit);
/* Add a type that reads type of's column times scale; its index. */
uint32_t profile_add_scaled_value_type(struct profile *p, const char *type, const char *unit,
				       uint32_t of, int64_t scale);
/*
 * A CPU profile's types: samples/count (the weight in timer periods, stored,
 * the default) and cpu/nanoseconds (samples x period_ns, the period type).
 */
void profile_set_cpu_value_types(struct profile *p, int64_t period_ns);
/* Change the period (and the scale of every type derived from it by the period). */
void profile_set_period(struct profile *p, int64_t period);
/* Index of the type named name ("samples", "cpu"...), or PROFILE_NO_VALUE. */
uint32_t profile_find_value_type(const struct profile *p, const char *name);
/* Names of every type, ", "-separated, into buf (for messages); returns buf. */
const char *profile_value_type_names(const struct profile *p, char *buf, size_t len);
/*
 * What a viewer (speedscope, pprof's default) shows for value: a count of
 * timer periods as the time it stands for (the period type), anything else
 * as itself.
 */
uint32_t profile_display_value(const struct profile *p, uint32_t value);

/* Sample i's value of type v. */
static inline int64_t profile_sample_value(const struct profile *p, uint64_t i, uint32_t v)
{
	const struct profile_value_type *t = &p->value_types[v];
	int64_t x = p->values[i * p->ncolumns + t->column], r;
	if (t->scale == 1)
		return x;
	if (__builtin_mul_overflow(x, t->scale, &r))
		return (x < 0) != (t->scale < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

/* A column total scaled to type v (saturating; *saturated set when it clamps). */
int64_t profile_scale_value(const struct profile *p, uint32_t v, int64_t column_total, int *saturated);
/* Sum of every sample's value of type v (saturating). */
int64_t profile_value_total(const struct profile *p, uint32_t v, int *saturated);
/* Every type's total at once (totals has nvalue_types entries), one pass. */
void profile_totals(const struct profile *p, int64_t *totals, int *saturated);
/*
 * The stored count type the period type is derived from (samples, whose
 * time is samples x period), or PROFILE_NO_VALUE: reports describe such a
 * profile as "weight W = T of CPU".
 */
uint32_t profile_period_count(const struct profile *p);
/*
 * The count type behind type v (what sampling noise is judged on): v itself
 * when it is a stored count; a stored count read from the same column (cpu
 * is samples x interval); the objects of a type of space (alloc_space:
 * alloc_objects); else PROFILE_NO_VALUE.
 */
uint32_t profile_count_type(const struct profile *p, uint32_t v);
/* Trace samples the rows stand for: the sum of profile_sample_count (what reports print as "Samples"). */
uint64_t profile_samples_total(const struct profile *p);
/* Per thread (out has nthreads entries): summed value of type v and, if
 * rows is not NULL, the number of trace samples (profile_sample_count). */
void profile_thread_totals(const struct profile *p, uint32_t v, int64_t *out, uint64_t *rows);

/* ---- walks ---- */

/* Frames (inline-chain entries of its locations) stack expands to. */
uint32_t profile_stack_nframes(const struct profile *p, uint32_t stack);
/* Most frames any stack of p expands to; 0 when p has no stacks. */
uint32_t profile_max_stack_frames(const struct profile *p);
/*
 * The frames of stack, root first: indices into p->lines, each location's
 * inline chain outermost (the real function) first. frames must hold
 * profile_stack_nframes(p, stack) entries; returns that count.
 */
uint32_t profile_stack_frames(const struct profile *p, uint32_t stack, uint32_t *frames);

/* 1 when p is a diff (some thread is flagged PROFILE_THREAD_DIFF_BASE). */
int profile_is_diff(const struct profile *p);

/*
 * A trace of many programs (a build): 1 when p's threads run more than one
 * program (profile_thread.command), resp. belong to more than one process
 * (of a diff: in one of its runs).
 * Reports name modules and programs only then, so that the output of one
 * program stays as it was.
 */
int profile_many_programs(const struct profile *p);
int profile_many_processes(const struct profile *p);
/* The basename of module m's path ("libc.so.6"). */
const char *profile_module_name(const struct profile *p, uint32_t m);

/* Thread title for every report: "tid (name)", or "tid" when unnamed; returns buf. */
const char *profile_thread_title(const struct profile *p, uint32_t thread, char *buf, size_t len);

#endif
