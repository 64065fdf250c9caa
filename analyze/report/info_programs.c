/*
 * info_programs.c - analyze info's text on a trace of many processes (a
 * build: 81 processes, each mapping libc): one line per program and one per
 * distinct module, not one per process and per mapping. --processes and
 * --modules give the full tables (info_text.c); the JSON has everything.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "info.h"
#include "terminal.h"

struct program_row {
	uint32_t command; /* string id, 0 unknown */
	uint32_t processes, threads;
	uint64_t rows;
	int64_t value;
};

static int by_value(const void *a, const void *b)
{
	const struct program_row *x = a, *y = b;
	return x->value != y->value ? (x->value < y->value ? 1 : -1) : (x->command > y->command) - (x->command < y->command);
}

void info_print_programs(FILE *out, const struct info *in, const char *unit_text)
{
	const struct profile *p = in->p;
	struct program_row *rows = calloc_or_abort(p->nthreads ? p->nthreads : 1, sizeof(*rows));
	uint32_t n = 0;
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *t = &p->threads[i];
		uint32_t k = 0;
		while (k < n && rows[k].command != t->command)
			k++;
		if (k == n)
			rows[n++].command = t->command;
		/* A process is counted by its first thread (threads of one pid are one program). */
		uint32_t j = 0;
		while (j < i && p->threads[j].pid != t->pid)
			j++;
		rows[k].processes += j == i;
		rows[k].threads++;
		rows[k].rows += in->thread_rows[i];
		rows[k].value += in->thread_values[i];
	}
	qsort(rows, n, sizeof(*rows), by_value);
	const char *unit = profile_string(p, p->value_types[in->value].unit);
	fprintf(out, "Commands:      %u (the processes: analyze info --processes)\n", n);
	fprintf(out, "  %9s %8s %10s %12s  %s\n", "PROCESSES", "THREADS", "SAMPLES", unit_text, "COMMAND");
	for (uint32_t k = 0; k < n; k++) {
		char a[4096], b[64];
		fprintf(out, "  %9u %8u %10" PRIu64 " %12s  %s\n", rows[k].processes, rows[k].threads, rows[k].rows,
			format_value(rows[k].value, unit, b, sizeof(b)),
			rows[k].command ? escape_text(profile_string(p, rows[k].command), a, sizeof(a)) : "?");
	}
	free(rows);
	/* What the agent could not enter has no threads: each said, as the processes table says it. */
	for (uint32_t i = 0; i < in->st->nprocesses; i++) {
		const struct load_process *pr = &in->st->processes[i];
		char a[4096], b[4096];
		if ((pr->flags & LOAD_PROCESS_NOT_PROFILED) && info_pid_shown(in, pr->pid))
			fprintf(out, "  %9s pid %u: %s (not profiled: %s)\n", "", pr->pid,
				pr->command ? escape_text(profile_string(p, pr->command), a, sizeof(a)) : "?",
				escape_text(profile_string(p, pr->reason), b, sizeof(b)));
	}
}

void info_print_distinct_modules(FILE *out, const struct info *in, const double *share)
{
	const struct profile *p = in->p;
	/* Per module, the first of its (path, build-id) group, and how many processes map it. */
	uint32_t *group = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*group));
	uint32_t *count = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*count));
	double *sum = calloc_or_abort(p->nmodules ? p->nmodules : 1, sizeof(*sum));
	uint32_t distinct = 0;
	for (uint32_t i = 0; i < p->nmodules; i++) {
		uint32_t g = 0;
		while (g < i && (p->modules[g].path != p->modules[i].path ||
				 p->modules[g].build_id != p->modules[i].build_id))
			g++;
		group[i] = g;
		distinct += g == i;
		count[g]++;
		sum[g] += share[i];
	}
	fprintf(out, "Modules:       %u distinct, mapped %u times (share: of %s, the samples in it; every "
		"mapping: analyze info --modules)\n",
		distinct, p->nmodules, profile_string(p, p->value_types[in->value].type));
	for (uint32_t i = 0; i < p->nmodules; i++) {
		if (group[i] != i)
			continue;
		const struct profile_module *m = &p->modules[i];
		const char *id = profile_string(p, m->build_id);
		char a[4096], procs[32];
		snprintf(procs, sizeof(procs), "%u process%s", count[i], count[i] == 1 ? "" : "es");
		fprintf(out, "  %-18s %-8.8s %5.1f%% %13s  %s%s\n", info_debug_info_text(profile_string(p, m->path), m->flags),
			*id ? id : "-", 100.0 * sum[i], procs, escape_text(profile_string(p, m->path), a, sizeof(a)),
			m->flags & PROFILE_MODULE_SYSTEM ? " (system)" : "");
	}
	free(group);
	free(count);
	free(sum);
}
