/*
 * options.c - parsing of the options analyze commands share (see options.h):
 * one table of shared long options, merged with each command's own, one
 * --help layout and one style of usage error.
 */
#include "options.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "pager.h"
#include "terminal.h"

struct shared_option {
	unsigned group;
	struct option opt;
	const char *help;
};

static const struct shared_option shared_options[] = {
	{OPTGROUP_LOAD, {"debug-dir", required_argument, NULL, OPTION_DEBUG_DIR},
	 "      --debug-dir DIR     also look for debug info in DIR (repeatable)"},
	{OPTGROUP_LOAD, {"search-dir", required_argument, NULL, OPTION_SEARCH_DIR},
	 "      --search-dir DIR    where a module's recorded file is missing or another\n"
	 "                          build, look for it in DIR by build-id (DIR/.build-id/\n"
	 "                          xx/yyyy, as analyze archive packs it), by its path\n"
	 "                          under DIR and by name; its debug files too\n"
	 "                          (repeatable). A file with another build-id is never\n"
	 "                          used. Source files (analyze source, view) moved since\n"
	 "                          the build: DIR/PATH for the recorded path and each of\n"
	 "                          its tails (DIR/src/a.c, DIR/a.c for /home/x/src/a.c)"},
	{OPTGROUP_LOAD, {"no-demangle", no_argument, NULL, OPTION_NO_DEMANGLE},
	 "      --no-demangle       show C++/Rust names as in the binary"},
	{OPTGROUP_LOAD, {"keep-clones", no_argument, NULL, OPTION_KEEP_CLONES},
	 "      --keep-clones       keep gcc clones (.part.N, .isra.N, .cold...) apart"},
	{OPTGROUP_LOAD, {"full-names", no_argument, NULL, OPTION_FULL_NAMES},
	 "      --full-names        C++ names with return type and parameters (default:\n"
	 "                          none, parameters only to tell overloads apart)"},
	{OPTGROUP_LOAD, {"offline", no_argument, NULL, OPTION_OFFLINE},
	 "      --offline           never fetch debug info from debuginfod (by default\n"
	 "                          the servers in DEBUGINFOD_URLS are asked, by\n"
	 "                          build-id, for modules without local debug info;\n"
	 "                          files are cached in DEBUGINFOD_CACHE_PATH)"},
	{OPTGROUP_LOAD, {"debuginfod-timeout", required_argument, NULL, OPTION_DEBUGINFOD_TIMEOUT},
	 "      --debuginfod-timeout S  give up on a debuginfod download after S\n"
	 "                          seconds (default 30); after one timeout or an\n"
	 "                          unreachable server none is asked again"},
	{OPTGROUP_LOAD, {"raw-names", no_argument, NULL, OPTION_RAW_NAMES},
	 "      --raw-names         name functions as their debug info does, internal\n"
	 "                          aliases included (__libc_malloc, not malloc)"},
	{OPTGROUP_FILTER, {"C", no_argument, NULL, 'C'},
	 "  -C, --C                 also show system frames (libc, libstdc++, ld.so,\n"
	 "                          startup code, the agent); hidden by default, their\n"
	 "                          cost charged to the nearest shown caller"},
	{OPTGROUP_FILTER, {"tid", required_argument, NULL, OPTION_TID},
	 "      --tid N             only samples of thread N (repeatable)"},
	{OPTGROUP_SELECT, {"pid", required_argument, NULL, OPTION_PID},
	 "      --pid N             only samples of process N (repeatable; analyze info\n"
	 "                          lists the processes of a trace)"},
	{OPTGROUP_SELECT, {"state", required_argument, NULL, OPTION_STATE},
	 "      --state STATE       only samples of threads on-cpu (running) or off-cpu\n"
	 "                          (blocked: sleeping, waiting, in a system call); a\n"
	 "                          wall-mode trace has both, a CPU trace only on-cpu"},
	{OPTGROUP_PROGRAMS, {"comm", required_argument, NULL, OPTION_COMM},
	 "      --comm NAME         only samples of processes running the program NAME\n"
	 "                          (its basename: cc1; repeatable; analyze info lists\n"
	 "                          the commands of a trace)"},
	{OPTGROUP_PROGRAMS, {"module", required_argument, NULL, OPTION_MODULE},
	 "      --module NAME       only samples with a frame in the module NAME (its\n"
	 "                          basename: libz.so.1; repeatable)"},
	{OPTGROUP_PROGRAMS, {"focus", required_argument, NULL, OPTION_FOCUS},
	 "      --focus REGEX       only samples with a frame whose function matches\n"
	 "                          REGEX (POSIX extended; system frames too; repeatable)"},
	{OPTGROUP_PROGRAMS, {"ignore", required_argument, NULL, OPTION_IGNORE},
	 "      --ignore REGEX      leave out samples with a frame whose function\n"
	 "                          matches REGEX (repeatable)"},
	{OPTGROUP_FILTER, {"no-inline", no_argument, NULL, OPTION_NO_INLINE},
	 "      --no-inline         charge inlined frames to the function they were\n"
	 "                          inlined into, as perf report --no-inline does"},
	{OPTGROUP_FILTER, {"leaks", no_argument, NULL, OPTION_LEAKS},
	 "      --leaks             allocation traces: only what was never freed, by\n"
	 "                          inuse_space (live at exit)"},
	{OPTGROUP_FILTER, {"peak", no_argument, NULL, OPTION_PEAK},
	 "      --peak              allocation traces: what was live at the moment of\n"
	 "                          the highest live heap, by peak_space"},
	{OPTGROUP_FILTER, {"temporary", no_argument, NULL, OPTION_TEMPORARY},
	 "      --temporary         allocation traces: blocks freed before their thread\n"
	 "                          allocated again, by temporary_space"},
	{OPTGROUP_LOAD, {"scale", no_argument, NULL, OPTION_SCALE},
	 "      --scale             sampled allocation traces: weigh each recorded\n"
	 "                          allocation up (1/RATE, or by its size when bytes\n"
	 "                          were sampled) to estimate the whole run's figures"},
	{OPTGROUP_LOAD, {"no-alloc-leaves", no_argument, NULL, OPTION_NO_ALLOC_LEAVES},
	 "      --no-alloc-leaves   allocation traces: no leaves naming what was\n"
	 "                          allocated (\"malloc 32 B\") below the allocating frame"},
	{OPTGROUP_MINCOUNT, {"mincount", required_argument, NULL, OPTION_MINCOUNT},
	 "      --mincount N        hide entries with a count below N"},
	{OPTGROUP_LINES, {"lines", no_argument, NULL, OPTION_LINES},
	 "      --lines             one entry per source line instead of per function"},
	{OPTGROUP_COMBINE, {"combine", no_argument, NULL, OPTION_COMBINE},
	 "      --combine           merge addresses of the same source line (default)"},
	{OPTGROUP_COMBINE, {"no-combine", no_argument, NULL, OPTION_NO_COMBINE},
	 "      --no-combine        one entry per instruction address, address shown"},
	{OPTGROUP_WIDTH, {"width", required_argument, NULL, OPTION_WIDTH},
	 "      --width N           fit lines in N columns (default: the terminal's,\n"
	 "                          unlimited when not a terminal)"},
	{OPTGROUP_LOOK, {"full-paths", no_argument, NULL, OPTION_FULL_PATHS},
	 "      --full-paths        show full source paths, never shortened"},
	{OPTGROUP_LOOK, {"color", required_argument, NULL, OPTION_COLOR},
	 "      --color WHEN        auto (default: on a terminal unless NO_COLOR is\n"
	 "                          set), always or never"},
	{OPTGROUP_PAGER, {"no-pager", no_argument, NULL, OPTION_NO_PAGER},
	 "      --no-pager          never page; on a terminal the report goes through\n"
	 "                          IPSCOPE_PAGER, PAGER or less (none when it is empty\n"
	 "                          or cat); a pipe or a file is never paged"},
	{0, {"quiet", no_argument, NULL, 'q'},
	 "  -q, --quiet             no warnings (each is said once per run otherwise)"},
	{0, {"value", required_argument, NULL, OPTION_VALUE},
	 "      --value TYPE        the value type to show: samples (default: timer\n"
	 "                          periods) or cpu (nanoseconds) in a CPU trace"},
};

