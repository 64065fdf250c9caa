/*
 * builtin-info.c - "analyze info": what is in a trace. The run (command,
 * start, duration, mode, sampling source and its effective rate, exit), the
 * totals (samples, value types, losses, what the agent's signal handler
 * cost), threads (with the CPU time each measured at its end against what
 * its samples cover, what they miss split by cause (coverage.h); in wall
 * mode each thread's shares on and off CPU),
 * processes (pid, parent, command line, samples, how each ended), modules
 * (build-ids and what debug info exists for each) and the file itself
 * (size, compression, stacks cut at max frames);
 * as text, or with --format json as one JSON object holding every figure the
 * text shows (for scripts and tests).
 *
 * It loads without symbolizing: only the modules are opened, to say whether
 * debug info was found. Text from the trace (command line, thread names,
 * paths, metadata) is escaped for the terminal; JSON escapes it its own way.
 * --pid and --state describe only those processes' or states' samples.
 */
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "alloc.h"
#include "builtin.h"
#include "coverage.h"
#include "debug_hint.h"
#include "filter.h"
#include "info.h"
#include "load.h"
#include "options.h"
#include "report.h"
#include "terminal.h"
#include "trace.h"

/* Everything both formats print, gathered once. */

/* Whether --pid lets process pid be shown. */
int info_pid_shown(const struct info *in, uint32_t pid)
{
	if (!in->select->npids)
		return 1;
	for (int i = 0; i < in->select->npids; i++)
		if (in->select->pids[i] == pid)
			return 1;
	return 0;
}

/* A thread's CPU time as the agent measured it at its end (1.2 traces), 0 when unknown. */
uint64_t info_measured_ns(const struct info *in, uint32_t thread)
{
	return thread < in->nmeasured ? in->measured[thread] : 0;
}

/* Over the threads whose CPU time was measured: how many, that time, and what their samples cover. */
uint32_t info_measured_totals(const struct info *in, uint64_t *measured, uint64_t *sampled)
{
	uint32_t threads = 0;
	*measured = *sampled = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++)
		if (info_measured_ns(in, i)) {
			threads++;
			*measured += info_measured_ns(in, i);
			*sampled += in->thread_cpu[i] > 0 ? (uint64_t)in->thread_cpu[i] : 0;
		}
	return threads;
}

static const char *text(const struct profile *p, uint32_t id, char *buf, size_t len)
{
	return escape_text(profile_string(p, id), buf, len);
}

const char *info_exit_text(const struct profile *p, char *buf, size_t len)
{
	int st = p->wait_status;
	if (!p->ended)
		snprintf(buf, len, "unknown (trace truncated: the program or collect was killed)");
	else if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
			 WCOREDUMP(st) ? ", core dumped" : "");
	else
		snprintf(buf, len, "wait status 0x%x", (unsigned)st);
	return buf;
}

