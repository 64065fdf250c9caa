/*
 * report.c - what the text reports share (see report.h): one run of a
 * report command, and the header, footer and frame text every report prints
 * the same way.
 */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "arith.h"
#include "debug_hint.h"
#include "load.h"

void report_init(struct report *r, FILE *out, const struct profile *p, const struct analyze_options *o,
		 uint32_t value)
{
	r->out = out;
	r->p = p;
	r->o = o;
	r->value = value;
	palette_init(&r->pal, o->color);
}

struct profile *report_profile(const char *const *traces, int n, const struct load_options *lo,
			       const struct filter_options *fo)
{
	struct profile *p = load_traces(traces, n, lo, 0);
	return p ? filter_profile_consume(p, fo) : NULL;
}

int report_command(int argc, char **argv, const struct analyze_command *cmd, report_print_fn print,
		   void *ctx)
{
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, ctx, &o);
	if (rc >= 0)
		return rc;
	const char *trace = o.operands[0];
	/* System frames hidden: a system module's debug info is read only where a frame of it shows (a stack
	 * with no other); a --focus or --ignore pattern may name a function libc inlined, which only its
	 * DWARF knows. */
	o.load.system_names_only = !o.filter.show_system && !o.filter.nfocus && !o.filter.nignore;
	struct profile *p = report_profile(o.operands, o.noperands, &o.load, &o.filter);
	uint32_t value = 0;
	if (!p)
		rc = 1; /* report_profile has said what went wrong */
	else
		rc = options_resolve_value(cmd, &o, p, trace, &value);
	if (rc == 0) {
		struct report r;
		report_init(&r, stdout, p, &o, value);
		options_start_pager(&o);
		print(&r, ctx);
		rc = finish_output(cmd);
	}
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}

/* "CPU" for cpu, the type's own name for others: "... of CPU", "... of wall". */
static const char *time_label(const struct profile *p)
{
	const char *name = profile_string(p, p->value_types[p->period_type].type);
	return !strcmp(name, "cpu") ? "CPU" : name;
}

const char *report_totals(const struct profile *p, const int64_t *totals, int saturated, char *buf,
			  size_t len)
{
	const char *note = saturated ? " (saturated: the true total is larger)" : "";
	uint32_t count = profile_period_count(p);
	char text[64];
	if (count != PROFILE_NO_VALUE && !p->alloc_scheme) {
		/* A CPU profile: the weight in timer periods and the time it stands for. */
		snprintf(buf, len, "weight %" PRId64 " = %s of %s%s", totals[count],
			 format_value(totals[p->period_type], "nanoseconds", text, sizeof(text)),
			 time_label(p), note);
		return buf;
	}
	size_t used = 0;
	buf[0] = '\0';
	for (uint32_t v = 0; v < p->nvalue_types && used < len; v++) {
		const struct profile_value_type *t = &p->value_types[v];
		/* An allocation trace without CPU samples: its CPU types say nothing. */
		if (p->alloc_scheme && (v == count || v == p->period_type) && !totals[v])
			continue;
		int n = snprintf(buf + used, len - used, "%s%s %s", used ? ", " : "", profile_string(p, t->type),
				 format_value(totals[v], profile_string(p, t->unit), text, sizeof(text)));
		if (n < 0)
			break;
		used += (size_t)n;
	}
	if (used < len)
		snprintf(buf + used, len - used, "%s", note);
	return buf;
}

static int64_t total_of(const struct profile *p, const int64_t *totals, const char *type)
{
	uint32_t v = profile_find_value_type(p, type);
	return v == PROFILE_NO_VALUE ? 0 : totals[v];
}

/* "recorded fraction 0.1, as recorded (--scale estimates totals)" */
const char *report_alloc_sampling(const struct profile *p, char *buf, size_t len)
{
	char mean[32];
	if (p->alloc_scheme == PROFILE_ALLOCS_RATE)
		snprintf(buf, len, "recorded fraction %g, %s", p->alloc_parameter,
			 p->alloc_scaled ? "scaled to estimates of every allocation (--scale)"
					 : "as recorded (--scale estimates totals)");
	else if (p->alloc_scheme == PROFILE_ALLOCS_BYTES)
		snprintf(buf, len, "byte-sampled, mean %s, %s",
			 format_value((int64_t)p->alloc_parameter, "bytes", mean, sizeof(mean)),
			 p->alloc_scaled ? "scaled to unbiased estimates (--scale)"
					 : "as recorded (--scale estimates totals)");
	else
		snprintf(buf, len, "recorded fraction 1 (every allocation: exact)");
	return buf;
}

/*
 * What an allocation profile's header says: both units' totals, the
 * sampling, peak, leaks, temporaries. In a view (--leaks...) those are the
 * run's, kept by the filter, and the Allocations line says how many of them
 * the view holds, the ones shown: the profile's own totals, which count the
 * view's blocks only, would read as the run's.
 */
