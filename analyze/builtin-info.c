/*
 * builtin-info.c - "analyze info": what is in a trace. The run (command,
 * start, duration, mode, sampling source and its effective rate, exit), the
 * totals (samples, value types, losses, what the agent's signal handler
 * cost), threads (with the CPU time each measured at its end against what
 * its samples cover), modules (build-ids and what debug info exists for
 * each) and the file itself (size, compression);
 * as text, or with --format json as one JSON object holding every figure the
 * text shows (for scripts and tests).
 *
 * It loads without symbolizing: only the modules are opened, to say whether
 * debug info was found. Text from the trace (command line, thread names,
 * paths, metadata) is escaped for the terminal; JSON escapes it its own way.
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
#include "debug_hint.h"
#include "load.h"
#include "options.h"
#include "report.h"
#include "terminal.h"
#include "trace.h"

/* Everything both formats print, gathered once. */
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
};

/* A thread's CPU time as the agent measured it at its end (1.2 traces), 0 when unknown. */
static uint64_t measured_ns(const struct info *in, uint32_t thread)
{
	return thread < in->st->nthread_cpu ? in->st->thread_cpu_ns[thread] : 0;
}

/* Over the threads whose CPU time was measured: how many, that time, and what their samples cover. */
static uint32_t measured_totals(const struct info *in, uint64_t *measured, uint64_t *sampled)
{
	uint32_t threads = 0;
	*measured = *sampled = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++)
		if (measured_ns(in, i)) {
			threads++;
			*measured += measured_ns(in, i);
			*sampled += in->thread_cpu[i] > 0 ? (uint64_t)in->thread_cpu[i] : 0;
		}
	return threads;
}

static const char *text(const struct profile *p, uint32_t id, char *buf, size_t len)
{
	return escape_text(profile_string(p, id), buf, len);
}

static const char *exit_text(const struct profile *p, char *buf, size_t len)
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

static const char *debug_info_text(const char *path, uint32_t flags)
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

/* Samples per CPU second: under the tick-bound timer fallback this is well
 * below the requested rate, and weights make up the difference. */
static double effective_rate(const struct info *in)
{
	int64_t ns = cpu_ns(in);
	return ns > 0 && in->p->period > 0 ? (double)in->p->nsamples * 1e9 / (double)ns : 0.0;
}

