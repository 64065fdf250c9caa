/*
 * info_text.c - analyze info's text (info.h): the run (command, start,
 * duration, mode, sampling source and its effective rate, exit), the totals
 * (samples, value types, losses, what the agent's signal handler cost),
 * threads (with the CPU time each measured at its end against what its
 * samples cover, what they miss split by cause (coverage.h); in wall mode
 * each thread's shares on and off CPU), processes (pid, parent, command
 * line, samples, how each ended), modules (build-ids and what debug info
 * exists for each) and the file itself (size, compression, stacks cut at
 * max frames). A trace of many processes lists programs and distinct
 * modules instead (info_programs.c). Text from the trace (command line,
 * thread names, paths, metadata) is escaped for the terminal.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "alloc.h"
#include "debug_hint.h"
#include "info.h"
#include "report.h"
#include "terminal.h"
#include "trace.h"

/* String id of p as the terminal shows it, in buf. */
static const char *text(const struct profile *p, uint32_t id, char *buf, size_t len)
{
	return escape_text(profile_string(p, id), buf, len);
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

/* META keys the fields above do not show already. */
static int meta_shown_elsewhere(const char *key)
{
	static const char *const shown[] = {
		TRACE_META_COMMAND, TRACE_META_MODE, TRACE_META_INTERVAL_NS, TRACE_META_SOURCE,
		TRACE_META_START_REALTIME_NS, TRACE_META_START_MONOTONIC_NS, TRACE_META_SAMPLER_CPU_NS,
		TRACE_META_ALLOCS_UNRECORDED, TRACE_META_ALLOC_BYTES_UNRECORDED, TRACE_META_DEEPBIND_LIBRARIES,
		TRACE_META_DEEPBIND_LIBRARY, TRACE_META_ALLOCATOR_API, TRACE_META_SECCOMP,
	};
	for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
		if (!strcmp(key, shown[k]))
			return 1;
	return 0;
}

/* The CPU samples (allocation rows, which carry no period count, are not). */
static uint64_t cpu_samples(const struct profile *p)
{
	uint32_t count = profile_period_count(p);
	if (count == PROFILE_NO_VALUE)
		return profile_samples_total(p);
	uint64_t n = 0;
	uint32_t col = p->value_types[count].column;
	for (uint64_t i = 0; i < p->nsamples; i++)
		if (p->values[i * p->ncolumns + col] != 0)
			n += profile_sample_count(&p->samples[i]);
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

/* Allocations the agent could not record, when collect counted some (trace META, at the end). */
static void print_unrecorded(FILE *out, const struct info *in)
{
	char a[64], b[512];
	const char *allocs = info_meta_value(in, TRACE_META_ALLOCS_UNRECORDED);
	const char *bytes = info_meta_value(in, TRACE_META_ALLOC_BYTES_UNRECORDED);
	const char *deepbind = info_meta_value(in, TRACE_META_DEEPBIND_LIBRARIES);
	const char *library = info_meta_value(in, TRACE_META_DEEPBIND_LIBRARY);
	if (allocs)
		fprintf(out, "Unrecorded:    %s allocations (%s) made before the agent could start, on threads a "
			"library's constructor started\n", escape_text(allocs, b, sizeof(b)),
			format_value(bytes ? strtoll(bytes, NULL, 10) : 0, "bytes", a, sizeof(a)));
	if (deepbind)
		fprintf(out, "Unrecorded:    what the constructors of %s RTLD_DEEPBIND libraries allocated inside dlopen "
			"(first: %s); their later allocations are recorded\n", escape_text(deepbind, a, sizeof(a)),
			library ? escape_text(library, b, sizeof(b)) : "?");
	const char *seccomp = info_meta_value(in, TRACE_META_SECCOMP);
	if (seccomp)
		fprintf(out, "Unprofiled:    what the program did under the seccomp filter it installed (%s): the "
			"threads and processes it started there\n", escape_text(seccomp, b, sizeof(b)));
	const char *api = info_meta_value(in, TRACE_META_ALLOCATOR_API);
	if (api)
		fprintf(out, "Unrecorded:    what the program allocated through an allocator's own API (%s)\n",
			escape_text(api, b, sizeof(b)));
}

/* Whether the processes table has something to say: more than one, or one the agent could not enter. */
static int show_processes(const struct info *in)
{
	return in->st->nprocesses > 1 ||
	       (in->st->nprocesses == 1 && (in->st->processes[0].flags & LOAD_PROCESS_NOT_PROFILED));
}

static void print_processes(FILE *out, const struct info *in)
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
	fprintf(out, "Processes:     %u\n", st->nprocesses);
	fprintf(out, "  %8s %8s %10s %12s", "PID", "PARENT", "SAMPLES", "VALUE");
	if (n_allocs)
		fprintf(out, " %10s %12s", "ALLOCS", "LEAKED");
	fprintf(out, " %14s  %s\n", "EXIT", "COMMAND");
	for (uint32_t i = 0; i < st->nprocesses; i++) {
		const struct load_process *pr = &st->processes[i];
		uint64_t rows;
		int64_t v = info_process_value(in, pr->pid, &rows);
		if (!info_pid_shown(in, pr->pid))
			continue;
		fprintf(out, "  %8u %8u %10" PRIu64 " %12s", pr->pid, pr->parent, rows, format_value(v, unit, b, sizeof(b)));
		if (n_allocs)
			fprintf(out, " %10" PRId64 " %12s", info_process_total(in, pr->pid, n_allocs),
				format_value(info_process_total(in, pr->pid, n_leaked), "bytes", d, sizeof(d)));
		fprintf(out, " %14s  %s", process_exit_text(pr, c, sizeof(c)), pr->command ? text(p, pr->command, a, sizeof(a)) : "?");
		if (pr->flags & LOAD_PROCESS_NOT_PROFILED)
			fprintf(out, " (not profiled: %s)", text(p, pr->reason, a, sizeof(a)));
		else if ((pr->flags & LOAD_PROCESS_FORKED) && pr->command)
			fprintf(out, " (fork)");
		fprintf(out, "\n");
	}
	free(n_allocs);
	free(n_leaked);
}

/* Wall mode: how much of the threads' time was off CPU, and what could not be sampled. */
static void print_wall(FILE *out, const struct info *in)
{
	int64_t off = 0, all = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++) {
		off += in->thread_off[i];
		all += in->thread_values[i];
	}
	fprintf(out, "Off CPU:       %" PRIu64 " samples, %.1f%% of %s; %" PRIu64 " intervals of threads that ended "
		"before their sample\n",
		in->st->off_cpu_samples, all > 0 ? 100.0 * (double)off / (double)all : 0.0,
		profile_string(in->p, in->p->value_types[in->value].type), in->st->exited_unsampled);
	char a[64];
	if (info_sampler_cpu_ns(in) && in->p->duration_ns)
		fprintf(out, "Sampler:       the agent's wall-mode sampler threads used %s of CPU, %.2f%% of one core\n",
			format_duration(info_sampler_cpu_ns(in), a, sizeof(a)),
			100.0 * (double)info_sampler_cpu_ns(in) / (double)in->p->duration_ns);
}

