/*
 * report.h - what tree and flat (and exporters, for report_profile) share:
 * one run of a report command, getting the filtered profile the options ask
 * for, and printing the header, the footer and a frame's "file:line;
 * function" the same way.
 */
#ifndef IPSCOPE_REPORT_H
#define IPSCOPE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "calltree.h"
#include "options.h"
#include "profile.h"
#include "terminal.h"

/*
 * Load o->trace with o->load and apply o->filter. NULL after an error was
 * printed (exit 1).
 */
struct profile *report_profile(const struct analyze_options *o);

/* Prints a text report of p (loaded and filtered) with the command's options o. */
typedef void (*report_print_fn)(FILE *out, const struct profile *p, const struct analyze_options *o);

/* Whole run of a report command: parse argv for cmd, load, filter, print to stdout; exit status. */
int report_command(int argc, char **argv, const struct analyze_command *cmd, report_print_fn print);

/* Command, samples, CPU time, threads and lost samples, then a blank line. */
void report_header(FILE *out, const struct profile *p, const struct palette *pal);

/* "Total samples: ..." line for selected samples of total weight. */
void report_footer(FILE *out, const struct profile *p, uint64_t samples, uint64_t weight,
		   const struct analyze_options *o);

/* A frame's source file as shown ("?" when unknown) and line ("?" when 0). */
const char *report_file(const struct profile *p, uint32_t file, int full_paths);
const char *report_line(uint32_t line, char *buf, size_t len);

/* Percentage of part in whole, 0 when whole is 0. */
double report_percent(uint64_t part, uint64_t whole);

#endif