#define NSHARED (sizeof(shared_options) / sizeof(shared_options[0]))

static const struct option help_option = {"help", no_argument, NULL, 'h'};

int usage_error(const struct analyze_command *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "analyze %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'analyze %s --help')\n", cmd->name);
	return 2;
}

int parse_u64(const char *s, uint64_t *out)
{
	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	if (!s || !*s)
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int parse_confidence(const struct analyze_command *cmd, const char *arg, double *out)
{
	if (parse_double(arg, out) || !(*out > 0 && *out < 1)) {
		usage_error(cmd, "--confidence wants a number between 0 and 1 (0.99 is 99%%), not '%s'", arg);
		return -1;
	}
	return 0;
}

void analyze_options_help(FILE *out, const struct analyze_command *cmd)
{
	fprintf(out, "usage: %s\n\n%s\n\n", cmd->synopsis, cmd->summary);
	if (cmd->help)
		fputs(cmd->help, out);
	for (size_t i = 0; i < NSHARED; i++)
		if (!shared_options[i].group || (cmd->groups & shared_options[i].group))
			fprintf(out, "%s\n", shared_options[i].help);
	fputs("  -h, --help              show this help\n", out);
}

/* Append one value to a NULL/0-terminated growable array. */
static void *append(void *array, size_t *n, size_t elem, const void *value)
{
	char *a = realloc_or_abort(array, (*n + 2) * elem);
	memcpy(a + *n * elem, value, elem);
	memset(a + (*n + 1) * elem, 0, elem);
	(*n)++;
	return a;
}

static int handle_shared(const struct analyze_command *cmd, struct analyze_options *o, int opt,
			 const char *arg)
{
	uint64_t v;
	size_t n;
	switch (opt) {
	case OPTION_DEBUG_DIR:
		n = (size_t)o->load.ndebug_dirs;
		o->debug_dirs = append(o->debug_dirs, &n, sizeof(*o->debug_dirs), &arg);
		o->load.debug_dirs = o->debug_dirs;
		o->load.ndebug_dirs = (int)n;
		return 0;
	case OPTION_SEARCH_DIR:
		n = (size_t)o->load.nsearch_dirs;
		o->search_dirs = append(o->search_dirs, &n, sizeof(*o->search_dirs), &arg);
		o->load.search_dirs = o->search_dirs;
		o->load.nsearch_dirs = (int)n;
		return 0;
	case OPTION_NO_DEMANGLE:
		o->load.demangle = 0;
		return 0;
	case OPTION_KEEP_CLONES:
		o->load.keep_clones = 1;
		return 0;
	case OPTION_FULL_NAMES:
		o->load.full_names = 1;
		return 0;
	case OPTION_RAW_NAMES:
		o->load.raw_names = 1;
		return 0;
	case OPTION_OFFLINE:
		o->load.offline = 1;
		return 0;
	case OPTION_DEBUGINFOD_TIMEOUT: {
		double seconds;
		if (parse_double(arg, &seconds) || seconds <= 0 || seconds > 86400)
			return usage_error(cmd, "--debuginfod-timeout wants seconds, not '%s'", arg);
		o->load.debuginfod_timeout = seconds;
		return 0;
	}
	case 'C':
		o->filter.show_system = 1;
		return 0;
	case OPTION_TID:
		if (parse_u64(arg, &v) || v > UINT32_MAX)
			return usage_error(cmd, "--tid wants a thread id, not '%s'", arg);
		n = (size_t)o->filter.ntids;
		uint32_t tid = (uint32_t)v;
		o->tids = append(o->tids, &n, sizeof(*o->tids), &tid);
		o->filter.tids = o->tids;
		o->filter.ntids = (int)n;
		return 0;
	case OPTION_PID:
		if (parse_u64(arg, &v) || v == 0 || v > UINT32_MAX)
			return usage_error(cmd, "--pid wants a process id, not '%s'", arg);
		n = (size_t)o->filter.npids;
		uint32_t pid = (uint32_t)v;
		o->pids = append(o->pids, &n, sizeof(*o->pids), &pid);
		o->filter.pids = o->pids;
		o->filter.npids = (int)n;
		return 0;
	case OPTION_COMM:
	case OPTION_MODULE: {
		if (!*arg)
			return usage_error(cmd, "%s wants a name", opt == OPTION_COMM ? "--comm" : "--module");
		int *count = opt == OPTION_COMM ? &o->filter.ncomms : &o->filter.nmodules;
		const char ***names = opt == OPTION_COMM ? &o->comms : &o->modules;
		n = (size_t)*count;
		*names = append(*names, &n, sizeof(**names), &arg);
		*count = (int)n;
		o->filter.comms = o->comms;
		o->filter.modules = o->modules;
		return 0;
	}
	case OPTION_FOCUS:
	case OPTION_IGNORE: {
		int *count = opt == OPTION_FOCUS ? &o->filter.nfocus : &o->filter.nignore;
		regex_t **res = opt == OPTION_FOCUS ? &o->focus : &o->ignore;
		*res = realloc_or_abort(*res, ((size_t)*count + 1) * sizeof(**res));
		int err = regcomp(&(*res)[*count], arg, REG_EXTENDED | REG_NOSUB);
		if (err) {
			char why[128];
			regerror(err, &(*res)[*count], why, sizeof(why));
			return usage_error(cmd, "%s '%s': %s", opt == OPTION_FOCUS ? "--focus" : "--ignore", arg, why);
		}
		(*count)++;
		o->filter.focus = o->focus;
		o->filter.ignore = o->ignore;
		return 0;
	}
	case OPTION_STATE:
		if (!strcmp(arg, "on-cpu"))
			o->filter.state = FILTER_STATE_ON_CPU;
		else if (!strcmp(arg, "off-cpu"))
			o->filter.state = FILTER_STATE_OFF_CPU;
		else
			return usage_error(cmd, "--state wants on-cpu or off-cpu, not '%s'", arg);
		return 0;
	case OPTION_NO_INLINE:
		o->filter.no_inline = 1;
		return 0;
	case OPTION_LEAKS:
	case OPTION_PEAK:
	case OPTION_TEMPORARY:
		if (o->filter.view)
			return usage_error(cmd, "%s", "--leaks, --peak and --temporary are views: choose one");
		o->filter.view = opt == OPTION_LEAKS ? FILTER_VIEW_LEAKS : opt == OPTION_PEAK ? FILTER_VIEW_PEAK
											   : FILTER_VIEW_TEMPORARY;
		return 0;
	case OPTION_SCALE:
		o->load.scale = 1;
		return 0;
	case OPTION_NO_ALLOC_LEAVES:
		o->load.no_alloc_leaves = 1;
		return 0;
	case OPTION_MINCOUNT:
		if (parse_u64(arg, &v))
			return usage_error(cmd, "--mincount wants a count, not '%s'", arg);
		o->mincount = v;
		return 0;
	case OPTION_LINES:
		o->lines = 1;
		return 0;
	case OPTION_COMBINE:
		o->combine = 1;
		return 0;
	case OPTION_NO_COMBINE:
		o->combine = 0;
		return 0;
	case OPTION_WIDTH:
		if (parse_u64(arg, &v) || v > 100000)
			return usage_error(cmd, "--width wants a number of columns, not '%s'", arg);
		o->width = (int)v;
		return 0;
	case OPTION_FULL_PATHS:
		o->full_paths = 1;
		return 0;
	case OPTION_VALUE:
		o->value_name = arg;
		return 0;
	}
	return usage_error(cmd, "internal: unhandled option %d", opt);
}

/* The operands after the options: -1 when their number is right, else 2
 * after naming the first missing one or the first one too many. */
static int read_operands(const struct analyze_command *cmd, struct analyze_options *o, int n, char **argv)
{
	char names[128];
	snprintf(names, sizeof(names), "%s", cmd->operands ? cmd->operands : "TRACE");
	const char *name[ANALYZE_MAX_OPERANDS];
	int max = 0;
	for (char *save = NULL, *w = strtok_r(names, " ", &save); w && max < ANALYZE_MAX_OPERANDS;
	     w = strtok_r(NULL, " ", &save))
		name[max++] = w;
	int min = max - cmd->optional_operands;
	if (n < min)
		return usage_error(cmd, "missing %s operand", name[n]);
	if (n > max)
		return usage_error(cmd, "unexpected operand '%s'", argv[max]);
	for (int i = 0; i < n; i++)
		o->operands[i] = argv[i];
	o->noperands = n;
	return -1;
}

int analyze_options_parse(int argc, char **argv, const struct analyze_command *cmd,
			  struct analyze_options *o)
{
	memset(o, 0, sizeof(*o));
	load_options_init(&o->load);
	o->combine = 1;
	o->width = -1; /* not given */

	/* Merge the shared options of the command's groups with its own. */
	struct option longopts[64];
	size_t n = 0;
	for (size_t i = 0; i < NSHARED; i++)
		if (!shared_options[i].group || (cmd->groups & shared_options[i].group))
			longopts[n++] = shared_options[i].opt;
	for (const struct option *op = cmd->options; op && op->name; op++) {
		if (n + 2 >= sizeof(longopts) / sizeof(longopts[0]))
			break;
		longopts[n++] = *op;
	}
	longopts[n++] = help_option;
	memset(&longopts[n], 0, sizeof(longopts[n]));

	/* ':' first: getopt reports a missing argument as ':' and stays quiet. */
	char shortopts[64] = ":hq";
	if (cmd->groups & OPTGROUP_FILTER)
		strcat(shortopts, "C");
	if (cmd->short_options && strlen(cmd->short_options) < sizeof(shortopts) - 8)
		strcat(shortopts, cmd->short_options);

	const char *color = "auto";
	int no_pager = 0;
	int rc = -1;
	opterr = 0;
	optind = 1;
	for (;;) {
		int opt = getopt_long(argc, argv, shortopts, longopts, NULL);
		if (opt == -1)
			break;
		const char *bad = argv[optind - 1];
		if (opt == 'h') {
			analyze_options_help(stdout, cmd);
			rc = 0;
			goto out;
		} else if (opt == '?') {
			if (optopt && optopt < 256)
				rc = usage_error(cmd, "unknown option '-%c'", optopt);
			else
				rc = usage_error(cmd, "unknown option '%s'", bad);
			goto out;
		} else if (opt == ':') {
			rc = usage_error(cmd, "option '%s' needs a value", bad);
			goto out;
		} else if (opt == 'q') {
			diag_stderr_set_quiet(1); /* the one stderr sink every command's messages go to */
		} else if (opt == OPTION_COLOR) {
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never")) {
				rc = usage_error(cmd, "--color wants auto, always or never, not '%s'",
						 optarg);
				goto out;
			}
			color = optarg;
		} else if (opt == OPTION_NO_PAGER) {
			no_pager = 1;
		} else if (opt == 'C' || (opt >= 256 && opt < OPTION_COMMAND_FIRST)) {
			if (handle_shared(cmd, o, opt, optarg)) {
				rc = 2;
				goto out;
			}
		} else if (!cmd->handle || cmd->handle(opt, optarg, cmd->ctx)) {
			rc = 2;
			goto out;
		}
	}
	if ((rc = read_operands(cmd, o, argc - optind, argv + optind)) >= 0)
		goto out;
	o->trace = o->operands[0];
	o->color = terminal_use_color(color, STDOUT_FILENO);
	if (o->width < 0)
		o->width = terminal_width(STDOUT_FILENO);
	o->pager = (cmd->groups & OPTGROUP_PAGER) && pager_wanted(no_pager);
	return -1;
out:
	analyze_options_free(o);
	return rc;
}