/* META keys the fields above do not show already. */
static int meta_shown_elsewhere(const char *key)
{
	static const char *const shown[] = {
		TRACE_META_COMMAND, TRACE_META_MODE, TRACE_META_INTERVAL_NS, TRACE_META_SOURCE,
		TRACE_META_START_REALTIME_NS, TRACE_META_START_MONOTONIC_NS,
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
static const char *newer_collector(const struct profile *p, const struct load_stats *st)
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

static void print_text(const struct info *in)
{
	const struct profile *p = in->p;
	const struct load_stats *st = in->st;
	char a[4096], b[4096], c[512];
	printf("Trace:         %s\n", escape_text(in->trace, a, sizeof(a)));
	if (st->truncated)
		printf("Warning:       truncated trace: read up to its last complete record\n");
	if (newer_collector(p, st))
		printf("Warning:       written by %s, newer than this analyze (ipscope %s): "
		       "records it added are skipped\n",
		       escape_text(newer_collector(p, st), a, sizeof(a)), IPSCOPE_VERSION);
	printf("Command:       %s\n", p->command ? text(p, p->command, a, sizeof(a)) : "(unknown)");
	printf("Started:       %s\n", start_text(p, a, sizeof(a)));
	printf("Duration:      %s\n", format_duration(p->duration_ns, a, sizeof(a)));
	printf("Mode:          %s, interval %s\n", p->mode ? text(p, p->mode, a, sizeof(a)) : "?",
	       format_duration(p->period > 0 ? (uint64_t)p->period : 0, b, sizeof(b)));
	printf("Source:        %s", p->source ? text(p, p->source, a, sizeof(a)) : "?");
	if (effective_rate(in) > 0)
		printf(", effective rate %.0f samples per CPU second (requested %.0f)", effective_rate(in),
		       1e9 / (double)p->period);
	printf("\n");
	uint32_t count = profile_period_count(p);
	if (count != PROFILE_NO_VALUE)
		/* An allocation profile's rows are mostly allocation rows: the CPU
		 * samples are what the count type adds up to. */
		printf("Samples:       %" PRIu64 ", summed weight %" PRId64 " = %s of CPU%s\n",
		       p->alloc_scheme ? (uint64_t)in->totals[count] : p->nsamples,
		       in->totals[count], format_value(cpu_ns(in), "nanoseconds", a, sizeof(a)),
		       in->saturated ? " (saturated: the true total is larger)" : "");
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
			printf(", %.2f%% of the CPU time sampled", 100.0 * (double)st->agent_ns / (double)cpu_ns(in));
		printf(")\n");
	}
	if (st->has_allocs && count != PROFILE_NO_VALUE && in->totals[count] > 0)
		/* Time in the hooks is the profiler's, never charged to the program's functions. */
		printf("Recording:     %.2f%% of the CPU samples in [ipscope: recording allocations] (weight %" PRIu64
		       " of %" PRId64 ")\n",
		       100.0 * (double)st->hook_samples / (double)in->totals[count], st->hook_samples, in->totals[count]);
	printf("Exit:          %s\n", exit_text(p, a, sizeof(a)));
	uint64_t measured, sampled;
	uint32_t measured_threads = measured_totals(in, &measured, &sampled);
	if (measured_threads)
		printf("Measured CPU:  %s by %u threads at their end; their samples cover %s (%.1f%%), %s unsampled\n",
		       format_duration(measured, a, sizeof(a)), measured_threads, format_duration(sampled, b, sizeof(b)),
		       100.0 * (double)sampled / (double)measured,
		       format_duration(measured > sampled ? measured - sampled : 0, c, sizeof(c)));

	printf("Threads:       %u\n", p->nthreads);
	if (p->nthreads) {
		const char *unit = profile_string(p, p->value_types[in->value].unit);
		int is_cpu = in->value == p->period_type;
		snprintf(c, sizeof(c), "%s", is_cpu ? "CPU TIME" : profile_string(p, p->value_types[in->value].type));
		for (char *u = c; *u; u++)
			*u = *u >= 'a' && *u <= 'z' ? (char)(*u - 32) : *u;
		printf("  %8s %8s %10s %12s %12s  %s\n", "PID", "TID", "SAMPLES", c, "MEASURED", "NAME");
		for (uint32_t i = 0; i < p->nthreads; i++) {
			const struct profile_thread *t = &p->threads[i];
			char m[64] = "-";
			if (measured_ns(in, i))
				format_duration(measured_ns(in, i), m, sizeof(m));
			printf("  %8u %8u %10" PRIu64 " %12s %12s  %s\n", t->pid, t->tid, in->thread_rows[i],
			       format_value(in->thread_values[i], unit, b, sizeof(b)), m, text(p, t->name, a, sizeof(a)));
		}
	}

	uint32_t with_id = 0;
	for (uint32_t i = 0; i < p->nmodules; i++)
		with_id += p->modules[i].build_id != 0;
	printf("Modules:       %u, %u with a build-id (share: of %s, the samples in it)\n", p->nmodules,
	       with_id, profile_string(p, p->value_types[in->value].type));
	double *share = debug_hint_module_shares(p, in->value);
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *m = &p->modules[i];
		const char *id = profile_string(p, m->build_id);
		printf("  %-18s %-8.8s %5.1f%%  %s%s\n", debug_info_text(profile_string(p, m->path), m->flags),
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
	printf("Stacks:        %" PRIu64 " distinct (%" PRIu64 " cut at max frames), %" PRIu64 " distinct addresses\n",
	       st->stack_records, st->truncated_stacks, st->distinct_addresses);
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

/* A JSON string of s: Jansson takes only UTF-8; other bytes become '?'. */
static json_t *jstring(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *ascii = strdup_or_abort(s);
	for (char *c = ascii; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(ascii);
	free(ascii);
	return j;
}

static json_t *jint(int64_t v)
{
	return json_integer((json_int_t)v);
}

/* Unsigned figures above INT64_MAX (none is plausible) are capped there. */
static json_t *juint(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *info_json(const struct info *in)
{
	const struct profile *p = in->p;
	const struct load_stats *st = in->st;
	char a[256];
	json_t *root = json_object();
	json_object_set_new(root, "trace", jstring(in->trace));
	json_object_set_new(root, "truncated", json_boolean(st->truncated));
	json_object_set_new(root, "newer_collector", json_boolean(newer_collector(p, st) != NULL));
	json_object_set_new(root, "command", jstring(profile_string(p, p->command)));
	json_object_set_new(root, "start_realtime_ns", juint(p->start_realtime_ns));
	json_object_set_new(root, "duration_ns", juint(p->duration_ns));
	json_object_set_new(root, "mode", jstring(profile_string(p, p->mode)));
	json_object_set_new(root, "interval_ns", jint(p->period));
	json_object_set_new(root, "source", jstring(profile_string(p, p->source)));
	json_object_set_new(root, "effective_rate", json_real(effective_rate(in)));
	json_object_set_new(root, "samples", juint(p->nsamples));
	json_t *types = json_array();
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		json_array_append_new(types, json_pack("{s:o,s:o,s:o}", "type",
						       jstring(profile_string(p, p->value_types[v].type)), "unit",
						       jstring(profile_string(p, p->value_types[v].unit)), "total",
						       jint(in->totals[v])));
	json_object_set_new(root, "value_types", types);
	json_object_set_new(root, "default_value",
			    jstring(profile_string(p, p->value_types[p->default_value].type)));
	json_object_set_new(root, "saturated", json_boolean(in->saturated));
	json_object_set_new(root, "lost_samples", juint(p->lost_samples));
	json_object_set_new(root, "end", json_pack("{s:b,s:o,s:o}", "present", p->ended, "samples",
						   juint(st->end_samples), "weight", juint(st->end_weight)));
	json_object_set_new(root, "exit", json_pack("{s:o,s:i}", "text", jstring(exit_text(p, a, sizeof(a))),
						    "wait_status", p->wait_status));
	json_object_set_new(root, "agent", json_pack("{s:o,s:o}", "handler_ns", juint(st->agent_ns), "signals",
						     juint(st->agent_signals)));
	if (st->has_allocs)
		/* CPU weight of [ipscope: recording allocations]: time in the hooks, the profiler's own */
		json_object_set_new(root, "recording_allocations_weight", juint(st->hook_samples));
	uint64_t measured, sampled;
	uint32_t measured_threads = measured_totals(in, &measured, &sampled);
	json_object_set_new(root, "measured_cpu",
			    json_pack("{s:I,s:o,s:o}", "threads", (json_int_t)measured_threads, "measured_ns",
				      juint(measured), "sampled_ns", juint(sampled)));
	json_t *threads = json_array();
	int64_t *values = calloc_or_abort(p->nthreads, sizeof(*values));
	json_t *per_type[PROFILE_MAX_VALUE_TYPES] = { 0 };
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		profile_thread_totals(p, v, values, NULL);
		per_type[v] = json_array();
		for (uint32_t i = 0; i < p->nthreads; i++)
			json_array_append_new(per_type[v], jint(values[i]));
	}
	free(values);
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *t = &p->threads[i];
		json_t *tv = json_object();
		for (uint32_t v = 0; v < p->nvalue_types; v++)
			json_object_set(tv, profile_string(p, p->value_types[v].type), json_array_get(per_type[v], i));
		json_array_append_new(threads, json_pack("{s:I,s:I,s:o,s:o,s:o,s:o}", "pid", (json_int_t)t->pid, "tid",
							 (json_int_t)t->tid, "name", jstring(profile_string(p, t->name)),
							 "samples", juint(in->thread_rows[i]), "values", tv,
							 "measured_cpu_ns", juint(measured_ns(in, i))));
	}
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		json_decref(per_type[v]);
	json_object_set_new(root, "threads", threads);
	json_t *modules = json_array();
	double *share = debug_hint_module_shares(p, in->value);
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *m = &p->modules[i];
		const char *path = profile_string(p, m->path);
		json_array_append_new(modules, json_pack("{s:o,s:o,s:s,s:b,s:f}", "path", jstring(path), "build_id",
							 jstring(profile_string(p, m->build_id)), "debug_info",
							 debug_info_text(path, m->flags), "system",
							 (m->flags & PROFILE_MODULE_SYSTEM) != 0, "share", share[i]));
	}
	free(share);
	json_object_set_new(root, "modules", modules);
	json_object_set_new(root, "file", json_pack("{s:o,s:o,s:s#}", "compressed_bytes", juint(st->compressed_bytes),
						    "raw_bytes", juint(st->raw_bytes), "format", a,
						    snprintf(a, sizeof(a), "%u.%u", st->version_major, st->version_minor)));
	json_object_set_new(root, "stacks", json_pack("{s:o,s:o,s:o,s:o}", "distinct", juint(st->stack_records),
						      "truncated", juint(st->truncated_stacks), "distinct_addresses",
						      juint(st->distinct_addresses), "undefined_stack_samples",
						      juint(st->undefined_stack_samples)));
	json_object_set_new(root, "corrected",
			    json_pack("{s:I,s:I,s:o,s:o,s:o,s:I}", "loss_threads", (json_int_t)st->implausible_loss_threads,
				      "weight_threads", (json_int_t)st->implausible_weight_threads, "clamped_weights",
				      juint(st->clamped_weights), "samples_outside_run", juint(st->samples_outside_run),
				      "samples_backwards", juint(st->samples_backwards), "overbusy_threads",
				      (json_int_t)st->overbusy_threads));
	json_t *meta = json_object();
	for (uint32_t i = 0; i < st->nmeta; i++)
		json_object_set_new(meta, profile_string(p, st->meta[i].key),
				    jstring(profile_string(p, st->meta[i].value)));
	json_object_set_new(root, "metadata", meta);
	return root;
}

enum { OPT_FORMAT = OPTION_COMMAND_FIRST };

struct info_args {
	const struct analyze_command *cmd;
	int json;
};

static int info_handle(int opt, const char *arg, void *ctx)
{
	struct info_args *a = ctx;
	if (opt == OPT_FORMAT && (!strcmp(arg, "text") || !strcmp(arg, "json"))) {
		a->json = !strcmp(arg, "json");
		return 0;
	}
	usage_error(a->cmd, "--format wants text or json, not '%s'", arg);
	return -1;
}

static const struct option info_long_options[] = {
	{"format", required_argument, NULL, OPT_FORMAT},
	{NULL, 0, NULL, 0},
};

int cmd_info(int argc, char **argv)
{
	struct info_args args = { 0 };
	const struct analyze_command cmd = {
		.name = "info",
		.synopsis = "analyze info [options] TRACE",
		.summary = "Describe a trace: the run, its totals, threads, modules and the file.",
		.help = "      --format FORMAT     text (default) or json: one object with every figure\n"
			"                          the text shows (totals per value type, threads,\n"
			"                          modules, file, metadata, corrected figures)\n",
		.groups = OPTGROUP_LOAD,
		.options = info_long_options,
		.handle = info_handle,
		.ctx = &args,
	};
	args.cmd = &cmd;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, &cmd, &o);
	if (rc >= 0)
		return rc;
	o.load.symbolize = 0;
	o.load.open_modules = 1;
	o.load.diag = diag_stderr_sink();
	o.load.offline = 1; /* info says what is here; downloads are for reports */
	struct load_stats st;
	struct profile *p = load_trace(o.trace, &o.load, &st);
	struct info in = {.trace = o.trace, .p = p, .st = &st};
	rc = p ? options_resolve_value(&cmd, &o, p, &in.value) : 1;
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
		if (args.json) {
			json_t *doc = info_json(&in);
			json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			fputc('\n', stdout);
			json_decref(doc);
		} else {
			print_text(&in);
		}
		free(in.thread_values);
		free(in.thread_rows);
		free(in.thread_cpu);
		rc = finish_output(&cmd);
	}
	if (p)
		load_stats_free(&st);
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}
