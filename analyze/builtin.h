/*
 * builtin.h - the analyze subcommands, one file each (builtin-NAME.c), run
 * by the dispatcher in analyze.c with argv[0] = "NAME". Each returns the
 * exit status: 0 ok, 1 runtime error, 2 usage error.
 */
#ifndef IPSCOPE_BUILTIN_H
#define IPSCOPE_BUILTIN_H

int cmd_info(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_flat(int argc, char **argv);
int cmd_export(int argc, char **argv); /* builtin-export.c */
int cmd_archive(int argc, char **argv); /* builtin-archive.c */

#endif