static const char *start_text(const struct profile *p, char *buf, size_t len)
{
	if (!p->start_realtime_ns)
		return "(unknown)";
	time_t sec = (time_t)(p->start_realtime_ns / 1000000000ull);
	struct tm tm;
	localtime_r(&sec, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
	return buf;
}

const char *info_debug_info_text(const char *path, uint32_t flags)
{
	/* The vdso is the kernel's: it has no file to read. */
	if ((flags & PROFILE_MODULE_MISSING) && (path[0] == '[' || strstr(path, "linux-vdso")))
		return "in kernel (vdso)";
	if (flags & PROFILE_MODULE_NO_PERMISSION)
		return "permission denied";
	if (flags & PROFILE_MODULE_NOT_REGULAR)
		return "not a regular file";
	if (flags & PROFILE_MODULE_MISSING)
		return "file missing";
	if (flags & PROFILE_MODULE_BUILD_ID_MISMATCH)
		return "build-id mismatch";
	if (flags & PROFILE_MODULE_NO_DEBUG_INFO)
		return flags & PROFILE_MODULE_HAS_FUNCTIONS ? "symbols only" : "none";
	if (flags & PROFILE_MODULE_HAS_INLINE_FRAMES)
		return "DWARF, inlines";
	if (flags & PROFILE_MODULE_HAS_LINE_NUMBERS)
		return "DWARF";
	return flags & PROFILE_MODULE_HAS_FUNCTIONS ? "symbols only" : "?";
}

/* The time the weights stand for, 0 without a period type. */
static int64_t cpu_ns(const struct info *in)
{
	return in->p->period_type != PROFILE_NO_VALUE ? in->totals[in->p->period_type] : 0;
}

/* Samples per CPU second (wall mode: per second of a thread's wall time): under
 * the tick-bound timer fallback this is well below the requested rate, and
 * weights make up the difference. */
double info_effective_rate(const struct info *in)
{
	int64_t ns = cpu_ns(in);
	return ns > 0 && in->p->period > 0 ? (double)in->p->nsamples * 1e9 / (double)ns : 0.0;
}

/* META keys the fields above do not show already. */
static int meta_shown_elsewhere(const char *key)
{
	static const char *const shown[] = {
		TRACE_META_COMMAND, TRACE_META_MODE, TRACE_META_INTERVAL_NS, TRACE_META_SOURCE,
		TRACE_META_START_REALTIME_NS, TRACE_META_START_MONOTONIC_NS, TRACE_META_SAMPLER_CPU_NS,
	};
	for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
		if (!strcmp(key, shown[k]))
			return 1;
	return 0;
}

/*
 * 1 when a "ipscope X.Y.Z ..." collector string names a newer version than
 * this analyze: its trace may hold records or fields this version skips.
 */
static int collector_is_newer(const char *collector)
{
	unsigned theirs[3] = {0}, ours[3] = {0};
	if (sscanf(collector, "ipscope %u.%u.%u", &theirs[0], &theirs[1], &theirs[2]) < 1 ||
	    sscanf(IPSCOPE_VERSION, "%u.%u.%u", &ours[0], &ours[1], &ours[2]) < 1)
		return 0;
	for (int i = 0; i < 3; i++)
		if (theirs[i] != ours[i])
			return theirs[i] > ours[i];
	return 0;
}

/* The META collector value when it is newer than this analyze, else NULL. */
const char *info_newer_collector(const struct profile *p, const struct load_stats *st)
{
	for (uint32_t i = 0; i < st->nmeta; i++) {
		const char *value = profile_string(p, st->meta[i].value);
		if (!strcmp(profile_string(p, st->meta[i].key), TRACE_META_COLLECTOR) && collector_is_newer(value))
			return value;
	}
	return NULL;
}

/* The CPU samples (allocation rows, which carry no period count, are not). */
static uint64_t cpu_samples(const struct profile *p)
{
	uint32_t count = profile_period_count(p);
	if (count == PROFILE_NO_VALUE)
		return p->nsamples;
	uint64_t n = 0;
	uint32_t col = p->value_types[count].column;
	for (uint64_t i = 0; i < p->nsamples; i++)
		n += p->values[i * p->ncolumns + col] != 0;
	return n;
}

/* collect's own count, written last, against what could be read back. */
static int end_disagrees(const struct info *in)
{
	uint32_t count = profile_period_count(in->p);
	int64_t weight = count != PROFILE_NO_VALUE ? in->totals[count] : 0;
	return in->p->ended && (in->st->end_samples != cpu_samples(in->p) || (int64_t)in->st->end_weight != weight);
}

/* A process's exit, short: "0", "signal 11, core", "?" (not recorded), "-" (running at the end). */
static const char *process_exit_text(const struct load_process *pr, char *buf, size_t len)
{
	int st = pr->wait_status;
	if (!(pr->flags & LOAD_PROCESS_EXITED))
		snprintf(buf, len, "-");
	else if (pr->flags & LOAD_PROCESS_STATUS_UNKNOWN)
		snprintf(buf, len, "?");
	else if (WIFEXITED(st))
		snprintf(buf, len, "%d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "signal %d%s", WTERMSIG(st), WCOREDUMP(st) ? ", core" : "");
	else
		snprintf(buf, len, "0x%x", (unsigned)st);
	return buf;
}

/* Samples and value (of the threads table's type) of process pid. */
int64_t info_process_value(const struct info *in, uint32_t pid, uint64_t *rows)
{
	int64_t v = 0;
	*rows = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++)
		if (in->p->threads[i].pid == pid) {
			v += in->thread_values[i];
			*rows += in->thread_rows[i];
		}
	return v;
}

/* Whether the processes table has something to say: more than one, or one the agent could not enter. */
static int show_processes(const struct info *in)
{
	return in->st->nprocesses > 1 ||
	       (in->st->nprocesses == 1 && (in->st->processes[0].flags & LOAD_PROCESS_NOT_PROFILED));
}

/* Process pid's total of value type v, given every thread's (values, by thread index). */
int64_t info_process_total(const struct info *in, uint32_t pid, const int64_t *values)
{
	int64_t sum = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++)
		if (in->p->threads[i].pid == pid && __builtin_add_overflow(sum, values[i], &sum))
			return values[i] < 0 ? INT64_MIN : INT64_MAX;
	return sum;
}

