/*
 * debug_hint.h - which modules of a profile have no debug info, how much of
 * the profile they cover, and how to get their debug info: for analyze info
 * and the footer of tree and flat.
 */
#ifndef IPSCOPE_DEBUG_HINT_H
#define IPSCOPE_DEBUG_HINT_H

#include <stdint.h>
#include <stdio.h>

#include "profile.h"

/* Share of p's value of type value (0..1) in the samples whose stacks have
 * a frame in module m, for every module (caller frees). */
double *debug_hint_module_shares(const struct profile *p, uint32_t value);

/*
 * The modules without debug info that samples land in, most covered first,
 * with their shares, and one line on how to get it; nothing when every
 * module has its debug info. System modules (libc...) only with
 * show_system: their frames are hidden otherwise. indent prefixes each line.
 */
void debug_hint_print(FILE *out, const struct profile *p, uint32_t value, int show_system,
		      const char *indent);

#endif
