/*
 * procs.c - the process tree collect follows, as the trace's PROCESS records.
 *
 * Agents say what their process does (transport.h's TR_PROCESS): an image
 * attached (collect started it, or a fork+exec, a posix_spawn or an exec in
 * place), a fork goes on profiled, an exec is about to happen or failed, a
 * child was reaped by the program's own wait(). collect itself reaps its
 * child and, as the tree's subreaper, every orphan of it. This file turns
 * that into PROCESS records (forked, exec'd, exited) as it arrives, and at
 * the end says what no agent could: an exec that no agent followed is a
 * program the agent could not enter (statically linked, setuid, or an
 * environment that dropped LD_PRELOAD), written as exec'd and not profiled
 * with the reason, instead of the process silently missing; a process whose
 * end nobody reported is written as exited with its status unknown.
 *
 * Everything here comes from the profiled programs' shared memory (the pid
 * and path in a record included): a bogus record can only make a wrong
 * PROCESS record, never a crash or a hang. The table is bounded.
 */
#include "collect.h"

#include "alloc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_PROCESSES 65536u

struct proc {
	uint32_t pid, parent;
	uint64_t attach_ns;   /* last image that attached; 0: none */
	uint64_t image_ns;    /* last image an agent is in (attached, or forked and followed); 0: none */
	uint64_t image_cpu_ns; /* its recording thread's CPU time then; UINT64_MAX: unknown */
	uint64_t exec_ns;     /* an exec announced after it; 0: none pending */
	char *exec_path;
	int seen;             /* forked or attached: the trace knows it */
	int exited;           /* an exited record was written */
};

struct procs {
	struct proc *procs;
	uint32_t n, cap;
	uint32_t first;
	int quiet;
	uint32_t not_profiled;
};

struct procs *procs_new(pid_t first)
{
	struct procs *ps = calloc_or_abort(1, sizeof *ps);
	ps->first = (uint32_t)first;
	return ps;
}

void procs_free(struct procs *ps)
{
	if (!ps)
		return;
	for (uint32_t i = 0; i < ps->n; i++)
		free(ps->procs[i].exec_path);
	free(ps->procs);
	free(ps);
}

/* The entry of pid, made if new (NULL when the table is full: then nothing is remembered). */
static struct proc *proc_of(struct procs *ps, uint32_t pid)
{
	for (uint32_t i = ps->n; i-- > 0;)
		if (ps->procs[i].pid == pid)
			return &ps->procs[i];
	if (ps->n == MAX_PROCESSES)
		return NULL;
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 64;
		ps->procs = realloc_or_abort(ps->procs, ps->cap * sizeof *ps->procs);
	}
	struct proc *p = &ps->procs[ps->n++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	return p;
}

static void put(struct trace_writer *w, const struct trace_process *tp)
{
	if (w)
		trace_writer_process(w, tp); /* a failure shows at the next flush */
}

/* A copy of n bytes without NULs (a record is untrusted: a NUL would end the string early). */
static char *text_copy(const char *s, uint32_t n)
{
	char *out = realloc_or_abort(NULL, (size_t)n + 1);
	for (uint32_t i = 0; i < n; i++)
		out[i] = s[i] ? s[i] : '?';
	out[n] = 0;
	return out;
}

void procs_record(struct procs *ps, struct trace_writer *w, const struct tr_process *pr, const char *text)
{
	if (!pr->pid)
		return;
	struct proc *p = proc_of(ps, pr->pid);
	char *path = text_copy(text, pr->path_len), *command = text_copy(text + pr->path_len, pr->command_len);
	struct trace_process tp = { pr->pid, pr->parent, pr->time_ns, 0, 0, "", "", 0, "" };
	switch (pr->kind) {
	case TR_PROCESS_ATTACHED:
		tp.kind = TRACE_PROCESS_EXECED;
		tp.path = path;
		tp.command = command;
		put(w, &tp);
		if (p) {
			p->seen = 1;
			p->parent = pr->parent;
			p->attach_ns = p->image_ns = pr->time_ns;
			p->image_cpu_ns = pr->status >= 0 && pr->status < INT32_MAX ? (uint64_t)pr->status * 1000 : UINT64_MAX;
			if (p->exec_ns && p->exec_ns <= pr->time_ns)
				p->exec_ns = 0;
		}
		break;
	case TR_PROCESS_FORKED:
	case TR_PROCESS_FORK_UNFOLLOWED:
		tp.kind = TRACE_PROCESS_FORKED;
		if (pr->kind == TR_PROCESS_FORK_UNFOLLOWED) { /* the path says why */
			tp.flags = TRACE_PROCESS_NOT_PROFILED;
			tp.reason = path;
		}
		put(w, &tp);
		if (p) {
			p->seen = 1;
			p->parent = pr->parent;
			if (pr->kind == TR_PROCESS_FORKED && pr->time_ns >= p->image_ns) { /* rings drain in any order */
				p->image_ns = pr->time_ns ? pr->time_ns : 1;
				p->image_cpu_ns =
					pr->status >= 0 && pr->status < INT32_MAX ? (uint64_t)pr->status * 1000 : UINT64_MAX;
			}
		}
		break;
	case TR_PROCESS_EXECING:
		/* posix_spawn says so after the child's exec: an image that attached since counts. */
		if (p && pr->time_ns > p->attach_ns) {
			p->exec_ns = pr->time_ns;
			p->parent = p->parent ? p->parent : pr->parent;
			free(p->exec_path);
			p->exec_path = path;
			path = NULL;
		}
		break;
	case TR_PROCESS_EXEC_FAILED:
		if (p)
			p->exec_ns = 0;
		break;
	case TR_PROCESS_REAPED:
		procs_reaped(ps, w, (pid_t)pr->pid, pr->status, pr->time_ns);
		break;
	default:
		break;
	}
	free(path);
	free(command);
}