void analyze_options_free(struct analyze_options *o)
{
	for (int i = 0; i < o->filter.nfocus; i++)
		regfree(&o->focus[i]);
	for (int i = 0; i < o->filter.nignore; i++)
		regfree(&o->ignore[i]);
	free(o->focus);
	free(o->ignore);
	free(o->comms);
	free(o->modules);
	o->focus = o->ignore = NULL;
	o->comms = o->modules = NULL;
	o->filter.focus = o->filter.ignore = NULL;
	o->filter.comms = o->filter.modules = NULL;
	o->filter.nfocus = o->filter.nignore = o->filter.ncomms = o->filter.nmodules = 0;
	free(o->debug_dirs);
	free(o->search_dirs);
	free(o->tids);
	free(o->pids);
	o->pids = NULL;
	o->filter.pids = NULL;
	o->filter.npids = 0;
	o->debug_dirs = NULL;
	o->search_dirs = NULL;
	o->load.search_dirs = NULL;
	o->load.nsearch_dirs = 0;
	o->tids = NULL;
	o->load.debug_dirs = NULL;
	o->load.ndebug_dirs = 0;
	o->filter.tids = NULL;
	o->filter.ntids = 0;
}

void options_start_pager(const struct analyze_options *o)
{
	if (o->pager)
		pager_start();
}

