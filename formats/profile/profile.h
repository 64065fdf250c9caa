/*
 * profile.h - the one data model every report and exporter reads.
 *
 * analyze builds a profile from a trace (analyze/load.c: read, symbolize each
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
#define PROFILE_MODULE_MISSING 0x80u           /* file could not be opened */

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

struct profile_location {
	uint64_t address; /* runtime address as sampled (return address for callers) */
	uint32_t module;  /* module index, UINT32_MAX when outside every module */
	uint32_t first_line; /* lines[first_line .. first_line+nlines): innermost first;
				these rows are this location's own, never shared */
	uint32_t nlines;  /* >= 1 */
};

struct profile_stack {
	uint32_t first; /* stack_locations[first .. first+depth): leaf first */
	uint32_t depth;
};

struct profile_thread {
	uint32_t pid;
	uint32_t tid;
	uint32_t name; /* string id */
	uint64_t samples; /* sample records */
	uint64_t weight;  /* summed weights */
};

struct profile_sample {
	uint32_t stack;  /* stack index */
	uint32_t thread; /* thread index */
	uint64_t time_ns; /* CLOCK_MONOTONIC */
	uint64_t weight;  /* timer periods; value in ns = weight * interval_ns */
};

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
	struct profile_sample *samples; /* in time order */
	uint64_t nsamples;
	/* private: allocated sizes of the tables above (profile.c owns these) */
	uint32_t modules_cap, functions_cap, lines_cap, locations_cap;
	uint32_t stacks_cap, stack_locations_cap, threads_cap;
	uint64_t samples_cap;

	/* what the trace says about the run */
	uint32_t command;    /* string id */
	uint32_t mode;       /* string id: "cpu" */
	uint32_t source;     /* string id: sampling source */
	uint64_t interval_ns;
	uint64_t start_realtime_ns; /* wall clock at start, for pprof time_nanos */
	uint64_t start_ns;   /* CLOCK_MONOTONIC at start */
	uint64_t duration_ns;
	uint64_t lost_samples;
	uint64_t total_weight; /* sum of sample weights */
	int32_t wait_status;
	int ended; /* END record seen (not truncated) */
};

/* Empty profile with strings[0] == ""; NULL on out of memory. */
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
/* Append a sample and add its weight to its thread and to total_weight. */
void profile_add_sample(struct profile *p, const struct profile_sample *s);

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

/* Thread title for every report: "tid (name)", or "tid" when unnamed; returns buf. */
const char *profile_thread_title(const struct profile *p, uint32_t thread, char *buf, size_t len);

/* Nanoseconds a weight stands for. */
static inline uint64_t profile_weight_ns(const struct profile *p, uint64_t weight)
{
	return weight * p->interval_ns;
}

#endif