static void print_processes(const struct info *in)
{
	const struct profile *p = in->p;
	const struct load_stats *st = in->st;
	if (!show_processes(in))
		return;
	char a[4096], b[64], c[64], d[64];
	const char *unit = profile_string(p, p->value_types[in->value].unit);
	/* An allocation trace: each process's allocations and leaks, whatever VALUE shows. */
	uint32_t allocs = profile_find_value_type(p, "alloc_objects"), leaked = profile_find_value_type(p, "inuse_space");
	int64_t *n_allocs = NULL, *n_leaked = NULL;
	if (allocs != PROFILE_NO_VALUE && leaked != PROFILE_NO_VALUE && p->nthreads) {
		n_allocs = calloc_or_abort(p->nthreads, sizeof(*n_allocs));
		n_leaked = calloc_or_abort(p->nthreads, sizeof(*n_leaked));
		profile_thread_totals(p, allocs, n_allocs, NULL);
		profile_thread_totals(p, leaked, n_leaked, NULL);
	}
	printf("Processes:     %u\n", st->nprocesses);
	printf("  %8s %8s %10s %12s", "PID", "PARENT", "SAMPLES", "VALUE");
	if (n_allocs)
		printf(" %10s %12s", "ALLOCS", "LEAKED");
	printf(" %14s  %s\n", "EXIT", "COMMAND");
	for (uint32_t i = 0; i < st->nprocesses; i++) {
		const struct load_process *pr = &st->processes[i];
		uint64_t rows;
		int64_t v = info_process_value(in, pr->pid, &rows);
		if (!info_pid_shown(in, pr->pid))
			continue;
		printf("  %8u %8u %10" PRIu64 " %12s", pr->pid, pr->parent, rows, format_value(v, unit, b, sizeof(b)));
		if (n_allocs)
			printf(" %10" PRId64 " %12s", info_process_total(in, pr->pid, n_allocs),
			       format_value(info_process_total(in, pr->pid, n_leaked), "bytes", d, sizeof(d)));
		printf(" %14s  %s", process_exit_text(pr, c, sizeof(c)), pr->command ? text(p, pr->command, a, sizeof(a)) : "?");
		if (pr->flags & LOAD_PROCESS_NOT_PROFILED)
			printf(" (not profiled: %s)", text(p, pr->reason, a, sizeof(a)));
		else if ((pr->flags & LOAD_PROCESS_FORKED) && pr->command)
			printf(" (fork)");
		printf("\n");
	}
	free(n_allocs);
	free(n_leaked);
}

/* A META value of the trace, NULL when it has none. */
static const char *meta_value(const struct info *in, const char *key)
{
	for (uint32_t i = 0; i < in->st->nmeta; i++)
		if (!strcmp(profile_string(in->p, in->st->meta[i].key), key))
			return profile_string(in->p, in->st->meta[i].value);
	return NULL;
}

/* Wall mode: the agents' sampler threads' CPU time (their main cost), 0 when not said. */
uint64_t info_sampler_cpu_ns(const struct info *in)
{
	const char *v = meta_value(in, TRACE_META_SAMPLER_CPU_NS);
	uint64_t ns = v ? strtoull(v, NULL, 10) : 0;
	/* The agents add it up in memory the program can scribble on: one sampler per process at most
	 * runs the whole run (an impossible figure is not shown). */
	return ns <= (uint64_t)(in->st->nprocesses + 1) * in->p->duration_ns ? ns : 0;
}

/* Wall mode: how much of the threads' time was off CPU, and what could not be sampled. */
static void print_wall(const struct info *in)
{
	int64_t off = 0, all = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++) {
		off += in->thread_off[i];
		all += in->thread_values[i];
	}
	printf("Off CPU:       %" PRIu64 " samples, %.1f%% of %s; %" PRIu64 " intervals of threads that ended "
	       "before their sample\n",
	       in->st->off_cpu_samples, all > 0 ? 100.0 * (double)off / (double)all : 0.0,
	       profile_string(in->p, in->p->value_types[in->value].type), in->st->exited_unsampled);
	char a[64];
	if (info_sampler_cpu_ns(in) && in->p->duration_ns)
		printf("Sampler:       the agent's wall-mode sampler threads used %s of CPU, %.2f%% of one core\n",
		       format_duration(info_sampler_cpu_ns(in), a, sizeof(a)),
		       100.0 * (double)info_sampler_cpu_ns(in) / (double)in->p->duration_ns);
}

