/*
 * builtin-info.c - "analyze info": what is in a trace (info.h), as text or
 * with --format json as one JSON object holding every figure the text
 * shows (for scripts and tests).
 *
 * It loads without symbolizing: only the modules are opened, to say whether
 * debug info was found, and nothing is fetched from debuginfod. --pid and
 * --state describe only those processes' or states' samples.
 */
#include <inttypes.h>

#include "builtin.h"
#include "info.h"
#include "load.h"
#include "options.h"
#include "terminal.h"

struct info_args {
	int json; /* --format json */
	struct info_text_options text;
};

static const struct option_choice format_choices[] = {{"text", 0}, {"json", 1}, {NULL, 0}};

static const struct option_row info_rows[] = {
	OPT_CHOICE(0, "format", "FORMAT", struct info_args, json, format_choices,
		   "text (default) or json: one object with every figure\n"
		   "the text shows (totals per value type, threads,\n"
		   "modules, file, metadata, corrected figures)"),
	OPT_FLAG(0, "processes", struct info_args, text.every_process, 1,
		 "a trace of many processes: every process and\n"
		 "thread (default: one line per command)"),
	OPT_FLAG(0, "modules", struct info_args, text.every_module, 1,
		 "a trace of many processes: every module of each\n"
		 "(default: one line per distinct module)"),
	OPT_END(),
};

static const struct analyze_command info_command = {
	.name = "info",
	.synopsis = "analyze info [options] TRACE...",
	.operands = "TRACE...",
	.summary = "Describe a trace: the run, its totals, threads, modules and the file.\n"
		   "Several traces are described in turn, then what they add up to.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_SELECT | OPTGROUP_PAGER,
	.options = info_rows,
};

/* Sums over the traces info describes, for the closing line of several. */
struct info_sums {
	uint64_t samples, threads, processes, duration_ns;
};

/* Describe one trace: 0, 1 after a message, 2 after a usage error. */
static int describe(const struct analyze_command *cmd, const struct analyze_options *o, const struct info_args *a,
		    const struct load_options *lo, const char *trace, struct info_sums *sums)
{
	struct load_stats st;
	struct profile *p = load_trace(trace, lo, &st);
	uint32_t value = 0;
	int rc = p ? options_resolve_value(cmd, o, p, trace, &value) : 1;
	if (rc == 0) {
		sums->samples += profile_samples_total(p);
		sums->threads += p->nthreads;
		sums->processes += st.nprocesses ? st.nprocesses : 1;
		sums->duration_ns += p->duration_ns;
		struct info in;
		info_build(&in, trace, p, &st, &o->filter,
			   o->value_name ? value : profile_display_value(p, p->default_value));
		if (a->json)
			info_print_json(stdout, &in);
		else
			info_print_text(stdout, &in, &a->text);
		info_release(&in);
	} else {
		profile_free(p);
	}
	if (p)
		load_stats_free(&st);
	return rc;
}

int cmd_info(int argc, char **argv)
{
	struct info_args a = {0};
	const struct analyze_command *cmd = &info_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &a, &o);
	if (rc >= 0)
		return rc;
	struct load_options lo = o.load;
	lo.symbolize = 0;
	lo.open_modules = 1;
	lo.offline = 1; /* info says what is here; downloads are for reports */
	/* Several traces: each described in turn, one loaded at a time (as
	 * JSON, an array of their objects), then what they add up to. */
	struct info_sums sums = {0};
	int many = o.noperands > 1;
	if (!a.json)
		options_start_pager(&o);
	else if (many)
		fputs("[\n", stdout);
	for (int i = 0; i < o.noperands && rc <= 0; i++) {
		if (i && !a.json)
			fputc('\n', stdout);
		else if (i)
			fputs(",\n", stdout);
		rc = describe(cmd, &o, &a, &lo, o.operands[i], &sums);
	}
	if (rc == 0 && many && a.json) {
		fputs("]\n", stdout);
	} else if (rc == 0 && many) {
		char d[32];
		printf("\nAll %d traces: %" PRIu64 " samples, %" PRIu64 " threads in %" PRIu64 " processes, %s run\n",
		       o.noperands, sums.samples, sums.threads, sums.processes, format_duration(sums.duration_ns, d, sizeof(d)));
	}
	if (rc == 0)
		rc = finish_output(cmd);
	analyze_options_free(&o);
	return rc;
}
