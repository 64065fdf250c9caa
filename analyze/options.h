/*
 * options.h - analyze's command lines: every option is one row (struct
 * option_row: its names, its value's name, its help text and what it sets),
 * as git's OPT_* are. The parser, --help (and through it the man pages,
 * doc/gen-man.sh) and the usage errors all read the rows, so an option is
 * written once.
 *
 * The options several commands share are rows of options.c, in groups a
 * command takes (OPTGROUP_*) and set struct analyze_options. A command's
 * own rows set fields of a context struct of its own, named by offset:
 *
 *	struct tree_args { struct tree_options to; };
 *	static const struct option_row tree_rows[] = {
 *		OPT_U64(0, "maxdepth", "N", struct tree_args, to.maxdepth, 1, 0,
 *			"a depth >= 1", "print at most N levels"),
 *		OPT_END(),
 *	};
 *	static const struct analyze_command tree_command = {
 *		.name = "tree", ..., .groups = OPTGROUP_LOAD | ..., .options = tree_rows,
 *	};
 *
 *	struct tree_args a = {0};
 *	struct analyze_options o;
 *	int rc = analyze_options_parse(argc, argv, &tree_command, &a, &o);
 *	if (rc >= 0)
 *		return rc;               // --help (0) or usage error (2)
 *
 * Report commands let report_command in report.h parse, load, resolve
 * --value, print and check the output.
 */
#ifndef IPSCOPE_OPTIONS_H
#define IPSCOPE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "filter.h"
#include "load.h"
#include "profile.h"

/* Groups of shared options a command takes (bits of analyze_command.groups);
 * their rows are options.c's. Every command takes -q, --value and --help. */
#define OPTGROUP_LOAD 0x01u     /* how the trace is read and named: debug info, names, debuginfod, --scale */
#define OPTGROUP_FILTER 0x02u   /* which frames and samples: -C, --tid, --no-inline, --leaks, --peak, --temporary */
#define OPTGROUP_MINCOUNT 0x04u /* --mincount */
#define OPTGROUP_LINES 0x08u    /* --lines */
#define OPTGROUP_COMBINE 0x10u  /* --combine, --no-combine */
#define OPTGROUP_WIDTH 0x20u    /* --width */
#define OPTGROUP_LOOK 0x40u     /* --full-paths, --color */
#define OPTGROUP_DISPLAY (OPTGROUP_WIDTH | OPTGROUP_LOOK) /* what the text reports take */
#define OPTGROUP_SELECT 0x80u   /* which samples: --pid, --state */
#define OPTGROUP_PROGRAMS 0x100u /* which samples of a trace of many programs: --comm, --module, --focus, --ignore */
#define OPTGROUP_PAGER 0x400u   /* --no-pager: a long text report, through a pager on a terminal (pager.h) */

#define ANALYZE_MAX_OPERANDS 4 /* names in analyze_command.operands */

/* Growable storage behind a repeatable option's values. */
struct option_strings {
	const char **items;
	size_t n, cap;
};
struct option_ids {
	uint32_t *items;
	size_t n, cap;
};
struct option_regexes {
	regex_t *items;
	size_t n, cap;
};

struct analyze_options {
	struct load_options load;     /* OPTGROUP_LOAD; load.diag: the command line's sink (stderr) */
	struct filter_options filter; /* OPTGROUP_FILTER, OPTGROUP_SELECT, OPTGROUP_PROGRAMS */
	uint64_t mincount;            /* 0: no limit */
	int lines;                    /* --lines: one row per source line */
	int combine;                  /* 1 (default): merge addresses of one source line */
	int width;                    /* columns; 0: unlimited (no truncation) */
	int full_paths;               /* --full-paths: no path shortening */
	int color;                    /* resolved --color: 1 to emit ANSI colors */
	int pager;                    /* resolved OPTGROUP_PAGER: 1 to page (options_start_pager) */
	const char *value_name;       /* --value TYPE, NULL: the profile's default */
	const char *const *operands;  /* every operand, in order (argv's) */
	int noperands;
	/* As given, before the parse resolves them into color and pager. */
	int color_when;               /* --color: index of auto, always, never */
	int no_pager;                 /* --no-pager */
	/* What load and filter point into: --debug-dir, --search-dir, --tid, --pid, --comm, --module,
	 * and --focus and --ignore compiled at parse time (a bad regex is a usage error before the
	 * trace is read). */
	struct option_strings debug_dirs, search_dirs, comms, modules;
	struct option_ids tids, pids;
	struct option_regexes focus, ignore;
};