/* Whether sampling was off for part of the run (--paused, --delay, --duration). */
static int sampling_was_off(const struct info *in)
{
	const char *paused = meta_value(in, TRACE_META_PAUSED), *delay = meta_value(in, TRACE_META_DELAY_NS),
		   *duration = meta_value(in, TRACE_META_DURATION_NS);
	return (paused && strcmp(paused, "0")) || (delay && strtoull(delay, NULL, 10)) ||
	       (duration && strtoull(duration, NULL, 10));
}

/* Over the threads whose CPU time was measured: what their samples miss, by cause (coverage.h). */
void info_coverage(const struct info *in, struct coverage *c)
{
	memset(c, 0, sizeof(*c));
	uint64_t interval = in->p->period > 0 ? (uint64_t)in->p->period : 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++)
		if (info_measured_ns(in, i))
			coverage_add(c, info_measured_ns(in, i), in->thread_cpu[i] > 0 ? (uint64_t)in->thread_cpu[i] : 0,
				     interval);
}

/*
 * The measured CPU time against the samples. CPU mode: what they miss, each
 * cause with its figure (a trace missing a fifth of a single thread's time is
 * kernel work, not short threads). Wall mode: on CPU means running or
 * runnable (a signalled thread's handler runs once it gets a CPU), so on-CPU
 * samples stand for wall time and may pass the CPU time: the excess is time
 * spent waiting for a CPU, said as such.
 */
static void print_coverage(const struct info *in)
{
	uint64_t measured, sampled;
	uint32_t threads = info_measured_totals(in, &measured, &sampled);
	char a[64], b[64], c[64], d[64];
	if (!threads)
		return;
	printf("Measured CPU:  %s by %u threads at their end; ", format_duration(measured, a, sizeof(a)), threads);
	if (in->wall) {
		printf("their on-CPU samples stand for %s of wall time", format_duration(sampled, b, sizeof(b)));
		if (sampled > measured)
			printf(", %s more than they ran: on CPU counts time runnable, waiting for a CPU\n",
			       format_duration(sampled - measured, c, sizeof(c)));
		else
			printf(" (%.1f%% of their CPU time; on CPU counts runnable time too)\n",
			       100.0 * (double)sampled / (double)measured);
		return;
	}
	printf("their samples cover %s (%.1f%%), %s unsampled\n", format_duration(sampled, b, sizeof(b)),
	       100.0 * (double)sampled / (double)measured,
	       format_duration(measured > sampled ? measured - sampled : 0, c, sizeof(c)));
	struct coverage cov;
	info_coverage(in, &cov);
	if (!coverage_missing(&cov))
		return;
	/* Only the causes that have time, each with it: threads too short for a sample are named only when there are some. */
	const char *sep = "";
	printf("  missing:     ");
	if (cov.unsampled_threads) {
		printf("%s in %u threads that ended before their first sample", format_duration(cov.unsampled_threads_ns, a, sizeof(a)),
		       cov.unsampled_threads);
		sep = "; ";
	}
	if (cov.partial_ns) {
		printf("%s%s in the last partial interval of %u threads (at most %s each)", sep,
		       format_duration(cov.partial_ns, b, sizeof(b)), cov.partial_threads,
		       format_duration(in->p->period > 0 ? (uint64_t)in->p->period : 0, d, sizeof(d)));
		sep = "; ";
	}
	if (cov.unseen_ns) {
		const char *source = in->p->source ? profile_string(in->p, in->p->source) : "";
		printf("%s%s beyond that, not sampled: %s%s", sep, format_duration(cov.unseen_ns, c, sizeof(c)),
		       !strcmp(source, "perf-task-clock+cpu-timer")
			       ? "kernel time outside system calls (page faults, interrupts)"
			       : "time between samples",
		       sampling_was_off(in) ? ", and time while sampling was off" : "");
	}
	printf("\n");
}