static void alloc_lines(const struct report *r, const char *indent, const struct profile *p, const int64_t *totals)
{
	const struct palette *pal = &r->pal;
	char a[32], b[32], c[32], sampling[160];
	static const char *const types[8] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
					     "peak_objects", "peak_space", "temporary_objects", "temporary_space"};
	int64_t run[8];
	for (int t = 0; t < 8; t++)
		run[t] = p->alloc_view ? p->alloc_run[t] : total_of(p, totals, types[t]);
	int64_t objects = run[PROFILE_ALLOC_RUN_ALLOC], live_o = run[PROFILE_ALLOC_RUN_INUSE];
	fprintf(r->out, "%s%sAllocations:%s %" PRId64 "%s (%s), ", indent, pal->bold, pal->reset, objects,
		p->alloc_view ? " in the run" : "", format_value(run[PROFILE_ALLOC_RUN_ALLOC + 1], "bytes", a, sizeof(a)));
	if (p->alloc_view) {
		const char *view = profile_string(p, p->alloc_view);
		const char *what = !strcmp(view, "inuse_space") ? "leaked"
				   : !strcmp(view, "peak_space") ? "live at the peak" : "temporary";
		fprintf(r->out, "%" PRId64 " of them %s (%s), shown; ", total_of(p, totals, "alloc_objects"), what,
			format_value(total_of(p, totals, "alloc_space"), "bytes", b, sizeof(b)));
	}
	fprintf(r->out, "%" PRId64 " frees; %s\n", objects - live_o, report_alloc_sampling(p, sampling, sizeof(sampling)));
	fprintf(r->out, "%s%sHeap:%s peak %s live in %" PRId64 " blocks at %.3f s; leaked %s in %" PRId64
			" blocks at exit; temporary %" PRId64 " (%s)\n",
		indent, pal->bold, pal->reset, format_value(run[PROFILE_ALLOC_RUN_PEAK + 1], "bytes", b, sizeof(b)),
		run[PROFILE_ALLOC_RUN_PEAK], (double)p->alloc_peak_ns / 1e9,
		format_value(run[PROFILE_ALLOC_RUN_INUSE + 1], "bytes", c, sizeof(c)), live_o,
		run[PROFILE_ALLOC_RUN_TEMPORARY],
		format_value(run[PROFILE_ALLOC_RUN_TEMPORARY + 1], "bytes", a, sizeof(a)));
}

void report_samples_line(const struct report *r, const char *indent, const struct profile *p,
			 const int64_t *totals, int saturated)
{
	const struct palette *pal = &r->pal;
	char totals_text[512], interval[32];
	if (p->alloc_scheme) {
		alloc_lines(r, indent, p, totals);
		uint32_t count = profile_period_count(p);
		if (count == PROFILE_NO_VALUE || !totals[count])
			return;
		/* The profile's rows are mostly allocation rows: say what the CPU
		 * samples alone add up to. */
		char cpu[32];
		fprintf(r->out, "%s%sCPU samples:%s %" PRId64, indent, pal->bold, pal->reset, totals[count]);
		if (p->period_type != PROFILE_NO_VALUE)
			fprintf(r->out, ", %s of %s", format_value(totals[p->period_type],
				profile_string(p, p->value_types[p->period_type].unit), cpu, sizeof(cpu)),
				profile_string(p, p->value_types[p->period_type].type));
	} else {
		fprintf(r->out, "%s%sSamples:%s %" PRIu64 ", %s", indent, pal->bold, pal->reset, profile_samples_total(p),
			report_totals(p, totals, saturated, totals_text, sizeof(totals_text)));
	}
	if (p->period_type != PROFILE_NO_VALUE)
		fprintf(r->out, " (interval %s)",
			format_value(p->period, profile_string(p, p->value_types[p->period_type].unit), interval,
				     sizeof(interval)));
	fprintf(r->out, ", threads: %u, lost samples: %" PRIu64 "%s\n", p->nthreads, p->lost_samples,
		p->ended ? "" : " (trace truncated)");
}

void report_traces_line(const struct report *r, const char *indent)
{
	const struct profile *p = r->p;
	/* Processes and programs: distinct pids and commands among the threads
	 * (a test suite's traces hold thousands). */
	struct hashmap pids, commands;
	hashmap_init(&pids, p->nthreads);
	hashmap_init(&commands, 16);
	uint32_t processes = 0, programs = 0;
	for (uint32_t t = 0; t < p->nthreads; t++) {
		uint32_t *pid = hashmap_slot(&pids, p->threads[t].pid), *command = hashmap_slot(&commands, p->threads[t].command);
		if (*pid == HASHMAP_NONE)
			*pid = processes++;
		if (*command == HASHMAP_NONE)
			*command = programs++;
	}
	hashmap_free(&pids);
	hashmap_free(&commands);
	char d[32];
	fprintf(r->out, "%s%sTraces:%s %u summed: %u process%s, %u program%s, %s run in all\n", indent, r->pal.bold,
		r->pal.reset, p->ntraces, processes, processes == 1 ? "" : "es", programs, programs == 1 ? "" : "s",
		format_duration(p->duration_ns, d, sizeof(d)));
}