void procs_reaped(struct procs *ps, struct trace_writer *w, pid_t pid, int status, uint64_t time_ns)
{
	struct proc *p = proc_of(ps, (uint32_t)pid);
	if (p && p->exited)
		return; /* the program's wait() and collect both saw it (a pid reused this soon is not plausible) */
	struct trace_process tp = { (uint32_t)pid, p ? p->parent : 0, time_ns, TRACE_PROCESS_EXITED, status,
				    "", "", 0, "" };
	put(w, &tp);
	if (p)
		p->exited = 1;
}

/* Why no agent started in the program at path: read its mode and ELF headers (regular files only). */
static const char *why_not_profiled(const char *path)
{
	if (!path || !*path)
		return "the agent did not start in it";
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return "the agent did not start in it";
	}
	const char *why = "the agent did not start in it (LD_PRELOAD removed from its environment?)";
	Elf64_Ehdr eh;
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		why = "setuid or setgid: LD_PRELOAD is ignored";
	} else if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
		   eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum < 256) {
		int interp = 0;
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
				break;
			interp |= ph.p_type == PT_INTERP;
		}
		if (!interp)
			why = "statically linked: LD_PRELOAD is ignored";
	}
	close(fd);
	return why;
}

void procs_finish(struct procs *ps, struct trace_writer *w, uint64_t now_ns, const char *first_path, int quiet)
{
	struct proc *first = proc_of(ps, ps->first);
	if (first && !first->seen && !first->exec_ns) {
		/* collect's own warning says it for the program itself; the trace says it too. */
		struct trace_process tp = { ps->first, (uint32_t)getpid(), now_ns, TRACE_PROCESS_EXECED, 0,
					    first_path ? first_path : "", "", TRACE_PROCESS_NOT_PROFILED,
					    why_not_profiled(first_path) };
		put(w, &tp);
	}
	for (uint32_t i = 0; i < ps->n; i++) {
		struct proc *p = &ps->procs[i];
		if (p->exec_ns) {
			const char *why = why_not_profiled(p->exec_path);
			struct trace_process tp = { p->pid, p->parent, p->exec_ns, TRACE_PROCESS_EXECED, 0,
						    p->exec_path ? p->exec_path : "", "", TRACE_PROCESS_NOT_PROFILED,
						    why };
			put(w, &tp);
			ps->not_profiled++;
			if (!quiet)
				fprintf(stderr, "collect: process %u exec'd %s, which is not profiled: %s\n", p->pid,
					p->exec_path ? p->exec_path : "a program", why);
		}
		if ((p->seen || p->exec_ns) && !p->exited) {
			struct trace_process tp = { p->pid, p->parent, now_ns, TRACE_PROCESS_EXITED, 0, "", "",
						    TRACE_PROCESS_STATUS_UNKNOWN, "" };
			put(w, &tp);
		}
	}
}

uint32_t procs_count(const struct procs *ps)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < ps->n; i++)
		n += ps->procs[i].seen;
	return n;
}

uint32_t procs_profiled(const struct procs *ps, struct procs_image *out, uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < ps->n && n < cap; i++) {
		const struct proc *p = &ps->procs[i];
		if (p->image_ns && !p->exited)
			out[n++] = (struct procs_image){ (pid_t)p->pid, p->image_ns, p->image_cpu_ns,
							 p->exec_ns && p->exec_ns >= p->image_ns };
	}
	return n;
}

uint32_t procs_pids(const struct procs *ps, pid_t *pids, uint32_t cap)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < ps->n && n < cap; i++)
		if (ps->procs[i].seen)
			pids[n++] = (pid_t)ps->procs[i].pid;
	return n;
}
