/*
 * builtin-info.c - "analyze info": what is in a trace. The run (command,
 * start, duration, mode, sampling source and its effective rate, exit), the
 * totals (samples, CPU time, losses), threads, modules (build-ids and what
 * debug info exists for each) and the file itself (size, compression).
 *
 * It loads without symbolizing: only the modules are opened, to say whether
 * debug info was found.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "builtin.h"
#include "debug_hint.h"
#include "load.h"
#include "options.h"
#include "report.h"
#include "terminal.h"
#include "trace.h"

static const struct analyze_command info_command = {
	.name = "info",
	.synopsis = "analyze info [options] TRACE",
	.summary = "Describe a trace: the run, its totals, threads, modules and the file.",
	.groups = OPTGROUP_LOAD,
};

static void print_start(const struct profile *p)
{
	if (!p->start_realtime_ns) {
		printf("Started:       (unknown)\n");
		return;
	}
	time_t sec = (time_t)(p->start_realtime_ns / 1000000000ull);
	struct tm tm;
	char buf[64];
	localtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S %Z", &tm);
	printf("Started:       %s\n", buf);
}

static void print_exit(const struct profile *p)
{
	int st = p->wait_status;
	if (!p->ended)
		printf("Exit:          unknown (trace truncated: the program or collect was killed)\n");
	else if (WIFEXITED(st))
		printf("Exit:          exited with status %d\n", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		printf("Exit:          killed by signal %d (%s)%s\n", WTERMSIG(st),
		       strsignal(WTERMSIG(st)), WCOREDUMP(st) ? ", core dumped" : "");
	else
		printf("Exit:          wait status 0x%x\n", (unsigned)st);
}

static void print_sampling(const struct profile *p)
{
	char interval[32], cpu[32];
	printf("Mode:          %s, interval %s\n", p->mode ? profile_string(p, p->mode) : "?",
	       format_duration(p->interval_ns, interval, sizeof(interval)));
	uint64_t cpu_ns = profile_weight_ns(p, p->total_weight);
	printf("Source:        %s", p->source ? profile_string(p, p->source) : "?");
	/* Samples per CPU second: under the tick-bound timer fallback this is
	 * well below the requested rate, and weights make up the difference. */
	if (cpu_ns && p->interval_ns)
		printf(", effective rate %.0f samples per CPU second (requested %.0f)",
		       (double)p->nsamples * 1e9 / (double)cpu_ns, 1e9 / (double)p->interval_ns);
	printf("\n");
	printf("Samples:       %" PRIu64 ", summed weight %" PRIu64 " = %s of CPU\n", p->nsamples,
	       p->total_weight, format_duration(cpu_ns, cpu, sizeof(cpu)));
	printf("Lost samples:  %" PRIu64 "\n", p->lost_samples);
}

static void print_threads(const struct profile *p)
{
	printf("Threads:       %u\n", p->nthreads);
	if (!p->nthreads)
		return;
	printf("  %8s %8s %10s %12s  %s\n", "PID", "TID", "SAMPLES", "CPU TIME", "NAME");
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *t = &p->threads[i];
		char cpu[32];
		printf("  %8u %8u %10" PRIu64 " %12s  %s\n", t->pid, t->tid, t->samples,
		       format_duration(profile_weight_ns(p, t->weight), cpu, sizeof(cpu)),
		       profile_string(p, t->name));
	}
}

static const char *debug_info_text(const char *path, uint32_t flags)
{
	/* The vdso is the kernel's: it has no file to read. */
	if ((flags & PROFILE_MODULE_MISSING) && (path[0] == '[' || strstr(path, "linux-vdso")))
		return "in kernel (vdso)";
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

/* Every module, what debug info it has and the share of samples it is in. */
static void print_modules(const struct profile *p)
{
	uint32_t with_id = 0;
	for (uint32_t i = 0; i < p->nmodules; i++)
		with_id += p->modules[i].build_id != 0;
	printf("Modules:       %u, %u with a build-id\n", p->nmodules, with_id);
	double *share = debug_hint_module_shares(p);
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *m = &p->modules[i];
		const char *id = profile_string(p, m->build_id);
		printf("  %-18s %-8.8s %5.1f%%  %s%s\n", debug_info_text(profile_string(p, m->path), m->flags),
		       *id ? id : "-", 100.0 * share[i], profile_string(p, m->path),
		       m->flags & PROFILE_MODULE_SYSTEM ? " (system)" : "");
	}
	free(share);
	debug_hint_print(stdout, p, 1, "  ");
}

