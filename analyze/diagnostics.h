/*
 * diagnostics.h - where loading and symbolizing say what went wrong or looks
 * wrong: a missing module or debug info, a build-id mismatch, a cut-off
 * trace, stacks never defined, counters that cannot be true. Libraries
 * (the loader, the resolver) never print; they hand each message to a sink,
 * and the program on top decides: the command line prints them on stderr
 * (diag_stderr_sink), a test or an interactive viewer collects them
 * (diag_list).
 */
#ifndef IPSCOPE_DIAGNOSTICS_H
#define IPSCOPE_DIAGNOSTICS_H

#include <stddef.h>

enum diag_level {
	DIAG_ERROR,   /* the trace cannot be read: the command fails */
	DIAG_WARNING, /* read, but something is missing or was corrected */
};

struct diag_sink {
	/* One message, one line without a newline or a prefix. */
	void (*message)(void *ctx, enum diag_level level, const char *text);
	/* Optional: a progress note for long work ("" when done), or NULL. */
	void (*progress)(void *ctx, const char *text);
	void *ctx;
};

/* Hand a printf-formatted message to sink (nothing when sink is NULL). */
void diag(const struct diag_sink *sink, enum diag_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A progress note (nothing without a progress callback). */
void diag_progress(const struct diag_sink *sink, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The command line's sink: "analyze: warning: TEXT" / "analyze: TEXT" lines
 * on stderr, control characters escaped; progress redrawn on stderr when it
 * is a terminal and the work takes over a second.
 */
const struct diag_sink *diag_stderr_sink(void);
/*
 * The stderr sink says a warning once per run however many times it comes
 * (a module without debug info in each of a build's 81 processes); with
 * quiet set (-q, --quiet) it says none. Errors are always said.
 */
void diag_stderr_set_quiet(int quiet);

/* Messages collected in memory, in order. */
struct diag_list {
	char **texts;
	enum diag_level *levels;
	size_t n, cap;
};
/* A sink appending to list (which starts zeroed). */
struct diag_sink diag_list_sink(struct diag_list *list);
void diag_list_free(struct diag_list *list);

#endif