/* Whether sampling was off for part of the run (--paused, --delay, --duration). */
static int sampling_was_off(const struct info *in)
{
	const char *paused = info_meta_value(in, TRACE_META_PAUSED), *delay = info_meta_value(in, TRACE_META_DELAY_NS),
		   *duration = info_meta_value(in, TRACE_META_DURATION_NS);
	return (paused && strcmp(paused, "0")) || (delay && strtoull(delay, NULL, 10)) ||
	       (duration && strtoull(duration, NULL, 10));
}

/*
 * The measured CPU time against the samples. CPU mode: what they miss, each
 * cause with its figure (a trace missing a fifth of a single thread's time is
 * kernel work, not short threads). Wall mode: on CPU means running or
 * runnable (a signalled thread's handler runs once it gets a CPU), so on-CPU
 * samples stand for wall time and may pass the CPU time: the excess is time
 * spent waiting for a CPU, said as such.
 */
static void print_coverage(FILE *out, const struct info *in)
{
	uint64_t measured, sampled;
	uint32_t threads = info_measured_totals(in, &measured, &sampled);
	char a[64], b[64], c[64], d[64];
	if (!threads)
		return;
	fprintf(out, "Measured CPU:  %s by %u threads at their end; ", format_duration(measured, a, sizeof(a)), threads);
	if (in->wall) {
		fprintf(out, "their on-CPU samples stand for %s of wall time", format_duration(sampled, b, sizeof(b)));
		if (sampled > measured)
			fprintf(out, ", %s more than they ran: on CPU counts time runnable, waiting for a CPU\n",
				format_duration(sampled - measured, c, sizeof(c)));
		else
			fprintf(out, " (%.1f%% of their CPU time; on CPU counts runnable time too)\n",
				100.0 * (double)sampled / (double)measured);
		return;
	}
	fprintf(out, "their samples cover %s (%.1f%%), %s unsampled\n", format_duration(sampled, b, sizeof(b)),
		100.0 * (double)sampled / (double)measured,
		format_duration(measured > sampled ? measured - sampled : 0, c, sizeof(c)));
	struct coverage cov;
	info_coverage(in, &cov);
	uint32_t charged_threads;
	uint64_t charged = info_exit_charged_ns(in, &charged_threads);
	if (charged) {
		/* What short threads and last intervals missed is in the samples now, on a frame that says so. */
		fprintf(out, "  charged:     %s of them at the ends of %u threads, their time after their last sample, as "
			     "[thread exit: unsampled] (in whole intervals, rounded at random)\n",
			format_duration(charged, a, sizeof(a)), charged_threads);
		cov.unsampled_threads = cov.partial_threads = 0;
		cov.unsampled_threads_ns = cov.partial_ns = 0;
	}
	if (!coverage_missing(&cov))
		return;
	/* Only the causes that have time, each with it: threads too short for a sample are named only when there are some. */
	const char *sep = "";
	fprintf(out, "  missing:     ");
	if (cov.unsampled_threads) {
		fprintf(out, "%s in %u threads that ended before their first sample", format_duration(cov.unsampled_threads_ns, a, sizeof(a)),
			cov.unsampled_threads);
		sep = "; ";
	}
	if (cov.partial_ns) {
		fprintf(out, "%s%s in the last partial interval of %u threads (at most %s each)", sep,
			format_duration(cov.partial_ns, b, sizeof(b)), cov.partial_threads,
			format_duration(in->p->period > 0 ? (uint64_t)in->p->period : 0, d, sizeof(d)));
		sep = "; ";
	}
	if (cov.unseen_ns) {
		const char *source = in->p->source ? profile_string(in->p, in->p->source) : "";
		fprintf(out, "%s%s beyond that, not sampled: %s%s", sep, format_duration(cov.unseen_ns, c, sizeof(c)),
			!strcmp(source, "perf-task-clock+cpu-timer")
				? "kernel time outside system calls (page faults, interrupts)"
				: "time between samples",
			sampling_was_off(in) ? ", and time while sampling was off" : "");
	}
	fprintf(out, "\n");
}

