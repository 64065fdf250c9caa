/*
 * pager.h - long reports through a pager on a terminal, as git and perf do:
 * only when standard output is a terminal, never when it is piped or with
 * --no-pager; IPSCOPE_PAGER, else PAGER, else less (pager.c says how).
 */
#ifndef IPSCOPE_PAGER_H
#define IPSCOPE_PAGER_H

/* 1 when a report should go through a pager: stdout is a terminal, no --no-pager, a pager is set. */
int pager_wanted(int no_pager);

/*
 * From now on standard output (and standard error, when it is the
 * terminal) go to the pager, which exit waits for. Nothing when stdout is
 * not a terminal, no pager is set, or it cannot be started.
 */
void pager_start(void);

#endif
