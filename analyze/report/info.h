/*
 * info.h - analyze info's facts of one trace, gathered once (struct info,
 * info.c), and their two renderings: the text (info_text.c, with
 * info_programs.c for a trace of many processes) and the JSON object
 * (info_json.c). builtin-info.c parses, loads and picks one.
 */
#ifndef IPSCOPE_INFO_H
#define IPSCOPE_INFO_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "coverage.h"
#include "filter.h"
#include "load.h"
#include "profile.h"

struct info {
	const char *trace;
	struct profile *p;  /* the loaded trace, or its copy of select's samples (info_build): owned */
	const struct load_stats *st;
	uint32_t value;  /* the threads table's value (--value; default: the displayed one) */
	int64_t totals[PROFILE_MAX_VALUE_TYPES];
	int saturated;
	int64_t *thread_values; /* per thread, of value */
	uint64_t samples; /* trace samples (profile_samples_total: rows may stand for many) */
	uint64_t *thread_rows;
	int64_t *thread_cpu; /* per thread, the CPU time its samples stand for (0 without a period type) */
	int64_t *thread_off; /* per thread, its value off CPU (wall mode) */
	uint64_t *measured;  /* per thread, its measured CPU time (0: not measured) */
	uint32_t nmeasured;
	int wall;        /* a wall-mode trace: samples stand for wall time, on or off CPU */
	const struct filter_options *select; /* --pid, --state */
};

/*
 * The facts of trace, loaded as p with st (in owns p from then on: in->p is
 * p, or its copy holding only the samples select keeps, --pid and --state),
 * the threads table of value type value.
 */
void info_build(struct info *in, const char *trace, struct profile *p, const struct load_stats *st,
		const struct filter_options *select, uint32_t value);
/* Free what info_build made, in->p included (not st). */
void info_release(struct info *in);

/* Process pid's total of a value type, given that type's total of every thread (by thread index). */
int64_t info_process_total(const struct info *in, uint32_t pid, const int64_t *values);
/* Whether --pid lets process pid be shown. */
int info_pid_shown(const struct info *in, uint32_t pid);
/* A thread's CPU time as the agent measured it at its end (1.2 traces), 0 when unknown. */
uint64_t info_measured_ns(const struct info *in, uint32_t thread);
/* Over the threads whose CPU time was measured: how many, that time, and what their samples cover. */
uint32_t info_measured_totals(const struct info *in, uint64_t *measured, uint64_t *sampled);
/* Over the threads whose CPU time was measured: what their samples miss, by cause (coverage.h). */
void info_coverage(const struct info *in, struct coverage *c);
/* CPU time threads used after their last sample, charged at their ends (META exit_charged), and in how many
 * threads: 0 when none, or when the figures cannot be true. */
uint64_t info_exit_charged_ns(const struct info *in, uint32_t *threads);
/* The modules table's debug-info column for a module of these PROFILE_MODULE_* flags. */
const char *info_debug_info_text(const char *path, uint32_t flags);
/* The time the weights stand for, 0 without a period type. */
int64_t info_cpu_ns(const struct info *in);
/* Samples per CPU second (wall mode: per second of a thread's wall time): under
 * the tick-bound timer fallback this is well below the requested rate, and
 * weights make up the difference. */
double info_effective_rate(const struct info *in);
/* How the program ended ("exited with status 0", "killed by signal 9"), in buf. */
const char *info_exit_text(const struct profile *p, char *buf, size_t len);
/* The META collector value when it is newer than this analyze, else NULL. */
const char *info_newer_collector(const struct profile *p, const struct load_stats *st);
/* Samples and value (of the threads table's type) of process pid. */
int64_t info_process_value(const struct info *in, uint32_t pid, uint64_t *rows);
/* A META value of the trace, NULL when it has none. */
const char *info_meta_value(const struct info *in, const char *key);
/* Wall mode: the agents' sampler threads' CPU time (their main cost), 0 when not said. */
uint64_t info_sampler_cpu_ns(const struct info *in);
/* A trace of many processes: its text lists programs and distinct modules, not each process and mapping. */
int info_many_processes(const struct info *in);

/* What the text shows of a trace of many processes. */
struct info_text_options {
	int every_process; /* --processes: every process and thread, not one line per command */
	int every_module;  /* --modules: every module of every process, not one line per distinct one */
};

/* analyze info's text (info_text.c): the run, totals, threads, processes, modules, the file. */
void info_print_text(FILE *out, const struct info *in, const struct info_text_options *to);
/*
 * Many processes (info_programs.c): one line per program (processes,
 * threads, samples and value of the threads table's type under the column
 * title unit_text) and one per distinct module (path and build-id; share:
 * per module of p, summed), not per process.
 */
void info_print_programs(FILE *out, const struct info *in, const char *unit_text);
void info_print_distinct_modules(FILE *out, const struct info *in, const double *share);

/* The whole of analyze info --format json for in (a new reference). */
json_t *info_json(const struct info *in);
/* info_json(in) written to out, indented, with a final newline. */
void info_print_json(FILE *out, const struct info *in);

#endif