struct analyze_command;
struct option_row;

/* What an option row does with its value. */
enum option_type {
	OPTION_END,      /* ends a table of rows */
	OPTION_FLAG,     /* takes no value: its int target becomes row.set */
	OPTION_STRING,   /* its const char * target becomes the value */
	OPTION_CHOICE,   /* the value is one of row.choices: its int target becomes that choice's value */
	OPTION_U32,      /* a count in [min, max] (max 0: no bound) into its uint32_t target */
	OPTION_U64,      /* the same into its uint64_t target */
	OPTION_DOUBLE,   /* a number >= min (<= max unless max is 0) into its double target */
	OPTION_CALLBACK, /* row.parse reads the value */
	OPTION_HELP,     /* --help: print the help and exit 0 */
};

/* One accepted value of an OPTION_CHOICE row; a later name of the same value is an alias, not listed. */
struct option_choice {
	const char *name;
	int value;
};

/*
 * An OPTION_CALLBACK row's reader of arg (NULL for a row that takes no
 * value) into target: 0, or nonzero after usage_error.
 */
typedef int (*option_parse_fn)(const struct analyze_command *cmd, const struct option_row *row, void *target,
			       const char *arg);

struct option_row {
	char short_name;      /* 'f' for -f, or 0 */
	const char *name;     /* the long name, without "--" */
	const char *argname;  /* its value's name in --help ("FORMAT"); NULL: it takes none */
	const char *help;     /* --help's text beside it, its lines split by '\n' */
	enum option_type type;
	size_t offset;        /* of its target in the context (shared rows: in struct analyze_options) */
	int set;              /* OPTION_FLAG: the value set */
	const struct option_choice *choices; /* OPTION_CHOICE: ended by a NULL name */
	double min, max;      /* OPTION_U32, OPTION_U64, OPTION_DOUBLE: the values accepted */
	const char *wants;    /* what a bad value is told it should be: "--maxdepth wants a depth >= 1" */
	option_parse_fn parse; /* OPTION_CALLBACK */
};

/* The offset of member m of struct type T, checked at compile time to be size bytes. */
#define OPTION_FIELD(T, m, size) (offsetof(T, m) + 0 * sizeof(char[sizeof(((T *)0)->m) == (size) ? 1 : -1]))

/*
 * Rows as the commands write them, git's way: s the letter (or 0), l the long
 * name, a the value's name, T and m the target's struct type and member, v
 * the value a flag sets, c the choices, lo and hi the values accepted, w what
 * a bad value is told it should be, h the help text.
 */
#define OPT_FLAG(s, l, T, m, v, h) \
	{.short_name = (s), .name = (l), .help = (h), .type = OPTION_FLAG, .offset = OPTION_FIELD(T, m, sizeof(int)), .set = (v)}
#define OPT_STRING(s, l, a, T, m, h)                                                                      \
	{.short_name = (s), .name = (l), .argname = (a), .help = (h), .type = OPTION_STRING,                \
	 .offset = OPTION_FIELD(T, m, sizeof(const char *))}
#define OPT_CHOICE(s, l, a, T, m, c, h)                                                                   \
	{.short_name = (s), .name = (l), .argname = (a), .help = (h), .type = OPTION_CHOICE,                \
	 .offset = OPTION_FIELD(T, m, sizeof(int)), .choices = (c)}
