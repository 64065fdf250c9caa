/*
 * load_procs.c - the consumer of PROCESS records (trace 1.4, see
 * load_internal.h): the processes of the tree, for analyze info.
 *
 * One entry per pid, in the order they appear: when it started (fork or
 * exec), what it ran last (path and command line of its last exec; a fork
 * that never exec'd runs its parent's command), how it ended, and whether
 * it exec'd a program the agent could not enter. A process that has samples
 * or threads but no PROCESS record (a trace before 1.4) is listed too, with
 * the run's command line when it is the run's first process. Each thread
 * of the profile is given its process's program (profile_thread.command).
 */
#include "load_internal.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

struct procs_state {
	struct hashmap index; /* pid -> processes[] */
	uint32_t cap;
};

static struct load_process *process_of(struct loader *L, struct procs_state *st, uint32_t pid)
{
	struct load_stats *ls = L->stats;
	uint32_t *slot = hashmap_slot(&st->index, pid);
	if (*slot == HASHMAP_NONE) {
		ALLOC_GROW(ls->processes, (uint64_t)ls->nprocesses + 1, st->cap);
		memset(&ls->processes[ls->nprocesses], 0, sizeof(ls->processes[0]));
		ls->processes[ls->nprocesses].pid = pid;
		*slot = ls->nprocesses++;
	}
	return &ls->processes[*slot];
}

static void *procs_start(struct loader *L)
{
	(void)L;
	struct procs_state *st = calloc_or_abort(1, sizeof(*st));
	hashmap_init(&st->index, 16);
	return st;
}

static void procs_record(struct loader *L, void *state, const struct trace_record *rec)
{
	const struct trace_process *r = &rec->u.process;
	if (!r->pid)
		return;
	struct load_process *p = process_of(L, state, r->pid);
	if (r->kind == TRACE_PROCESS_FORKED || r->kind == TRACE_PROCESS_EXECED)
		*hashmap_slot(&L->images, r->pid) = ++L->nimages;
	if (r->parent_pid && (!p->parent || r->kind != TRACE_PROCESS_EXITED))
		p->parent = r->parent_pid;
	switch (r->kind) {
	case TRACE_PROCESS_FORKED:
		p->flags |= LOAD_PROCESS_FORKED;
		if (!p->start_ns)
			p->start_ns = r->time_ns;
		if (r->flags & TRACE_PROCESS_NOT_PROFILED) { /* a fork the agent could not follow (seccomp) */
			p->flags |= LOAD_PROCESS_NOT_PROFILED;
			p->reason = profile_intern(L->p, r->reason);
		}
		break;
	case TRACE_PROCESS_EXECED:
		if (!p->start_ns)
			p->start_ns = r->time_ns;
		p->flags &= ~LOAD_PROCESS_FORKED; /* it runs its own program now */
		if (r->flags & TRACE_PROCESS_NOT_PROFILED) {
			p->flags |= LOAD_PROCESS_NOT_PROFILED;
			p->reason = profile_intern(L->p, r->reason);
		}
		if (r->path && *r->path)
			p->path = profile_intern(L->p, r->path);
		if (r->command && *r->command)
			p->command = profile_intern(L->p, r->command);
		else if (p->path)
			p->command = p->path; /* (an exec no agent followed says only what it ran) */
		break;
	case TRACE_PROCESS_EXITED:
		p->flags |= LOAD_PROCESS_EXITED;
		p->end_ns = r->time_ns;
		p->wait_status = r->wait_status;
		if (r->flags & TRACE_PROCESS_STATUS_UNKNOWN)
			p->flags |= LOAD_PROCESS_STATUS_UNKNOWN;
		else
			p->flags &= ~LOAD_PROCESS_STATUS_UNKNOWN;
		break;
	default:
		break; /* a kind newer than this reader */
	}
	if (r->time_ns > L->last_time_ns)
		L->last_time_ns = r->time_ns;
}

/* The run's first process, as META pid says (0: not said). */
static uint32_t first_pid(const struct loader *L)
{
	for (uint32_t i = 0; i < L->stats->nmeta; i++)
		if (!strcmp(profile_string(L->p, L->stats->meta[i].key), TRACE_META_PID))
			return (uint32_t)strtoul(profile_string(L->p, L->stats->meta[i].value), NULL, 10);
	return 0;
}

/* The basename of the program p runs: of its exec'd path, else of its command line's first word. */
static uint32_t program_of(struct loader *L, const struct load_process *p)
{
	const char *s = profile_string(L->p, p->path ? p->path : p->command);
	size_t n = p->path ? strlen(s) : strcspn(s, " ");
	size_t start = n;
	while (start > 0 && s[start - 1] != '/')
		start--;
	return n > start ? profile_intern_n(L->p, s + start, n - start) : 0;
}

/* Processes without records (older traces, or threads the records did not mention); forks' commands. */
static void procs_finish(struct loader *L, void *state)
{
	struct procs_state *st = state;
	struct load_stats *ls = L->stats;
	for (uint32_t t = 0; t < L->p->nthreads; t++)
		process_of(L, st, L->p->threads[t].pid);
	for (uint32_t i = 0; i < ls->nprocesses; i++) {
		struct load_process *p = &ls->processes[i];
		/* A fork runs its parent's program: its nearest ancestor with a command line (bounded walk). */
		for (uint32_t hops = 0, parent = p->parent; !p->command && parent && hops < 64; hops++) {
			uint32_t up_index = hashmap_get(&st->index, parent);
			if (up_index == HASHMAP_NONE)
				break;
			const struct load_process *up = &ls->processes[up_index];
			p->command = up->command;
			p->path = p->path ? p->path : up->path;
			parent = up->parent;
		}
		if (!p->command && p->pid == first_pid(L))
			p->command = L->p->command;
	}
	/* Each thread names its process's program (profile.h). */
	for (uint32_t t = 0; t < L->p->nthreads; t++) {
		uint32_t i = hashmap_get(&st->index, L->p->threads[t].pid);
		if (i != HASHMAP_NONE)
			L->p->threads[t].command = program_of(L, &ls->processes[i]);
	}
}

static void procs_free(void *state)
{
	struct procs_state *st = state;
	hashmap_free(&st->index);
	free(st);
}

static const enum trace_type procs_types[] = { TRACE_PROCESS, 0 };
const struct record_consumer load_procs_consumer = {
	"processes", procs_types, procs_start, procs_record, procs_finish, NULL, procs_free,
};