void report_header(const struct report *r, const struct calltree *all)
{
	const struct profile *p = r->p;
	const struct palette *pal = &r->pal;
	char safe[4096];
	const int64_t *totals = all->totals;
	int saturated = all->saturated;
	fprintf(r->out, "%sCommand:%s %s\n", pal->bold, pal->reset,
		p->command ? escape_text(profile_string(p, p->command), safe, sizeof(safe)) : "(unknown)");
	if (p->ntraces > 1)
		report_traces_line(r, "");
	report_samples_line(r, "", p, totals, saturated);
	/* Say which value the counts below are in when it is not the default. */
	uint32_t count = profile_period_count(p);
	if (p->alloc_scheme && count != PROFILE_NO_VALUE && totals[count] && r->value == p->default_value)
		fprintf(r->out, "%sValues:%s %s (%s): the trace has allocations and CPU samples, shown by "
				"allocations (--value samples or cpu for the CPU samples)\n",
			pal->bold, pal->reset, profile_string(p, p->value_types[r->value].type),
			profile_string(p, p->value_types[r->value].unit));
	else if (r->value != p->default_value)
		fprintf(r->out, "%sValues:%s %s (%s)\n", pal->bold, pal->reset,
			profile_string(p, p->value_types[r->value].type),
			profile_string(p, p->value_types[r->value].unit));
	fputc('\n', r->out);
}

void report_footer(const struct report *r, const struct calltree *t)
{
	const struct profile *p = r->p;
	char totals_text[512];
	if (p->alloc_scheme)
		fprintf(r->out, "Total: %s in %u thread%s.",
			report_totals(p, t->totals, t->saturated, totals_text, sizeof(totals_text)), p->nthreads,
			p->nthreads == 1 ? "" : "s");
	else
		fprintf(r->out, "Total samples: %" PRIu64 " (%s) in %u thread%s.", t->total_samples,
			report_totals(p, t->totals, t->saturated, totals_text, sizeof(totals_text)), p->nthreads,
			p->nthreads == 1 ? "" : "s");
	if (!r->o->filter.show_system)
		fputs(" System frames hidden (-C shows them).", r->out);
	fputc('\n', r->out);
	debug_hint_print(r->out, p, r->value, r->o->filter.show_system, "");
}

const char *report_file(const struct profile *p, uint32_t file, int full_paths)
{
	return file ? display_path(profile_string(p, file), full_paths) : "?";
}

const char *report_line(uint32_t line, char *buf, size_t len)
{
	if (line == 0)
		return "?";
	snprintf(buf, len, "%u", line);
	return buf;
}

int report_row_units(const struct report *r)
{
	const struct profile *p = r->p;
	const char *unit = profile_string(p, p->value_types[r->value].unit);
	const char *type = profile_string(p, p->value_types[r->value].type);
	return !strcmp(unit, "bytes") || (p->alloc_scheme && !strcmp(unit, "count") && strcmp(type, "samples"));
}

const char *report_row_value(const struct report *r, int64_t v, char *buf, size_t len)
{
	const struct profile *p = r->p;
	const char *unit = profile_string(p, p->value_types[r->value].unit);
	if (!strcmp(unit, "bytes"))
		return format_value(v, unit, buf, len);
	uint64_t m = abs_i64(v);
	if (m < 10000 || !report_row_units(r)) {
		snprintf(buf, len, "%" PRId64, v);
		return buf;
	}
	static const char *const units[] = {"K", "M", "G", "T", "P", "E"};
	double x = (double)m / 1000.0;
	int u = 0;
	while (x >= 999.95 && u < 5) {
		x /= 1000.0;
		u++;
	}
	snprintf(buf, len, "%s%.1f %s", v < 0 ? "-" : "", x, units[u]);
	return buf;
}

uint32_t report_source_types(const struct report *r, const struct source_options *so, uint32_t *types)
{
	uint32_t n = 0;
	types[n++] = r->value;
	if (so->format == SOURCE_FORMAT_TSV)
		for (uint32_t v = 0; v < r->p->nvalue_types; v++)
			if (v != r->value)
				types[n++] = v;
	return n;
}

double report_percent(int64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int report_digits(int64_t v)
{
	return decimal_digits(v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v) + (v < 0);
}