int options_resolve_value(const struct analyze_command *cmd, const struct analyze_options *o,
			  const struct profile *p, uint32_t *value)
{
	if (o->filter.view && profile_find_value_type(p, filter_view_type(o->filter.view)) == PROFILE_NO_VALUE)
		return usage_error(cmd, "%s: %s has no allocations (record them with collect --allocs)",
				   filter_view_option(o->filter.view), o->trace);
	if (!o->value_name) {
		*value = p->default_value;
		return 0;
	}
	*value = profile_find_value_type(p, o->value_name);
	if (*value != PROFILE_NO_VALUE)
		return 0;
	char names[256];
	if (filter_view_lacks(o->filter.view, o->value_name, names, sizeof(names)))
		return usage_error(cmd, "--value %s with %s: %s", o->value_name, filter_view_option(o->filter.view),
				   names);
	return usage_error(cmd, "--value %s: %s has the value types %s", o->value_name, o->trace,
			   profile_value_type_names(p, names, sizeof(names)));
}

int finish_output(const struct analyze_command *cmd)
{
	/* fclose reports what fflush and the earlier writes could not: its
	 * errno is the reason (ENOSPC, EPIPE, EBADF). */
	errno = 0;
	int failed = ferror(stdout) != 0;
	int saved = errno;
	if (fflush(stdout) != 0)
		failed = 1, saved = errno;
	if (fclose(stdout) != 0 && !failed)
		failed = 1, saved = errno;
	if (!failed)
		return 0;
	fprintf(stderr, "analyze %s: writing standard output: %s\n", cmd->name,
		saved ? strerror(saved) : "write error");
	return 1;
}
