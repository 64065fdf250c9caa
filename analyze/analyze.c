/*
 * analyze.c - the analyze dispatcher: "analyze <command> [options] TRACE".
 * It only finds the command in a table and runs it; every command lives in
 * its own builtin-NAME.c and parses its own options (see options.h).
 */
#include <stdio.h>
#include <string.h>

#include "builtin.h"
#include "ipscope_revision.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"info", cmd_info, "what is in a trace: run, totals, threads, modules, file"},
	{"tree", cmd_tree, "call tree with counts, as Julia's Profile.print"},
	{"flat", cmd_flat, "one row per function (or line): inclusive and self counts"},
	{"source", cmd_source, "a source file with the cost of each line beside the code"},
	{"view", cmd_view, "full-screen viewer: call tree, flat, source and flame graph"},
	{"export", cmd_export, "write folded stacks, speedscope JSON or pprof"},
	{"archive", cmd_archive, "pack the modules and debug files a trace needs, by build-id"},
	{"diff", cmd_diff, "compare two traces: changes by function, beyond noise or not"},
	{"plot", cmd_plot, "draw a trace with gnuplot: timeline, top, diff, heap, rate"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fputs("usage: analyze <command> [options] TRACE...\n"
	      "       analyze <command> --help\n"
	      "       analyze --version\n\n"
	      "Reports and exports of ipscope traces written by collect, offline.\n\n"
	      "commands:\n",
	      out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fputs("\nExit status: 0 ok, 1 runtime error (unreadable or corrupt trace), 2 usage error.\n",
	      out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "--version")) {
		printf("analyze (ipscope) %s, revision %s\n", IPSCOPE_VERSION, IPSCOPE_REVISION);
		return 0;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (name[0] == '-')
		fprintf(stderr, "analyze: unknown option '%s' (see 'analyze --help')\n", name);
	else
		fprintf(stderr, "analyze: unknown command '%s' (see 'analyze --help')\n", name);
	return 2;
}
