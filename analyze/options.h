/*
 * options.h - the command-line options that several analyze commands share,
 * parsed in one place so that tree, flat and export accept them identically.
 *
 * A command describes itself (name, synopsis, which shared option groups it
 * takes, its own getopt_long options and a handler for them) and calls
 * analyze_options_parse(), which merges the shared options with the
 * command's, handles --help, reports unknown options in one line and reads
 * the TRACE operand.
 *
 * Typical use in a builtin-*.c (report commands let report_command in
 * report.h do all of this):
 *
 *	struct analyze_options o;
 *	int rc = analyze_options_parse(argc, argv, &my_command, &o);
 *	if (rc >= 0)
 *		return rc;               // --help (0) or usage error (2)
 *	o.load.diag = diag_stderr_sink();
 *	struct profile *p = load_trace(o.trace, &o.load, NULL);
 *	...
 *	p = filter_profile_consume(p, &o.filter);
 *	uint32_t value;
 *	rc = options_resolve_value(&my_command, &o, p, &value); // --value
 *	...
 *	rc = finish_output(&my_command);  // 1 when stdout could not be written
 *	analyze_options_free(&o);
 */
#ifndef IPSCOPE_OPTIONS_H
#define IPSCOPE_OPTIONS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "filter.h"
#include "load.h"
#include "profile.h"

/* Groups of shared options a command accepts (bits of analyze_command.groups). */
#define OPTGROUP_LOAD 0x01u     /* --debug-dir DIR, --search-dir DIR (repeatable), --no-demangle, --keep-clones,
				   --full-names, --raw-names, --offline,
				   --debuginfod-timeout S, --scale, --no-alloc-leaves */
#define OPTGROUP_FILTER 0x02u   /* -C/--C, --tid N (repeatable), --no-inline, --leaks, --peak, --temporary */
#define OPTGROUP_MINCOUNT 0x04u /* --mincount N */
#define OPTGROUP_LINES 0x08u    /* --lines */
#define OPTGROUP_COMBINE 0x10u  /* --combine / --no-combine */
#define OPTGROUP_WIDTH 0x20u    /* --width N */
#define OPTGROUP_LOOK 0x40u     /* --full-paths, --color auto|always|never */
#define OPTGROUP_DISPLAY (OPTGROUP_WIDTH | OPTGROUP_LOOK) /* what the text reports take */
#define OPTGROUP_SELECT 0x80u   /* --pid N (repeatable), --state on-cpu|off-cpu: which samples */
#define OPTGROUP_PROGRAMS 0x100u /* --comm NAME, --module NAME, --focus REGEX, --ignore REGEX (each
				    repeatable): which samples of a trace of many programs */
#define OPTGROUP_PAGER 0x400u   /* --no-pager: a long text report, through a pager on a terminal (pager.h) */
/* Every command takes --value TYPE (the value type shown: samples, cpu...). */

/*
 * getopt values of the shared long options. A command's own long options
 * must use values >= OPTION_COMMAND_FIRST (or a short-option letter other
 * than 'C' and 'h').
 */
enum {
	OPTION_DEBUG_DIR = 256,
	OPTION_SEARCH_DIR,
	OPTION_NO_DEMANGLE,
	OPTION_KEEP_CLONES,
	OPTION_FULL_NAMES,
	OPTION_RAW_NAMES,
	OPTION_OFFLINE,
	OPTION_DEBUGINFOD_TIMEOUT,
	OPTION_TID,
	OPTION_NO_INLINE,
	OPTION_MINCOUNT,
	OPTION_LINES,
	OPTION_COMBINE,
	OPTION_NO_COMBINE,
	OPTION_WIDTH,
	OPTION_FULL_PATHS,
	OPTION_COLOR,
	OPTION_VALUE,
	OPTION_PID,
	OPTION_STATE,
	OPTION_SCALE,
	OPTION_NO_ALLOC_LEAVES,
	OPTION_LEAKS,
	OPTION_PEAK,
	OPTION_TEMPORARY,
	OPTION_COMM,
	OPTION_MODULE,
	OPTION_FOCUS,
	OPTION_IGNORE,
	OPTION_NO_PAGER,
	OPTION_COMMAND_FIRST = 512,
};

