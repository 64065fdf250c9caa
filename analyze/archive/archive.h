/*
 * archive.h - analyze archive's tar (archive.c): every file a trace's
 * modules are read from, by build-id, with a manifest, so that the trace
 * can be analysed on another machine: unpack it and pass the directory to
 * --search-dir.
 */
#ifndef IPSCOPE_ARCHIVE_H
#define IPSCOPE_ARCHIVE_H

#include <stdio.h>

#include "diagnostics.h"
#include "load.h"
#include "profile.h"

/*
 * Write to out the tar of what p's modules are read from, found as lo says,
 * and its manifest: 0, or -1 with errno after a write error. A file that
 * cannot be packed is a warning through warnings and counted in *missing.
 */
int archive_write(FILE *out, const struct profile *p, const struct load_options *lo, const struct diag_sink *warnings,
		  unsigned *missing);

#endif