static void print_file(const struct load_stats *st)
{
	double mib = 1024.0 * 1024.0;
	printf("Trace file:    %.2f MiB, %.2f MiB uncompressed (ratio %.1fx), format %u.%u%s\n",
	       (double)st->compressed_bytes / mib, (double)st->raw_bytes / mib,
	       st->compressed_bytes ? (double)st->raw_bytes / (double)st->compressed_bytes : 0.0,
	       st->version_major, st->version_minor, st->truncated ? ", TRUNCATED" : "");
	printf("Stacks:        %" PRIu64 " distinct (%" PRIu64 " cut at max frames), %" PRIu64
	       " distinct addresses\n",
	       st->stack_records, st->truncated_stacks, st->distinct_addresses);
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

static void warn_if_newer_collector(const struct profile *p, const struct load_stats *st)
{
	for (uint32_t i = 0; i < st->nmeta; i++) {
		const char *value = profile_string(p, st->meta[i].value);
		if (!strcmp(profile_string(p, st->meta[i].key), TRACE_META_COLLECTOR) &&
		    collector_is_newer(value))
			printf("Warning:       written by %s, newer than this analyze (ipscope %s): "
			       "records it added are skipped\n", value, IPSCOPE_VERSION);
	}
}

/* META keys the fields above do not show already. */
static void print_other_meta(const struct profile *p, const struct load_stats *st)
{
	static const char *const shown[] = {
		TRACE_META_COMMAND, TRACE_META_MODE, TRACE_META_INTERVAL_NS, TRACE_META_SOURCE,
		TRACE_META_START_REALTIME_NS, TRACE_META_START_MONOTONIC_NS,
	};
	int any = 0;
	for (uint32_t i = 0; i < st->nmeta; i++) {
		const char *key = profile_string(p, st->meta[i].key);
		int skip = 0;
		for (size_t k = 0; k < sizeof(shown) / sizeof(shown[0]); k++)
			skip |= !strcmp(key, shown[k]);
		if (skip)
			continue;
		if (!any++)
			printf("Metadata:\n");
		printf("  %-12s %s\n", key, profile_string(p, st->meta[i].value));
	}
}

int cmd_info(int argc, char **argv)
{
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, &info_command, &o);
	if (rc >= 0)
		return rc;
	o.load.symbolize = 0;
	o.load.open_modules = 1;
	o.load.offline = 1; /* info says what is here; downloads are for reports */
	struct load_stats st;
	struct profile *p = load_trace(o.trace, &o.load, &st);
	if (!p) {
		analyze_options_free(&o);
		return 1;
	}
	char dur[32];
	printf("Trace:         %s\n", o.trace);
	if (st.truncated)
		printf("Warning:       truncated trace: read up to its last complete record\n");
	warn_if_newer_collector(p, &st);
	printf("Command:       %s\n", p->command ? profile_string(p, p->command) : "(unknown)");
	print_start(p);
	printf("Duration:      %s\n", format_duration(p->duration_ns, dur, sizeof(dur)));
	print_sampling(p);
	/* collect's own count, written last, against what could be read back. */
	if (p->ended && (st.end_samples != p->nsamples || st.end_weight != p->total_weight))
		printf("Warning:       collect wrote %" PRIu64 " samples (weight %" PRIu64
		       "), %" PRIu64 " (weight %" PRIu64 ") were read back\n",
		       st.end_samples, st.end_weight, p->nsamples, p->total_weight);
	print_exit(p);
	print_threads(p);
	print_modules(p);
	print_file(&st);
	print_other_meta(p, &st);
	load_stats_free(&st);
	profile_free(p);
	analyze_options_free(&o);
	return 0;
}
