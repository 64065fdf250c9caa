/*
 * builtin-info.c - "analyze info": what is in a trace (info.h), as text or
 * with --format json as one JSON object holding every figure the text
 * shows (for scripts and tests).
 *
 * It loads without symbolizing: only the modules are opened, to say whether
 * debug info was found, and nothing is fetched from debuginfod. --pid and
 * --state describe only those processes' or states' samples.
 */
#include "builtin.h"
#include "info.h"
#include "load.h"
#include "options.h"

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
	.synopsis = "analyze info [options] TRACE",
	.summary = "Describe a trace: the run, its totals, threads, modules and the file.",
	.groups = OPTGROUP_LOAD | OPTGROUP_PROGRAMS | OPTGROUP_SELECT | OPTGROUP_PAGER,
	.options = info_rows,
};

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
	const char *trace = o.operands[0];
	struct load_stats st;
	struct profile *p = load_trace(trace, &lo, &st);
	uint32_t value = 0;
	rc = p ? options_resolve_value(cmd, &o, p, trace, &value) : 1;
	if (rc == 0) {
		struct info in;
		info_build(&in, trace, p, &st, &o.filter,
			   o.value_name ? value : profile_display_value(p, p->default_value));
		if (a.json) {
			info_print_json(stdout, &in);
		} else {
			options_start_pager(&o);
			info_print_text(stdout, &in, &a.text);
		}
		info_release(&in);
		rc = finish_output(cmd);
	} else {
		profile_free(p);
	}
	if (p)
		load_stats_free(&st);
	analyze_options_free(&o);
	return rc;
}
