/*
 * builtin-archive.c - "analyze archive TRACE -o FILE.tar": the files the
 * trace's modules are read from, packed by build-id as perf archive does
 * (archive.h), to analyse the trace on another machine with --search-dir.
 * The tar goes through output.h: a file appears only once complete.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "builtin.h"
#include "file.h"
#include "options.h"
#include "output.h"

struct archive_args {
	const char *output;
};

static const struct option_row archive_rows[] = {
	OPT_STRING('o', "output", "FILE", struct archive_args, output,
		   "the tar file to write ('-': standard output); required"),
	OPT_END(),
};

static const struct analyze_command archive_command = {
	.name = "archive",
	.synopsis = "analyze archive -o FILE.tar [options] TRACE",
	.summary = "Pack every module and debug file the trace needs, by build-id, to analyse "
		   "it elsewhere with --search-dir.",
	.groups = OPTGROUP_LOAD,
	.options = archive_rows,
};

/* A file left out: "analyze archive: warning: ..." (every one said, whatever -q). */
static void archive_warning(void *ctx, enum diag_level level, const char *text)
{
	(void)ctx, (void)level;
	fprintf(stderr, "analyze archive: warning: %s\n", text);
}

int cmd_archive(int argc, char **argv)
{
	struct archive_args a = {0};
	const struct analyze_command *cmd = &archive_command;
	struct analyze_options o;
	int rc = analyze_options_parse(argc, argv, cmd, &a, &o);
	if (rc >= 0)
		return rc;
	struct profile *p = NULL;
	struct output out;
	if (!a.output)
		rc = usage_error(cmd, "-o FILE is required");
	else if (!strcmp(a.output, "-") && isatty(STDOUT_FILENO))
		rc = usage_error(cmd, "a tar archive is binary; use -o FILE or a pipe");
	if (rc >= 0)
		goto out;
	struct load_options lo = o.load;
	lo.symbolize = 0;
	lo.open_modules = 0;
	rc = 1;
	if (!(p = load_trace(o.operands[0], &lo, NULL)))
		goto out;
	if (output_open(&out, a.output) < 0) {
		runtime_error(cmd, "%s: %s", a.output, output_error_text(errno));
		goto out;
	}
	const struct diag_sink warnings = {archive_warning, NULL, NULL};
	unsigned missing = 0;
	int ok = archive_write(out.file, p, &o.load, &warnings, &missing) == 0;
	int saved = errno;
	if (output_close(&out, ok) < 0 && ok) {
		ok = 0;
		saved = errno;
	}
	if (!ok)
		runtime_error(cmd, "writing %s: %s", output_name(&out), strerror(saved));
	else if (missing)
		runtime_error(cmd, "%u file%s could not be archived (see above)", missing, missing == 1 ? "" : "s");
	rc = ok ? 0 : 1;
out:
	profile_free(p);
	analyze_options_free(&o);
	return rc;
}