void info_print_text(FILE *out, const struct info *in, const struct info_text_options *to)
{
	const struct profile *p = in->p;
	const struct load_stats *st = in->st;
	char a[4096], b[4096], c[512];
	fprintf(out, "Trace:         %s\n", escape_text(in->trace, a, sizeof(a)));
	if (st->truncated)
		fprintf(out, "Warning:       truncated trace: read up to its last complete record\n");
	if (info_newer_collector(p, st))
		fprintf(out, "Warning:       written by %s, newer than this analyze (ipscope %s): "
			"records it added are skipped\n",
			escape_text(info_newer_collector(p, st), a, sizeof(a)), IPSCOPE_VERSION);
	fprintf(out, "Command:       %s\n", p->command ? text(p, p->command, a, sizeof(a)) : "(unknown)");
	fprintf(out, "Started:       %s\n", start_text(p, a, sizeof(a)));
	fprintf(out, "Duration:      %s\n", format_duration(p->duration_ns, a, sizeof(a)));
	fprintf(out, "Mode:          %s, interval %s\n", p->mode ? text(p, p->mode, a, sizeof(a)) : "?",
		format_duration(p->period > 0 ? (uint64_t)p->period : 0, b, sizeof(b)));
	fprintf(out, "Source:        %s", p->source ? text(p, p->source, a, sizeof(a)) : "?");
	if (info_effective_rate(in) > 0)
		fprintf(out, ", effective rate %.0f samples per %s second (requested %.0f)", info_effective_rate(in),
			in->wall ? "thread" : "CPU", 1e9 / (double)p->period);
	fprintf(out, "\n");
	uint32_t count = profile_period_count(p);
	if (count != PROFILE_NO_VALUE)
		/* An allocation profile's rows are mostly allocation rows: the CPU
		 * samples are what the count type adds up to. */
		fprintf(out, "Samples:       %" PRIu64 ", summed weight %" PRId64 " = %s of %s%s\n",
			p->alloc_scheme ? (uint64_t)in->totals[count] : in->samples,
			in->totals[count], format_value(info_cpu_ns(in), "nanoseconds", a, sizeof(a)),
			in->wall ? "threads' wall time" : "CPU", in->saturated ? " (saturated: the true total is larger)" : "");
	else
		fprintf(out, "Samples:       %" PRIu64 ", %s\n", in->samples,
			report_totals(p, in->totals, in->saturated, a, sizeof(a)));
	fprintf(out, "Values:       ");
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		fprintf(out, "%s %s (%s%s)", v ? "," : "", profile_string(p, p->value_types[v].type),
			profile_string(p, p->value_types[v].unit), v == p->default_value ? ", default" : "");
	fprintf(out, "\n");
	fprintf(out, "Lost samples:  %" PRIu64 "\n", p->lost_samples);
	if (end_disagrees(in))
		fprintf(out, "Warning:       collect wrote %" PRIu64 " samples (weight %" PRIu64 "), %" PRIu64
			" (weight %" PRId64 ") were read back\n",
			st->end_samples, st->end_weight, cpu_samples(p),
			count != PROFILE_NO_VALUE ? in->totals[count] : 0);
	if (st->agent_signals) {
		/* The agent's handler, timed by itself (trace 1.2); the kernel's delivery is not in it. */
		fprintf(out, "Agent cost:    %.2f us per sample (%s in the handler over %" PRIu64 " signals",
			in->samples ? (double)st->agent_ns / (double)in->samples / 1e3 : 0.0,
			format_duration(st->agent_ns, a, sizeof(a)), st->agent_signals);
		if (info_cpu_ns(in) > 0)
			fprintf(out, ", %.2f%% of the %s time sampled", 100.0 * (double)st->agent_ns / (double)info_cpu_ns(in),
				in->wall ? "wall" : "CPU");
		fprintf(out, ")\n");
	}
	if (st->has_allocs && count != PROFILE_NO_VALUE && in->totals[count] > 0)
		/* Time in the hooks is the profiler's, never charged to the program's functions. */
		fprintf(out, "Recording:     %.2f%% of the CPU samples in [ipscope: recording allocations] (weight %" PRIu64
			" of %" PRId64 ")\n",
			100.0 * (double)st->hook_samples / (double)in->totals[count], st->hook_samples, in->totals[count]);
	print_unrecorded(out, in);
	fprintf(out, "Exit:          %s\n", info_exit_text(p, a, sizeof(a)));
	if (in->wall)
		print_wall(out, in);
	print_coverage(out, in);

	int compact_procs = info_many_processes(in) && !to->every_process;
	fprintf(out, "Threads:       %u%s\n", p->nthreads, compact_procs ? " (each: analyze info --processes)" : "");
	if (p->nthreads) {
		const char *unit = profile_string(p, p->value_types[in->value].unit);
		int is_cpu = in->value == p->period_type;
		snprintf(c, sizeof(c), "%s", is_cpu ? (in->wall ? "WALL TIME" : "CPU TIME") : profile_string(p, p->value_types[in->value].type));
		for (char *u = c; *u; u++)
			*u = *u >= 'a' && *u <= 'z' ? (char)(*u - 32) : *u;
		if (compact_procs)
			info_print_programs(out, in, c);
		else
			fprintf(out, "  %8s %8s %10s %12s %12s%s  %s\n", "PID", "TID", "SAMPLES", c, "MEASURED",
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
			fprintf(out, "  %8u %8u %10" PRIu64 " %12s %12s%s  %s\n", t->pid, t->tid, in->thread_rows[i],
				format_value(in->thread_values[i], unit, b, sizeof(b)), m, shares, text(p, t->name, a, sizeof(a)));
		}
	}
	if (!compact_procs)
		print_processes(out, in);

	double *share = debug_hint_module_shares(p, in->value);
	if (info_many_processes(in) && !to->every_module)
		info_print_distinct_modules(out, in, share);
	uint32_t with_id = 0;
	for (uint32_t i = 0; i < p->nmodules; i++)
		with_id += p->modules[i].build_id != 0;
	if (!info_many_processes(in) || to->every_module)
		fprintf(out, "Modules:       %u, %u with a build-id (share: of %s, the samples in it)\n", p->nmodules,
			with_id, profile_string(p, p->value_types[in->value].type));
	for (uint32_t i = 0; i < p->nmodules && (!info_many_processes(in) || to->every_module); i++) {
		const struct profile_module *m = &p->modules[i];
		const char *id = profile_string(p, m->build_id);
		fprintf(out, "  %-18s %-8.8s %5.1f%%  %s%s\n", info_debug_info_text(profile_string(p, m->path), m->flags),
			*id ? id : "-", 100.0 * share[i], text(p, m->path, a, sizeof(a)),
			m->flags & PROFILE_MODULE_SYSTEM ? " (system)" : "");
	}
	free(share);
	debug_hint_print(out, p, in->value, 1, "  ");

	double mib = 1024.0 * 1024.0;
	fprintf(out, "Trace file:    %.2f MiB, %.2f MiB uncompressed (ratio %.1fx), format %u.%u%s\n",
		(double)st->compressed_bytes / mib, (double)st->raw_bytes / mib,
		st->compressed_bytes ? (double)st->raw_bytes / (double)st->compressed_bytes : 0.0, st->version_major,
		st->version_minor, st->truncated ? ", TRUNCATED" : "");
	fprintf(out, "Stacks:        %" PRIu64 " distinct (%" PRIu64 " cut at max frames, in %" PRIu64 " samples), %" PRIu64
		" distinct addresses\n",
		st->stack_records, st->truncated_stacks, st->truncated_samples, st->distinct_addresses);
	int any = 0;
	for (uint32_t i = 0; i < st->nmeta; i++) {
		const char *key = profile_string(p, st->meta[i].key);
		if (meta_shown_elsewhere(key))
			continue;
		if (!any++)
			fprintf(out, "Metadata:\n");
		fprintf(out, "  %-12s %s\n", escape_text(key, b, sizeof(b)), text(p, st->meta[i].value, a, sizeof(a)));
	}
}


