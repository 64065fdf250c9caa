/*
 * report.c - shared pieces of the text reports (see report.h).
 */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "debug_hint.h"
#include "load.h"

struct profile *report_profile(const struct analyze_options *o)
{
	struct profile *p = load_trace(o->trace, &o->load, NULL);
	if (!p)
		return NULL;
	return filter_profile_consume(p, &o->filter);
}

int report_command(int argc, char **argv, const struct analyze_command *cmd, report_print_fn print)
{
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &o);
	if (rc >= 0)
		return rc;
	struct profile *p = report_profile(&o);
	rc = p ? 0 : 1; /* report_profile has said what went wrong */
	if (p)
		print(stdout, p, &o);
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}

void report_header(FILE *out, const struct profile *p, const struct palette *pal)
{
	char cpu[32], interval[32];
	fprintf(out, "%sCommand:%s %s\n", pal->bold, pal->reset,
		p->command ? profile_string(p, p->command) : "(unknown)");
	fprintf(out, "%sSamples:%s %" PRIu64 ", weight %" PRIu64 " = %s of CPU (interval %s)",
		pal->bold, pal->reset, p->nsamples, p->total_weight,
		format_duration(profile_weight_ns(p, p->total_weight), cpu, sizeof(cpu)),
		format_duration(p->interval_ns, interval, sizeof(interval)));
	fprintf(out, ", threads: %u, lost samples: %" PRIu64 "%s\n", p->nthreads, p->lost_samples,
		p->ended ? "" : " (trace truncated)");
	fputc('\n', out);
}

void report_footer(FILE *out, const struct profile *p, uint64_t samples, uint64_t weight,
		   const struct analyze_options *o)
{
	char cpu[32];
	fprintf(out, "Total samples: %" PRIu64 " (weight %" PRIu64 " = %s of CPU) in %u thread%s.",
		samples, weight, format_duration(profile_weight_ns(p, weight), cpu, sizeof(cpu)),
		p->nthreads, p->nthreads == 1 ? "" : "s");
	if (!o->filter.show_system)
		fputs(" System frames hidden (-C shows them).", out);
	fputc('\n', out);
	debug_hint_print(out, p, o->filter.show_system, "");
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

double report_percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}
