/*
 * info.c - the facts analyze info shows (info.h), gathered once from the
 * loaded trace and its load statistics: per-thread figures of the threads
 * table's value, CPU time measured against what the samples cover, the
 * processes' totals, what the trace says of itself.
 */
#include "info.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "alloc.h"
#include "trace.h"

void info_build(struct info *in, const char *trace, struct profile *p, const struct load_stats *st,
		const struct filter_options *select, uint32_t value)
{
	memset(in, 0, sizeof(*in));
	in->trace = trace;
	in->st = st;
	in->select = select;
	in->value = value;
	in->wall = !strcmp(profile_string(p, p->mode), "wall") || !strncmp(profile_string(p, p->mode), "wall,", 5);
	/* --pid, --state: only those samples (and threads); every frame kept, info shows no stacks. */
	struct filter_options samples = *select;
	samples.show_system = 1;
	samples.no_inline = 0;
	samples.ntids = 0;
	in->p = filter_is_identity(&samples) ? p : filter_profile(p, &samples);
	/* The kept threads are the loaded ones in order: their measured CPU times follow them. */
	in->nmeasured = in->p->nthreads;
	in->measured = calloc_or_abort(in->nmeasured ? in->nmeasured : 1, sizeof(*in->measured));
	for (uint32_t i = 0, j = 0; i < in->p->nthreads && j < p->nthreads; j++)
		if (p->threads[j].pid == in->p->threads[i].pid && p->threads[j].tid == in->p->threads[i].tid)
			in->measured[i++] = j < st->nthread_cpu ? st->thread_cpu_ns[j] : 0;
	if (in->p != p)
		profile_free(p);

	p = in->p;
	size_t n = p->nthreads ? p->nthreads : 1;
	in->samples = profile_samples_total(p);
	profile_totals(p, in->totals, &in->saturated);
	in->thread_values = calloc_or_abort(n, sizeof(*in->thread_values));
	in->thread_rows = calloc_or_abort(n, sizeof(*in->thread_rows));
	profile_thread_totals(p, value, in->thread_values, in->thread_rows);
	in->thread_cpu = calloc_or_abort(n, sizeof(*in->thread_cpu));
	if (p->period_type != PROFILE_NO_VALUE)
		profile_thread_totals(p, p->period_type, in->thread_cpu, NULL);
	in->thread_off = calloc_or_abort(n, sizeof(*in->thread_off));
	for (uint64_t i = 0; i < p->nsamples; i++) {
		const struct profile_sample *sm = &p->samples[i];
		if (sm->thread >= p->nthreads || !PROFILE_LABEL_OFF_CPU(sm->label))
			continue;
		in->thread_off[sm->thread] += profile_sample_value(p, i, value);
		/* Wall mode: what a thread's CPU time is compared with is its time on CPU. */
		if (p->period_type != PROFILE_NO_VALUE)
			in->thread_cpu[sm->thread] -= profile_sample_value(p, i, p->period_type);
	}
}

void info_release(struct info *in)
{
	free(in->thread_values);
	free(in->thread_rows);
	free(in->thread_cpu);
	free(in->thread_off);
	free(in->measured);
	profile_free(in->p);
	memset(in, 0, sizeof(*in));
}

int info_many_processes(const struct info *in)
{
	return in->st->nprocesses > 1 || profile_many_processes(in->p);
}

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

const char *info_exit_text(const struct profile *p, char *buf, size_t len)
{
	int st = p->wait_status;
	if (!p->ended)
		snprintf(buf, len, "unknown (trace truncated: the program or collect was killed)");
	else if (p->end_unknown == PROFILE_END_DETACHED)
		snprintf(buf, len, "still running (collect -p detached at the end of the trace)");
	else if (p->end_unknown == PROFILE_END_STATUS_UNKNOWN)
		snprintf(buf, len, "ended (collect -p is not its parent: status unknown)");
	else if (WIFEXITED(st))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		snprintf(buf, len, "killed by signal %d (%s)%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
			 WCOREDUMP(st) ? ", core dumped" : "");
	else
		snprintf(buf, len, "wait status 0x%x", (unsigned)st);
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
int64_t info_cpu_ns(const struct info *in)
{
	return in->p->period_type != PROFILE_NO_VALUE ? in->totals[in->p->period_type] : 0;
}

/* Samples per CPU second (wall mode: per second of a thread's wall time): under
 * the tick-bound timer fallback this is well below the requested rate, and
 * weights make up the difference. */
double info_effective_rate(const struct info *in)
{
	int64_t ns = info_cpu_ns(in);
	return ns > 0 && in->p->period > 0 ? (double)in->samples * 1e9 / (double)ns : 0.0;
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

/* Process pid's total of value type v, given every thread's (values, by thread index). */
int64_t info_process_total(const struct info *in, uint32_t pid, const int64_t *values)
{
	int64_t sum = 0;
	for (uint32_t i = 0; i < in->p->nthreads; i++)
		if (in->p->threads[i].pid == pid && __builtin_add_overflow(sum, values[i], &sum))
			return values[i] < 0 ? INT64_MIN : INT64_MAX;
	return sum;
}

/* A META value of the trace, NULL when it has none. */
const char *info_meta_value(const struct info *in, const char *key)
{
	for (uint32_t i = 0; i < in->st->nmeta; i++)
		if (!strcmp(profile_string(in->p, in->st->meta[i].key), key))
			return profile_string(in->p, in->st->meta[i].value);
	return NULL;
}

/* Wall mode: the agents' sampler threads' CPU time (their main cost), 0 when not said. */
uint64_t info_sampler_cpu_ns(const struct info *in)
{
	const char *v = info_meta_value(in, TRACE_META_SAMPLER_CPU_NS);
	uint64_t ns = v ? strtoull(v, NULL, 10) : 0;
	/* The agents add it up in memory the program can scribble on: one sampler per process at most
	 * runs the whole run (an impossible figure is not shown). */
	return ns <= (uint64_t)(in->st->nprocesses + 1) * in->p->duration_ns ? ns : 0;
}

uint64_t info_exit_charged_ns(const struct info *in, uint32_t *threads)
{
	const char *v = info_meta_value(in, TRACE_META_EXIT_CHARGED), *t = info_meta_value(in, TRACE_META_EXIT_CHARGED_THREADS);
	uint64_t periods = v ? strtoull(v, NULL, 10) : 0, n = t ? strtoull(t, NULL, 10) : 0;
	uint64_t period = in->p->period > 0 ? (uint64_t)in->p->period : 0;
	*threads = 0;
	/* Added up by the agents in memory the program can scribble on: more than the samples hold, or more
	 * threads than the trace has, is not shown. */
	int64_t all = info_cpu_ns(in);
	if (!periods || !period || periods > UINT64_MAX / period || all < 0 || periods * period > (uint64_t)all ||
	    n > in->p->nthreads)
		return 0;
	*threads = (uint32_t)n;
	return periods * period;
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