static void print_text(const struct info *in)
{
	const struct profile *p = in->p;
	const struct load_stats *st = in->st;
	char a[4096], b[4096], c[512];
	printf("Trace:         %s\n", escape_text(in->trace, a, sizeof(a)));
	if (st->truncated)
		printf("Warning:       truncated trace: read up to its last complete record\n");
	if (info_newer_collector(p, st))
		printf("Warning:       written by %s, newer than this analyze (ipscope %s): "
		       "records it added are skipped\n",
		       escape_text(info_newer_collector(p, st), a, sizeof(a)), IPSCOPE_VERSION);
	printf("Command:       %s\n", p->command ? text(p, p->command, a, sizeof(a)) : "(unknown)");
	printf("Started:       %s\n", start_text(p, a, sizeof(a)));
	printf("Duration:      %s\n", format_duration(p->duration_ns, a, sizeof(a)));
	printf("Mode:          %s, interval %s\n", p->mode ? text(p, p->mode, a, sizeof(a)) : "?",
	       format_duration(p->period > 0 ? (uint64_t)p->period : 0, b, sizeof(b)));
	printf("Source:        %s", p->source ? text(p, p->source, a, sizeof(a)) : "?");
	if (info_effective_rate(in) > 0)
		printf(", effective rate %.0f samples per %s second (requested %.0f)", info_effective_rate(in),
		       in->wall ? "thread" : "CPU", 1e9 / (double)p->period);
	printf("\n");
	uint32_t count = profile_period_count(p);
	if (count != PROFILE_NO_VALUE)
		/* An allocation profile's rows are mostly allocation rows: the CPU
		 * samples are what the count type adds up to. */
		printf("Samples:       %" PRIu64 ", summed weight %" PRId64 " = %s of %s%s\n",
		       p->alloc_scheme ? (uint64_t)in->totals[count] : p->nsamples,
		       in->totals[count], format_value(cpu_ns(in), "nanoseconds", a, sizeof(a)),
		       in->wall ? "threads' wall time" : "CPU", in->saturated ? " (saturated: the true total is larger)" : "");
	else
		printf("Samples:       %" PRIu64 ", %s\n", p->nsamples,
		       report_totals(p, in->totals, in->saturated, a, sizeof(a)));
	printf("Values:       ");
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		printf("%s %s (%s%s)", v ? "," : "", profile_string(p, p->value_types[v].type),
		       profile_string(p, p->value_types[v].unit), v == p->default_value ? ", default" : "");
	printf("\n");
	printf("Lost samples:  %" PRIu64 "\n", p->lost_samples);
	if (end_disagrees(in))
		printf("Warning:       collect wrote %" PRIu64 " samples (weight %" PRIu64 "), %" PRIu64
		       " (weight %" PRId64 ") were read back\n",
		       st->end_samples, st->end_weight, cpu_samples(p),
		       count != PROFILE_NO_VALUE ? in->totals[count] : 0);
	if (st->agent_signals) {
		/* The agent's handler, timed by itself (trace 1.2); the kernel's delivery is not in it. */
		printf("Agent cost:    %.2f us per sample (%s in the handler over %" PRIu64 " signals",
		       p->nsamples ? (double)st->agent_ns / (double)p->nsamples / 1e3 : 0.0,
		       format_duration(st->agent_ns, a, sizeof(a)), st->agent_signals);
		if (cpu_ns(in) > 0)
			printf(", %.2f%% of the %s time sampled", 100.0 * (double)st->agent_ns / (double)cpu_ns(in),
			       in->wall ? "wall" : "CPU");
		printf(")\n");
	}
	if (st->has_allocs && count != PROFILE_NO_VALUE && in->totals[count] > 0)
		/* Time in the hooks is the profiler's, never charged to the program's functions. */
		printf("Recording:     %.2f%% of the CPU samples in [ipscope: recording allocations] (weight %" PRIu64
		       " of %" PRId64 ")\n",
		       100.0 * (double)st->hook_samples / (double)in->totals[count], st->hook_samples, in->totals[count]);
	printf("Exit:          %s\n", info_exit_text(p, a, sizeof(a)));
	if (in->wall)
		print_wall(in);
	print_coverage(in);

	int compact_procs = info_many_processes(in) && !in->list_processes;
	printf("Threads:       %u%s\n", p->nthreads, compact_procs ? " (each: analyze info --processes)" : "");
	if (p->nthreads) {
		const char *unit = profile_string(p, p->value_types[in->value].unit);
		int is_cpu = in->value == p->period_type;
		snprintf(c, sizeof(c), "%s", is_cpu ? (in->wall ? "WALL TIME" : "CPU TIME") : profile_string(p, p->value_types[in->value].type));
		for (char *u = c; *u; u++)
			*u = *u >= 'a' && *u <= 'z' ? (char)(*u - 32) : *u;
		if (compact_procs)
			info_print_programs(in, c);
		else
			printf("  %8s %8s %10s %12s %12s%s  %s\n", "PID", "TID", "SAMPLES", c, "MEASURED",
			       in->wall ? "  ON-CPU OFF-CPU" : "", "NAME");
		for (uint32_t i = 0; i < p->nthreads && !compact_procs; i++) {
			const struct profile_thread *t = &p->threads[i];
			char m[64] = "-";
			if (info_measured_ns(in, i))
				format_duration(info_measured_ns(in, i), m, sizeof(m));
			char shares[32] = "";
			if (in->wall) {
				double off = in->thread_values[i] > 0 ? (double)in->thread_off[i] / (double)in->thread_values[i] : 0;
				snprintf(shares, sizeof(shares), "  %5.1f%%  %5.1f%%", in->thread_values[i] > 0 ? 100.0 * (1 - off) : 0.0,
					 100.0 * off);
			}
			printf("  %8u %8u %10" PRIu64 " %12s %12s%s  %s\n", t->pid, t->tid, in->thread_rows[i],
			       format_value(in->thread_values[i], unit, b, sizeof(b)), m, shares, text(p, t->name, a, sizeof(a)));
		}
	}
	if (!compact_procs)
		print_processes(in);

	double *share = debug_hint_module_shares(p, in->value);
	if (info_many_processes(in) && !in->list_modules)
		info_print_distinct_modules(in, share);
	uint32_t with_id = 0;
	for (uint32_t i = 0; i < p->nmodules; i++)
		with_id += p->modules[i].build_id != 0;
	if (!info_many_processes(in) || in->list_modules)
		printf("Modules:       %u, %u with a build-id (share: of %s, the samples in it)\n", p->nmodules,
		       with_id, profile_string(p, p->value_types[in->value].type));
	for (uint32_t i = 0; i < p->nmodules && (!info_many_processes(in) || in->list_modules); i++) {
		const struct profile_module *m = &p->modules[i];
		const char *id = profile_string(p, m->build_id);
		printf("  %-18s %-8.8s %5.1f%%  %s%s\n", info_debug_info_text(profile_string(p, m->path), m->flags),
		       *id ? id : "-", 100.0 * share[i], text(p, m->path, a, sizeof(a)),
		       m->flags & PROFILE_MODULE_SYSTEM ? " (system)" : "");
	}
	free(share);
	debug_hint_print(stdout, p, in->value, 1, "  ");

	double mib = 1024.0 * 1024.0;
	printf("Trace file:    %.2f MiB, %.2f MiB uncompressed (ratio %.1fx), format %u.%u%s\n",
	       (double)st->compressed_bytes / mib, (double)st->raw_bytes / mib,
	       st->compressed_bytes ? (double)st->raw_bytes / (double)st->compressed_bytes : 0.0, st->version_major,
	       st->version_minor, st->truncated ? ", TRUNCATED" : "");
	printf("Stacks:        %" PRIu64 " distinct (%" PRIu64 " cut at max frames, in %" PRIu64 " samples), %" PRIu64
	       " distinct addresses\n",
	       st->stack_records, st->truncated_stacks, st->truncated_samples, st->distinct_addresses);
	int any = 0;
	for (uint32_t i = 0; i < st->nmeta; i++) {
		const char *key = profile_string(p, st->meta[i].key);
		if (meta_shown_elsewhere(key))
			continue;
		if (!any++)
			printf("Metadata:\n");
		printf("  %-12s %s\n", escape_text(key, b, sizeof(b)), text(p, st->meta[i].value, a, sizeof(a)));
	}
}