#define ANALYZE_MAX_OPERANDS 4

struct analyze_options {
	struct load_options load;     /* OPTGROUP_LOAD */
	struct filter_options filter; /* OPTGROUP_FILTER */
	uint64_t mincount;            /* 0: no limit */
	int lines;                    /* --lines: one row per source line */
	int combine;                  /* 1 (default): merge addresses of one source line */
	int width;                    /* columns; 0: unlimited (no truncation) */
	int full_paths;               /* --full-paths: no path shortening */
	int color;                    /* resolved --color: 1 to emit ANSI colors */
	int pager;                    /* resolved OPTGROUP_PAGER: 1 to page (options_start_pager) */
	const char *value_name;       /* --value TYPE, NULL: the profile's default */
	const char *trace;            /* the TRACE operand (the first operand) */
	const char *operands[ANALYZE_MAX_OPERANDS]; /* every operand, in order */
	int noperands;
	/* storage behind load.debug_dirs, load.search_dirs, filter.tids, filter.pids, filter.comms,
	 * filter.modules, filter.focus and filter.ignore (compiled at parse time: a bad regex is a
	 * usage error before the trace is read) */
	const char **debug_dirs;
	const char **search_dirs;
	uint32_t *tids;
	uint32_t *pids;
	const char **comms;
	const char **modules;
	regex_t *focus;
	regex_t *ignore;
};

struct analyze_command {
	const char *name;     /* "tree": messages say "analyze tree: ..." */
	const char *synopsis; /* "analyze tree [options] TRACE" */
	const char *summary;  /* one sentence, shown by --help and by analyze --help */
	const char *help;     /* the command's own option lines for --help, or NULL */
	unsigned groups;      /* OPTGROUP_* */
	/*
	 * The operands' names for messages, space-separated ("BASE NEW",
	 * "KIND TRACE NEW"), or NULL for the one TRACE; the last
	 * optional_operands of them may be left out.
	 */
	const char *operands;
	int optional_operands;
	const struct option *options; /* own long options, {0}-terminated, or NULL */
	const char *short_options;    /* own short options ("" or NULL for none) */
	/*
	 * Called for each own option; 0 when accepted, -1 after printing a
	 * one-line message for a bad value (the parse then exits 2).
	 */
	int (*handle)(int opt, const char *arg, void *ctx);
	void *ctx;
};

/*
 * Parse argv (argv[0] is the command name). Returns -1 when the command
 * should run (o filled in, o->operands and o->trace set), otherwise the exit
 * status to return right away: 0 after --help, 2 after a one-line usage
 * error on stderr.
 */
int analyze_options_parse(int argc, char **argv, const struct analyze_command *cmd,
			  struct analyze_options *o);
void analyze_options_free(struct analyze_options *o);

/* Before a report's first line: its output goes through a pager when o->pager says so. */
void options_start_pager(const struct analyze_options *o);

/* Print the command's --help text (synopsis, summary, its options, shared ones). */
void analyze_options_help(FILE *out, const struct analyze_command *cmd);

/* Strict number parsing for option values: 0 on success, -1 when not a number. */
int parse_u64(const char *s, uint64_t *out);
int parse_double(const char *s, double *out);
/* --confidence of diff's noise test (diff and plot diff): in (0, 1); -1 after a usage error. */
int parse_confidence(const struct analyze_command *cmd, const char *arg, double *out);

/* One-line usage error "analyze CMD: message" on stderr; returns 2. */
int usage_error(const struct analyze_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The value type --value names in the loaded profile p (its default when
 * --value was not given): 0 with *value set, or 2 after a usage error that
 * lists the types p has.
 */
int options_resolve_value(const struct analyze_command *cmd, const struct analyze_options *o,
			  const struct profile *p, uint32_t *value);

/*
 * End of a command's output: flush and close standard output. 0, or 1 after
 * "analyze CMD: writing standard output: REASON" on stderr (a full disk, a
 * closed pipe or stdout): no command exits 0 with its output lost.
 */
int finish_output(const struct analyze_command *cmd);

#endif