#define OPT_U32(s, l, a, T, m, lo, hi, w, h)                                                              \
	{.short_name = (s), .name = (l), .argname = (a), .help = (h), .type = OPTION_U32,                   \
	 .offset = OPTION_FIELD(T, m, sizeof(uint32_t)), .min = (lo), .max = (hi), .wants = (w)}
#define OPT_U64(s, l, a, T, m, lo, hi, w, h)                                                              \
	{.short_name = (s), .name = (l), .argname = (a), .help = (h), .type = OPTION_U64,                   \
	 .offset = OPTION_FIELD(T, m, sizeof(uint64_t)), .min = (lo), .max = (hi), .wants = (w)}
#define OPT_DOUBLE(s, l, a, T, m, lo, w, h)                                                               \
	{.short_name = (s), .name = (l), .argname = (a), .help = (h), .type = OPTION_DOUBLE,                \
	 .offset = OPTION_FIELD(T, m, sizeof(double)), .min = (lo), .wants = (w)}
#define OPT_CALLBACK(s, l, a, T, m, fn, h)                                                                \
	{.short_name = (s), .name = (l), .argname = (a), .help = (h), .type = OPTION_CALLBACK,              \
	 .offset = offsetof(T, m), .parse = (fn)}
#define OPT_END() {.type = OPTION_END}

struct analyze_command {
	const char *name;     /* "tree": messages say "analyze tree: ..." */
	const char *synopsis; /* "analyze tree [options] TRACE" */
	const char *summary;  /* one paragraph or more, shown by --help */
	unsigned groups;      /* OPTGROUP_* */
	/*
	 * The operands' names for messages, space-separated ("BASE NEW",
	 * "KIND TRACE NEW"), or NULL for the one TRACE; the last
	 * optional_operands of them may be left out. A last name ending in
	 * "..." ("TRACE...") is one or more operands.
	 */
	const char *operands;
	int optional_operands;
	const struct option_row *options; /* its own rows (targets in the context), ended by OPT_END(); NULL: none */
};

/*
 * Parse argv (argv[0] is the command name) into o and, for the command's
 * own rows, into ctx: -1 when the command should run (o->operands set),
 * otherwise the exit status to return right away: 0 after --help, 2 after
 * a one-line usage error on stderr.
 */
int analyze_options_parse(int argc, char **argv, const struct analyze_command *cmd, void *ctx,
			  struct analyze_options *o);
/* Free what the parse allocated in o. */
void analyze_options_free(struct analyze_options *o);

/* Before a report's first line: its output goes through a pager when o->pager says so. */
void options_start_pager(const struct analyze_options *o);

/* Print the command's --help text: synopsis, summary, its own rows, then the shared ones it takes. */
void analyze_options_help(FILE *out, const struct analyze_command *cmd);

/* Strict number parsing for option values: 0 on success, -1 when not a number. */
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double *out);
/* OPTION_CALLBACK reader of a repeatable string option: appends to a struct option_strings. */
int option_add_string(const struct analyze_command *cmd, const struct option_row *row, void *target,
		      const char *arg);
/* OPTION_CALLBACK reader of diff's noise test --confidence (diff and plot diff): a double in (0, 1). */
int option_confidence(const struct analyze_command *cmd, const struct option_row *row, void *target,
		      const char *arg);

/* One-line usage error "analyze CMD: message (see 'analyze CMD --help')" on stderr; returns 2. */
int usage_error(const struct analyze_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* One-line runtime error "analyze CMD: message" on stderr; returns 1. */
int runtime_error(const struct analyze_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The value type --value names in trace, loaded as p (its default when
 * --value was not given): 0 with *value set, or 2 after a usage error that
 * lists the types p has.
 */
int options_resolve_value(const struct analyze_command *cmd, const struct analyze_options *o,
			  const struct profile *p, const char *trace, uint32_t *value);

/*
 * End of a command's output: flush and close standard output. 0, or 1 after
 * "analyze CMD: writing standard output: REASON" on stderr (a full disk, a
 * closed pipe or stdout): no command exits 0 with its output lost.
 */
int finish_output(const struct analyze_command *cmd);

#endif