struct info_args {
	int json; /* --format json */
	int processes, modules; /* --processes, --modules */
};

static const struct option_choice format_choices[] = {{"text", 0}, {"json", 1}, {NULL, 0}};

static const struct option_row info_rows[] = {
	OPT_CHOICE(0, "format", "FORMAT", struct info_args, json, format_choices,
		   "text (default) or json: one object with every figure\n"
		   "the text shows (totals per value type, threads,\n"
		   "modules, file, metadata, corrected figures)"),
	OPT_FLAG(0, "processes", struct info_args, processes, 1,
		 "a trace of many processes: every process and\n"
		 "thread (default: one line per command)"),
	OPT_FLAG(0, "modules", struct info_args, modules, 1,
		 "a trace of many processes: every module of each\n"
		 "(default: one line per distinct module)"),
	OPT_END(),
};

static const struct analyze_command info_command = {
	.name = "info",
	.synopsis = "analyze info [options] TRACE",
	.summary = "Describe a trace: the run, its totals, threads, modules and the file.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_SELECT | OPTGROUP_PAGER,
	.options = info_rows,
};

int cmd_info(int argc, char **argv)
{
	struct info_args args = {0};
	const struct analyze_command *cmd = &info_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &args, &o);
	if (rc >= 0)
		return rc;
	struct load_options lo = o.load;
	lo.symbolize = 0;
	lo.open_modules = 1;
	lo.offline = 1; /* info says what is here; downloads are for reports */
	const char *trace = o.operands[0];
	struct load_stats st;
	struct profile *p = load_trace(trace, &lo, &st);
	struct info in = {.trace = trace, .p = p, .st = &st, .select = &o.filter,
			  .list_processes = args.processes, .list_modules = args.modules};
	uint64_t *measured = NULL;
	if (p) {
		in.wall = !strcmp(profile_string(p, p->mode), "wall") || !strncmp(profile_string(p, p->mode), "wall,", 5);
		in.measured = st.thread_cpu_ns;
		in.nmeasured = st.nthread_cpu;
	}
	/* --pid, --state: only those samples (and threads); every frame kept, info shows no stacks. */
	struct filter_options select = o.filter;
	select.show_system = 1;
	select.no_inline = 0;
	select.ntids = 0;
	if (p && !filter_is_identity(&select)) {
		struct profile *all = p;
		p = filter_profile(all, &select);
		in.p = p;
		/* The kept threads are the input's in order: their measured CPU times follow them. */
		measured = calloc_or_abort(p->nthreads ? p->nthreads : 1, sizeof(*measured));
		for (uint32_t i = 0, j = 0; i < p->nthreads && j < all->nthreads; j++)
			if (all->threads[j].pid == p->threads[i].pid && all->threads[j].tid == p->threads[i].tid)
				measured[i++] = j < st.nthread_cpu ? st.thread_cpu_ns[j] : 0;
		in.measured = measured;
		in.nmeasured = p->nthreads;
		profile_free(all);
	}
	rc = p ? options_resolve_value(cmd, &o, p, trace, &in.value) : 1;
	if (rc == 0) {
		if (!o.value_name)
			in.value = profile_display_value(p, p->default_value);
		profile_totals(p, in.totals, &in.saturated);
		in.thread_values = calloc_or_abort(p->nthreads, sizeof(*in.thread_values));
		in.thread_rows = calloc_or_abort(p->nthreads, sizeof(*in.thread_rows));
		profile_thread_totals(p, in.value, in.thread_values, in.thread_rows);
		in.thread_cpu = calloc_or_abort(p->nthreads, sizeof(*in.thread_cpu));
		if (p->period_type != PROFILE_NO_VALUE)
			profile_thread_totals(p, p->period_type, in.thread_cpu, NULL);
		in.thread_off = calloc_or_abort(p->nthreads ? p->nthreads : 1, sizeof(*in.thread_off));
		for (uint64_t i = 0; i < p->nsamples; i++) {
			const struct profile_sample *sm = &p->samples[i];
			if (sm->thread >= p->nthreads || !PROFILE_LABEL_OFF_CPU(sm->label))
				continue;
			in.thread_off[sm->thread] += profile_sample_value(p, i, in.value);
			/* Wall mode: what a thread's CPU time is compared with is its time on CPU. */
			if (p->period_type != PROFILE_NO_VALUE)
				in.thread_cpu[sm->thread] -= profile_sample_value(p, i, p->period_type);
		}
		if (args.json) {
			json_t *doc = info_json(&in);
			json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(doc);
		} else {
			options_start_pager(&o);
			print_text(&in);
		}
		free(in.thread_values);
		free(in.thread_rows);
		free(in.thread_cpu);
		free(in.thread_off);
		rc = finish_output(cmd);
	}
	if (p)
		load_stats_free(&st);
	free(measured);
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}
