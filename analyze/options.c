/*
 * options.c - analyze's command lines (see options.h): the rows of the
 * options commands share, one parser and one --help layout for them and a
 * command's own rows, one style of usage error.
 */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "pager.h"
#include "terminal.h"

/* A shared row and the group of commands that take it (0: every command). */
struct shared_row {
	unsigned group;
	struct option_row row;
};

static int add_name(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);
static int add_id(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);
static int add_regex(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);
static int set_timeout(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);
static int set_view(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);
static int set_width(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);
static int set_quiet(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg);

/* The shared rows set fields of struct analyze_options. */
#define SHARED struct analyze_options

static const struct option_choice state_choices[] = {
	{"on-cpu", FILTER_STATE_ON_CPU}, {"off-cpu", FILTER_STATE_OFF_CPU}, {NULL, 0}};
/* In the order terminal_use_color's names index them. */
static const struct option_choice color_choices[] = {{"auto", 0}, {"always", 1}, {"never", 2}, {NULL, 0}};

/* --help lists a command's shared options in this order. */
static const struct shared_row shared_rows[] = {
	{OPTGROUP_LOAD, OPT_CALLBACK(0, "debug-dir", "DIR", SHARED, debug_dirs, option_add_string,
				     "also look for debug info in DIR (repeatable)")},
	{OPTGROUP_LOAD, OPT_CALLBACK(0, "search-dir", "DIR", SHARED, search_dirs, option_add_string,
				     "where a module's recorded file is missing or another\n"
				     "build, look for it in DIR by build-id (DIR/.build-id/\n"
				     "xx/yyyy, as analyze archive packs it), by its path\n"
				     "under DIR and by name; its debug files too\n"
				     "(repeatable). A file with another build-id is never\n"
				     "used. Source files (analyze source, view) moved since\n"
				     "the build: DIR/PATH for the recorded path and each of\n"
				     "its tails (DIR/src/a.c, DIR/a.c for /home/x/src/a.c)")},
	{OPTGROUP_LOAD, OPT_FLAG(0, "no-demangle", SHARED, load.demangle, 0, "show C++/Rust names as in the binary")},
	{OPTGROUP_LOAD, OPT_FLAG(0, "keep-clones", SHARED, load.keep_clones, 1,
				 "keep gcc clones (.part.N, .isra.N, .cold...) apart")},
	{OPTGROUP_LOAD, OPT_FLAG(0, "full-names", SHARED, load.full_names, 1,
				 "C++ names with return type and parameters (default:\n"
				 "none, parameters only to tell overloads apart)")},
	{OPTGROUP_LOAD, OPT_FLAG(0, "offline", SHARED, load.offline, 1,
				 "never fetch debug info from debuginfod (by default\n"
				 "the servers in DEBUGINFOD_URLS are asked, by\n"
				 "build-id, for modules without local debug info;\n"
				 "files are cached in DEBUGINFOD_CACHE_PATH)")},
	{OPTGROUP_LOAD, OPT_CALLBACK(0, "debuginfod-timeout", "S", SHARED, load.debuginfod_timeout, set_timeout,
				     "give up on a debuginfod download after S\n"
				     "seconds (default 30); after one timeout or an\n"
				     "unreachable server none is asked again")},
	{OPTGROUP_LOAD, OPT_FLAG(0, "raw-names", SHARED, load.raw_names, 1,
				 "name functions as their debug info does, internal\n"
				 "aliases included (__libc_malloc, not malloc)")},
	{OPTGROUP_FILTER, OPT_FLAG('C', "C", SHARED, filter.show_system, 1,
				   "also show system frames (libc, libstdc++, ld.so,\n"
				   "startup code, the agent); hidden by default, their\n"
				   "cost charged to the nearest shown caller")},
	{OPTGROUP_FILTER, {.name = "tid", .argname = "N", .help = "only samples of thread N (repeatable)",
			   .type = OPTION_CALLBACK, .offset = offsetof(SHARED, tids), .parse = add_id,
			   .min = 0, .max = UINT32_MAX, .wants = "a thread id"}},
	{OPTGROUP_SELECT, {.name = "pid", .argname = "N",
			   .help = "only samples of process N (repeatable; analyze info\n"
				   "lists the processes of a trace)",
			   .type = OPTION_CALLBACK, .offset = offsetof(SHARED, pids), .parse = add_id,
			   .min = 1, .max = UINT32_MAX, .wants = "a process id"}},
	{OPTGROUP_SELECT, OPT_CHOICE(0, "state", "STATE", SHARED, filter.state, state_choices,
				     "only samples of threads on-cpu (running) or off-cpu\n"
				     "(blocked: sleeping, waiting, in a system call); a\n"
				     "wall-mode trace has both, a CPU trace only on-cpu")},
	{OPTGROUP_PROGRAMS, OPT_CALLBACK(0, "comm", "NAME", SHARED, comms, add_name,
					 "only samples of processes running the program NAME\n"
					 "(its basename: cc1; repeatable; analyze info lists\n"
					 "the commands of a trace)")},
	{OPTGROUP_PROGRAMS, OPT_CALLBACK(0, "module", "NAME", SHARED, modules, add_name,
					 "only samples with a frame in the module NAME (its\n"
					 "basename: libz.so.1; repeatable)")},
	{OPTGROUP_PROGRAMS, OPT_CALLBACK(0, "focus", "REGEX", SHARED, focus, add_regex,
					 "only samples with a frame whose function matches\n"
					 "REGEX (POSIX extended; system frames too; repeatable)")},
	{OPTGROUP_PROGRAMS, OPT_CALLBACK(0, "ignore", "REGEX", SHARED, ignore, add_regex,
					 "leave out samples with a frame whose function\n"
					 "matches REGEX (repeatable)")},
	{OPTGROUP_FILTER, OPT_FLAG(0, "no-inline", SHARED, filter.no_inline, 1,
				   "charge inlined frames to the function they were\n"
				   "inlined into, as perf report --no-inline does")},
	{OPTGROUP_FILTER, {.name = "leaks", .help = "allocation traces: only what was never freed, by\n"
						    "inuse_space (live at exit)",
			   .type = OPTION_CALLBACK, .offset = offsetof(SHARED, filter.view), .parse = set_view,
			   .set = FILTER_VIEW_LEAKS}},
	{OPTGROUP_FILTER, {.name = "peak", .help = "allocation traces: what was live at the moment of\n"
						   "the highest live heap, by peak_space",
			   .type = OPTION_CALLBACK, .offset = offsetof(SHARED, filter.view), .parse = set_view,
			   .set = FILTER_VIEW_PEAK}},
	{OPTGROUP_FILTER, {.name = "temporary", .help = "allocation traces: blocks freed before their thread\n"
							"allocated again, by temporary_space",
			   .type = OPTION_CALLBACK, .offset = offsetof(SHARED, filter.view), .parse = set_view,
			   .set = FILTER_VIEW_TEMPORARY}},
	{OPTGROUP_LOAD, OPT_FLAG(0, "scale", SHARED, load.scale, 1,
				 "sampled allocation traces: weigh each recorded\n"
				 "allocation up (1/RATE, or by its size when bytes\n"
				 "were sampled) to estimate the whole run's figures")},
	{OPTGROUP_LOAD, OPT_FLAG(0, "no-alloc-leaves", SHARED, load.no_alloc_leaves, 1,
				 "allocation traces: no leaves naming what was\n"
				 "allocated (\"malloc 32 B\") below the allocating frame")},
	{OPTGROUP_MINCOUNT, OPT_U64(0, "mincount", "N", SHARED, mincount, 0, 0, "a count",
				    "hide entries with a count below N")},
	{OPTGROUP_LINES, OPT_FLAG(0, "lines", SHARED, lines, 1, "one entry per source line instead of per function")},
	{OPTGROUP_COMBINE, OPT_FLAG(0, "combine", SHARED, combine, 1, "merge addresses of the same source line (default)")},
	{OPTGROUP_COMBINE, OPT_FLAG(0, "no-combine", SHARED, combine, 0, "one entry per instruction address, address shown")},
	{OPTGROUP_WIDTH, OPT_CALLBACK(0, "width", "N", SHARED, width, set_width,
				      "fit lines in N columns (default: the terminal's,\n"
				      "unlimited when not a terminal)")},
	{OPTGROUP_LOOK, OPT_FLAG(0, "full-paths", SHARED, full_paths, 1, "show full source paths, never shortened")},
	{OPTGROUP_LOOK, OPT_CHOICE(0, "color", "WHEN", SHARED, color_when, color_choices,
				   "auto (default: on a terminal unless NO_COLOR is\n"
				   "set), always or never")},
	{OPTGROUP_PAGER, OPT_FLAG(0, "no-pager", SHARED, no_pager, 1,
				  "never page; on a terminal the report goes through\n"
				  "IPSCOPE_PAGER, PAGER or less (none when it is empty\n"
				  "or cat); a pipe or a file is never paged")},
	{0, {.short_name = 'q', .name = "quiet", .help = "no warnings (each is said once per run otherwise)",
	     .type = OPTION_CALLBACK, .parse = set_quiet}},
	{0, OPT_STRING(0, "value", "TYPE", SHARED, value_name,
		       "the value type to show: samples (default: timer\n"
		       "periods) or cpu (nanoseconds) in a CPU trace")},
	{0, {.short_name = 'h', .name = "help", .help = "show this help", .type = OPTION_HELP}},
};

