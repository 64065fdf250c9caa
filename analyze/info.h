/*
 * info.h - what analyze info's two outputs share: the facts of one trace
 * gathered once (struct info, made by builtin-info.c) and the helpers that
 * read them; the text report is builtin-info.c's, the JSON one info_json.c's.
 */
#ifndef IPSCOPE_INFO_H
#define IPSCOPE_INFO_H

#include <jansson.h>
#include <stdint.h>

#include "coverage.h"
#include "filter.h"
#include "load.h"
#include "profile.h"

struct info {
	const char *trace;
	const struct profile *p;
	const struct load_stats *st;
	uint32_t value;  /* the threads table's value (--value; default: the displayed one) */
	int64_t totals[PROFILE_MAX_VALUE_TYPES];
	int saturated;
	int64_t *thread_values; /* per thread, of value */
	uint64_t *thread_rows;
	int64_t *thread_cpu; /* per thread, the CPU time its samples stand for (0 without a period type) */
	int64_t *thread_off; /* per thread, its value off CPU (wall mode) */
	const uint64_t *measured; /* per thread, its measured CPU time (NULL: none) */
	uint32_t nmeasured;
	int wall;        /* a wall-mode trace: samples stand for wall time, on or off CPU */
	const struct filter_options *select; /* --pid, --state */
	int list_processes; /* --processes: every process and thread, even of many processes */
	int list_modules;   /* --modules: every module of every process */
};

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
/* The modules table's debug-info column for a module of these PROFILE_MODULE_* flags. */
const char *info_debug_info_text(const char *path, uint32_t flags);
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
/* Wall mode: the agents' sampler threads' CPU time (their main cost), 0 when not said. */
uint64_t info_sampler_cpu_ns(const struct info *in);
/*
 * Many processes (info_programs.c): the text lists one line per program
 * (processes, threads, samples and value of the threads table's type under
 * the column title unit_text) and one per distinct module (path and
 * build-id; share: per module of p, summed), not per process.
 */
int info_many_processes(const struct info *in);
void info_print_programs(const struct info *in, const char *unit_text);
void info_print_distinct_modules(const struct info *in, const double *share);
/* The whole of analyze info --format json for in (a new reference). */
json_t *info_json(const struct info *in);

#endif
