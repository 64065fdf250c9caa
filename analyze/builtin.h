/*
 * builtin.h - the analyze subcommands, one file each (builtin-NAME.c), run
 * by the dispatcher in analyze.c with argv[0] = "NAME". Each returns the
 * exit status: 0 ok, 1 runtime error, 2 usage error.
 *
 * Adding a report
 *   A builtin is thin, as git's are: it declares its own options, one row
 *   each (struct option_row, options.h), and describes itself (struct
 *   analyze_command: the shared option groups it takes); report_command()
 *   parses them, loads and filters the trace, resolves --value and calls
 *   its print function with a struct report (report.h), and checks the
 *   output was written.
 *   The rendering itself goes in a render_NAME.c taking the struct report
 *   and an options struct of its own (no globals), declared in report.h so
 *   the unit tests can run it on hand-built profiles. Counts are of
 *   r->value; totals in headers go through report_totals (formatted by
 *   unit). Add the command to analyze.c's table and a test to
 *   tests/reports.cmake.
 *
 * Adding an exporter
 *   A function export_NAME(profile, export_options, FILE) in
 *   formats/profile/export_NAME.c, declared in export.h: it reads only the
 *   profile (use export_sum_stacks for per-stack values, o->value for the
 *   type, profile_display_value for what a viewer shows), returns 0 or -1
 *   with errno, and writes the same bytes for the same input. Add it to
 *   builtin-export.c's formats table.
 *
 * Adding a record type
 *   The byte layout goes in formats/trace/TRACE_FORMAT.md and the codec
 *   (trace.h, trace_writer.c, trace_reader.c, their tests and the fuzzer's
 *   dictionary). analyze reads it through a consumer in the loader's
 *   dispatch table (load_internal.h, load.c): a start, a record callback for
 *   its types, a finish once the run's duration is known. Its values become
 *   value types of the profile (profile_add_value_type), so every report and
 *   exporter shows them with --value and no new code path. Figures a
 *   program could have scribbled are checked in the finish and corrected
 *   with one diagnostic per thread (load_samples.c shows how).
 */
#ifndef IPSCOPE_BUILTIN_H
#define IPSCOPE_BUILTIN_H

int cmd_info(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_flat(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_archive(int argc, char **argv); /* builtin-archive.c */
int cmd_source(int argc, char **argv);
int cmd_view(int argc, char **argv);

#endif