#define NSHARED (sizeof(shared_rows) / sizeof(shared_rows[0]))

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

int runtime_error(const struct analyze_command *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "analyze %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
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

int option_confidence(const struct analyze_command *cmd, const struct option_row *row, void *target,
		      const char *arg)
{
	double *confidence = target;
	if (parse_double(arg, confidence) || !(*confidence > 0 && *confidence < 1))
		return usage_error(cmd, "--%s wants a number between 0 and 1 (0.99 is 99%%), not '%s'", row->name, arg);
	return 0;
}

int option_add_string(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	(void)cmd, (void)row;
	struct option_strings *list = target;
	ALLOC_GROW(list->items, list->n + 1, list->cap);
	list->items[list->n++] = arg;
	return 0;
}

/* --comm, --module: a name, never empty. */
static int add_name(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	if (!*arg)
		return usage_error(cmd, "--%s wants a name", row->name);
	return option_add_string(cmd, row, target, arg);
}

/* --tid, --pid: an id in [row->min, row->max]. */
static int add_id(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	struct option_ids *list = target;
	uint64_t v;
	if (parse_u64(arg, &v) || (double)v < row->min || (double)v > row->max)
		return usage_error(cmd, "--%s wants %s, not '%s'", row->name, row->wants, arg);
	ALLOC_GROW(list->items, list->n + 1, list->cap);
	list->items[list->n++] = (uint32_t)v;
	return 0;
}

/* --focus, --ignore: compiled now, so that a bad one is a usage error. */
static int add_regex(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	struct option_regexes *list = target;
	ALLOC_GROW(list->items, list->n + 1, list->cap);
	int err = regcomp(&list->items[list->n], arg, REG_EXTENDED | REG_NOSUB);
	if (err) {
		char why[128];
		regerror(err, &list->items[list->n], why, sizeof(why));
		return usage_error(cmd, "--%s '%s': %s", row->name, arg, why);
	}
	list->n++;
	return 0;
}

static int set_timeout(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	double *seconds = target;
	if (parse_double(arg, seconds) || *seconds <= 0 || *seconds > 86400)
		return usage_error(cmd, "--%s wants seconds, not '%s'", row->name, arg);
	return 0;
}

/* --leaks, --peak, --temporary: one view of an allocation trace. */
static int set_view(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	(void)arg;
	enum filter_view *view = target;
	if (*view)
		return usage_error(cmd, "%s", "--leaks, --peak and --temporary are views: choose one");
	*view = (enum filter_view)row->set;
	return 0;
}

static int set_width(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	int *width = target;
	uint64_t v;
	if (parse_u64(arg, &v) || v > 100000)
		return usage_error(cmd, "--%s wants a number of columns, not '%s'", row->name, arg);
	*width = (int)v;
	return 0;
}

static int set_quiet(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	(void)cmd, (void)row, (void)target, (void)arg;
	diag_stderr_set_quiet(1); /* the one stderr sink every command's messages go to */
	return 0;
}

/* "a, b or c": the names of choices, each value once (a later name of a value is an alias). */
static const char *choice_names(const struct option_choice *choices, char *buf, size_t len)
{
	size_t n = 0, used = 0;
	while (choices[n].name)
		n++;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int alias = 0, later = 0;
		for (size_t j = 0; j < i; j++)
			alias |= choices[j].value == choices[i].value;
		for (size_t j = i + 1; j < n; j++)
			later |= choices[j].value != choices[i].value;
		if (alias)
			continue;
		const char *sep = !used ? "" : later ? ", " : " or ";
		int w = snprintf(buf + used, len - used, "%s%s", sep, choices[i].name);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
	return buf;
}

/* Set row's target from arg (NULL when the row takes none): 0, or 2 after a usage error. */
static int set_row(const struct analyze_command *cmd, const struct option_row *row, void *target, const char *arg)
{
	uint64_t u;
	double d;
	char names[256];
	switch (row->type) {
	case OPTION_FLAG:
		*(int *)target = row->set;
		return 0;
	case OPTION_STRING:
		*(const char **)target = arg;
		return 0;
	case OPTION_CHOICE:
		for (const struct option_choice *c = row->choices; c->name; c++)
			if (!strcmp(arg, c->name)) {
				*(int *)target = c->value;
				return 0;
			}
		return usage_error(cmd, "--%s wants %s, not '%s'", row->name,
				   choice_names(row->choices, names, sizeof(names)), arg);
	case OPTION_U32:
	case OPTION_U64: {
		double max = row->max ? row->max : row->type == OPTION_U32 ? (double)UINT32_MAX : 0;
		if (parse_u64(arg, &u) || (double)u < row->min || (max && (double)u > max))
			return usage_error(cmd, "--%s wants %s, not '%s'", row->name, row->wants, arg);
		if (row->type == OPTION_U32)
			*(uint32_t *)target = (uint32_t)u;
		else
			*(uint64_t *)target = u;
		return 0;
	}
	case OPTION_DOUBLE:
		if (parse_double(arg, &d) || d < row->min || (row->max && d > row->max))
			return usage_error(cmd, "--%s wants %s, not '%s'", row->name, row->wants, arg);
		*(double *)target = d;
		return 0;
	case OPTION_CALLBACK:
		return row->parse(cmd, row, target, arg) ? 2 : 0;
	case OPTION_END:
	case OPTION_HELP:
		break;
	}
	return usage_error(cmd, "internal: option --%s has no reader", row->name);
}

/* A row's "  -f, --format FORMAT" column, then its help's lines, the later ones indented to its text. */
static void print_row(FILE *out, const struct option_row *row)
{
	enum { TEXT_COLUMN = 26 };
	char left[128];
	int n = row->short_name ? snprintf(left, sizeof(left), "  -%c, --%s", row->short_name, row->name)
				: snprintf(left, sizeof(left), "      --%s", row->name);
	if (row->argname && n >= 0 && (size_t)n < sizeof(left))
		n += snprintf(left + n, sizeof(left) - (size_t)n, " %s", row->argname);
	/* Text at its column; a longer option column gets two spaces after it. */
	fprintf(out, "%-*s", n <= TEXT_COLUMN - 2 ? TEXT_COLUMN : n + 2, left);
	for (const char *line = row->help;;) {
		const char *end = strchrnul(line, '\n');
		fprintf(out, "%.*s\n", (int)(end - line), line);
		if (!*end)
			break;
		line = end + 1;
		fprintf(out, "%*s", TEXT_COLUMN, "");
	}
}

static int takes(const struct analyze_command *cmd, const struct shared_row *s)
{
	return !s->group || (cmd->groups & s->group);
}

void analyze_options_help(FILE *out, const struct analyze_command *cmd)
{
	fprintf(out, "usage: %s\n\n%s\n\n", cmd->synopsis, cmd->summary);
	for (const struct option_row *row = cmd->options; row && row->type != OPTION_END; row++)
		print_row(out, row);
	for (size_t i = 0; i < NSHARED; i++)
		if (takes(cmd, &shared_rows[i]))
			print_row(out, &shared_rows[i].row);
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
	size_t last = max ? strlen(name[max - 1]) : 0;
	int repeats = last > 3 && !strcmp(name[max - 1] + last - 3, "...");
	if (n < min)
		return usage_error(cmd, "missing %.*s operand", (int)strcspn(name[n], "."), name[n]);
	if (n > max && !repeats)
		return usage_error(cmd, "unexpected operand '%s'", argv[max]);
	o->operands = (const char *const *)argv;
	o->noperands = n;
	return -1;
}

/* The rows a command takes, each with its target: the shared ones in o, its own in ctx. */
struct parse_row {
	const struct option_row *row;
	void *target;
};
struct parse_rows {
	struct parse_row *rows;
	size_t n, cap;
};

static void add_row(struct parse_rows *pr, const struct option_row *row, void *base)
{
	ALLOC_GROW(pr->rows, pr->n + 1, pr->cap);
	pr->rows[pr->n++] = (struct parse_row){row, (char *)base + row->offset};
}

/* getopt's value for row i: its letter, else past every letter. */
static int row_value(const struct parse_rows *pr, size_t i)
{
	return pr->rows[i].row->short_name ? pr->rows[i].row->short_name : 256 + (int)i;
}

/* The row getopt's value names, NULL for none. */
static const struct parse_row *row_of(const struct parse_rows *pr, int value)
{
	for (size_t i = 0; i < pr->n; i++)
		if (row_value(pr, i) == value)
			return &pr->rows[i];
	return NULL;
}

/* Point load and filter at the lists' values. */
static void point_at_lists(struct analyze_options *o)
{
	o->load.debug_dirs = o->debug_dirs.items;
	o->load.ndebug_dirs = (int)o->debug_dirs.n;
	o->load.search_dirs = o->search_dirs.items;
	o->load.nsearch_dirs = (int)o->search_dirs.n;
	o->filter.tids = o->tids.items;
	o->filter.ntids = (int)o->tids.n;
	o->filter.pids = o->pids.items;
	o->filter.npids = (int)o->pids.n;
	o->filter.comms = o->comms.items;
	o->filter.ncomms = (int)o->comms.n;
	o->filter.modules = o->modules.items;
	o->filter.nmodules = (int)o->modules.n;
	o->filter.focus = o->focus.items;
	o->filter.nfocus = (int)o->focus.n;
	o->filter.ignore = o->ignore.items;
	o->filter.nignore = (int)o->ignore.n;
}

/* After the rows: the lists, --color, --width and the pager resolved. */
static void resolve(const struct analyze_command *cmd, struct analyze_options *o)
{
	point_at_lists(o);
	o->load.diag = diag_stderr_sink();
	o->color = terminal_use_color(color_choices[o->color_when].name, STDOUT_FILENO);
	if (o->width < 0)
		o->width = terminal_width(STDOUT_FILENO);
	o->pager = (cmd->groups & OPTGROUP_PAGER) && pager_wanted(o->no_pager);
}

int analyze_options_parse(int argc, char **argv, const struct analyze_command *cmd, void *ctx,
			  struct analyze_options *o)
{
	memset(o, 0, sizeof(*o));
	load_options_init(&o->load);
	o->combine = 1;
	o->width = -1; /* not given */

	struct parse_rows pr = {0};
	for (size_t i = 0; i < NSHARED; i++)
		if (takes(cmd, &shared_rows[i]))
			add_row(&pr, &shared_rows[i].row, o);
	for (const struct option_row *row = cmd->options; row && row->type != OPTION_END; row++)
		add_row(&pr, row, ctx);
	struct option *longopts = calloc_or_abort(pr.n + 1, sizeof(*longopts));
	/* ':' first: getopt reports a missing argument as ':' and stays quiet. */
	char *shortopts = calloc_or_abort(2 * pr.n + 2, 1);
	size_t nshort = 0;
	shortopts[nshort++] = ':';
	for (size_t i = 0; i < pr.n; i++) {
		const struct option_row *row = pr.rows[i].row;
		longopts[i] = (struct option){row->name, row->argname ? required_argument : no_argument, NULL,
					      row_value(&pr, i)};
		if (row->short_name) {
			shortopts[nshort++] = row->short_name;
			if (row->argname)
				shortopts[nshort++] = ':';
		}
	}

	int rc = -1;
	opterr = 0;
	optind = 1;
	for (;;) {
		int opt = getopt_long(argc, argv, shortopts, longopts, NULL);
		if (opt == -1)
			break;
		const char *bad = argv[optind - 1];
		const struct parse_row *given = row_of(&pr, opt);
		if (opt == '?') {
			if (optopt && optopt < 256)
				rc = usage_error(cmd, "unknown option '-%c'", optopt);
			else
				rc = usage_error(cmd, "unknown option '%s'", bad);
		} else if (opt == ':') {
			rc = usage_error(cmd, "option '%s' needs a value", bad);
		} else if (!given) {
			rc = usage_error(cmd, "internal: unhandled option %d", opt);
		} else if (given->row->type == OPTION_HELP) {
			analyze_options_help(stdout, cmd);
			rc = 0;
		} else {
			rc = set_row(cmd, given->row, given->target, optarg) ? 2 : -1;
		}
		if (rc >= 0)
			break;
	}
	if (rc < 0)
		rc = read_operands(cmd, o, argc - optind, argv + optind);
	free(pr.rows);
	free(longopts);
	free(shortopts);
	if (rc >= 0) {
		analyze_options_free(o);
		return rc;
	}
	resolve(cmd, o);
	return -1;
}

void analyze_options_free(struct analyze_options *o)
{
	for (size_t i = 0; i < o->focus.n; i++)
		regfree(&o->focus.items[i]);
	for (size_t i = 0; i < o->ignore.n; i++)
		regfree(&o->ignore.items[i]);
	free(o->focus.items);
	free(o->ignore.items);
	free(o->debug_dirs.items);
	free(o->search_dirs.items);
	free(o->comms.items);
	free(o->modules.items);
	free(o->tids.items);
	free(o->pids.items);
	o->focus = o->ignore = (struct option_regexes){0};
	o->debug_dirs = o->search_dirs = o->comms = o->modules = (struct option_strings){0};
	o->tids = o->pids = (struct option_ids){0};
	point_at_lists(o);
}

void options_start_pager(const struct analyze_options *o)
{
	if (o->pager)
		pager_start();
}

int options_resolve_value(const struct analyze_command *cmd, const struct analyze_options *o,
			  const struct profile *p, const char *trace, uint32_t *value)
{
	if (o->filter.view && profile_find_value_type(p, filter_view_type(o->filter.view)) == PROFILE_NO_VALUE)
		return usage_error(cmd, "%s: %s has no allocations (record them with collect --allocs)",
				   filter_view_option(o->filter.view), trace);
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
	return usage_error(cmd, "--value %s: %s has the value types %s", o->value_name, trace,
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
