/*
 * wall_watch.c - a launched run's wall mode, for the processes whose agent
 * has no sampler thread: their threads' time off CPU, read from outside.
 *
 * The agent's wall mode samples every thread from a thread of its own
 * (collect/agent/wall.c), but a thread of the agent's in a single-threaded
 * program changes what the program does (unshare(CLONE_NEWUSER) fails,
 * "Threads:" says 2, glibc's malloc leaves its single-thread paths:
 * collect/agent/background.c). So that thread starts only with the
 * program's second; until then each thread is sampled on CPU by its
 * CPU-time sources, and collect reads its time off CPU here, at every
 * interval, as collect -p does (offcpu.h): blocked threads' stacks are
 * read with process_vm_readv and unwound with the frame tables of the
 * process's files (remote.h), and never signalled.
 *
 * Processes come from procs.c (an image an agent is in, that has not
 * ended); an exec starts the watch of that process over. A process whose
 * sampler thread started (the header's wall_samplers moved; it is found by
 * its name, "ipscope-wall", in /proc/PID/task) is left to it for the rest
 * of its image. Its threads are listed again every TASK_SCAN_NS; io_uring's
 * kernel workers are not the program's threads and are left out, as the
 * agent leaves them out. A process's objects (remote.h: its maps, its
 * files' frame tables) are read when a walk first needs them, for at most
 * MODULES_PER_TICK processes a tick (a burst of new processes must not
 * stall the drain), and kept for at most MODULES_KEPT processes (each holds
 * descriptors); a blocked thread whose stack cannot be walked yet keeps its
 * time for a later tick. Past MANY_THREADS watched threads their /proc files
 * are opened at each tick instead of kept open. While an exec is pending the
 * process is not read (its image may be gone into a program no agent
 * enters), and a process whose threads are gone is no longer watched, even
 * when nobody reported it reaped. When every watched thread has been in the same
 * blocked call for OFFCPU_LONG_BLOCKED_TICKS, collect ticks every
 * LONG_BLOCKED_STRIDE intervals instead, as the agent's sampler looks at
 * such a thread less often: the time is counted by the clock all the same,
 * only a wake-up is seen up to that much later.
 */
#include "collect.h"

#include "alloc.h"
#include "offcpu.h"
#include "remote.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TASK_SCAN_NS 100000000ull
#define MAPS_SCAN_NS 100000000ull /* at most this often when walks stop short (a dlopen since) */
#define PF_IO_WORKER 0x00000010u /* the kernel's flag of io_uring's workers (include/linux/sched.h) */
#define MAX_WATCHED 4096u
#define MODULES_PER_TICK 2
#define MODULES_KEPT 8
#define MANY_THREADS 64
/* Every watched thread long in the same blocked call: ticks this many intervals apart (the clock still
 * counts every one; collect wakes less). */
#define LONG_BLOCKED_STRIDE 8

struct watched_thread {
	struct offcpu_thread oc;
	int listed; /* found by the last scan of /proc/PID/task */
};

struct watched {
	pid_t pid;
	uint64_t image, image_cpu_ns; /* when its image started, and its first thread's CPU time then */
	int scanned; /* its threads were listed once */
	int sampler; /* the agent's sampler thread runs in it: nothing to do */
	int gone; /* its threads are gone (ended, whoever reaps it) */
	int exec_pending; /* an exec was announced: not read until an agent attaches or the exec fails */
	int listed; /* procs.c still has it */
	struct remote_modules *rm; /* NULL until a walk needs it (and again once evicted) */
	uint64_t rm_used_ns; /* when a walk last asked for it */
	struct watched_thread *threads;
	uint32_t nthreads, threads_cap;
	uint64_t next_task_scan, next_maps_scan;
};

struct wall_watch {
	const struct collect_options *o;
	struct watched *procs;
	uint32_t nprocs, procs_cap;
	struct procs_image *list;
	uint32_t samplers_seen;
	int was_paused;
	uint32_t stride; /* intervals to the next tick (wall_watch_stride) */
	uint32_t modules_made; /* this tick */
	uint32_t threads_watched; /* at the last tick */
	uint8_t *stack_copy;
	uint64_t *ips, *guess_ips;
};

struct wall_watch *wall_watch_new(const struct collect_options *o)
{
	struct wall_watch *ww = calloc_or_abort(1, sizeof *ww);
	ww->o = o;
	ww->list = calloc_or_abort(MAX_WATCHED, sizeof *ww->list);
	ww->stack_copy = realloc_or_abort(NULL, OFFCPU_STACK_BYTES);
	ww->ips = calloc_or_abort((size_t)o->max_frames + 1, sizeof *ww->ips);
	ww->guess_ips = calloc_or_abort((size_t)o->max_frames + 1, sizeof *ww->guess_ips);
	return ww;
}

static void unwatch_threads(struct watched *p)
{
	for (uint32_t i = 0; i < p->nthreads; i++)
		offcpu_end(&p->threads[i].oc);
	p->nthreads = 0;
}

static void unwatch(struct watched *p)
{
	unwatch_threads(p);
	free(p->threads);
	remote_modules_free(p->rm);
	memset(p, 0, sizeof *p);
}

void wall_watch_free(struct wall_watch *ww)
{
	if (!ww)
		return;
	for (uint32_t i = 0; i < ww->nprocs; i++)
		unwatch(&ww->procs[i]);
	free(ww->procs);
	free(ww->list);
	free(ww->stack_copy);
	free(ww->ips);
	free(ww->guess_ips);
	free(ww);
}

/* What /proc/PID/task/TID/stat says of a thread: 1 the agent's sampler thread, 2 a kernel worker, 0 the
 * program's, -1 gone. */
static int task_kind(pid_t pid, long tid)
{
	char path[96], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/task/%ld/stat", (int)pid, tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *open = strchr(buf, '('), *fields = proc_stat_fields(buf);
	if (!open || !fields)
		return -1;
	if (!strncmp(open, "(ipscope-wall) ", 15))
		return 1;
	if (fields[0] == 'Z' || fields[0] == 'X')
		return -1; /* ended, not reaped yet */
	/* "state ppid pgrp session tty_nr tpgid flags" */
	const char *at = fields;
	for (int field = 0; field < 6 && at; field++)
		if ((at = strchr(at, ' ')))
			at++;
	return at && (strtoul(at, NULL, 10) & PF_IO_WORKER) ? 2 : 0;
}

/* List p's threads again: new ones watched from now, gone ones dropped; finds the agent's sampler thread (all:
 * known threads are looked at again, as a new thread has its creator's name until the sampler names itself). */
static void scan_tasks(struct watched *p, uint64_t now, int all)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
	DIR *dir = opendir(path);
	if (!dir) {
		if (errno == ENOENT || errno == ESRCH) {
			p->gone = 1;
			unwatch_threads(p);
		}
		return;
	}
	for (uint32_t i = 0; i < p->nthreads; i++)
		p->threads[i].listed = 0;
	struct dirent *e;
	while (!p->sampler && (e = readdir(dir))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (tid <= 0 || *end)
			continue;
		uint32_t i = 0;
		while (i < p->nthreads && p->threads[i].oc.tid != (pid_t)tid)
			i++;
		int kind = i < p->nthreads && !all ? 0 : task_kind(p->pid, tid);
		if (kind == 1)
			p->sampler = 1;
		if (i < p->nthreads) {
			p->threads[i].listed = kind == 0;
			continue;
		}
		if (kind != 0)
			continue;
		ALLOC_GROW(p->threads, p->nthreads + 1, p->threads_cap);
		struct offcpu_thread *t = &p->threads[p->nthreads].oc;
		offcpu_begin(t, p->pid, (pid_t)tid, now);
		if (tid == p->pid && !p->scanned && p->image_cpu_ns <= t->last_runtime && p->image <= now) {
			/* The thread that recorded the image: watched from then, not from the drain that told of it. */
			t->last_runtime = p->image_cpu_ns;
			t->last_poll_ns = p->image;
		}
		p->threads[p->nthreads++].listed = 1;
	}
	closedir(dir);
	p->scanned = 1;
	if (p->sampler) {
		unwatch_threads(p);
		remote_modules_free(p->rm);
		p->rm = NULL;
		return;
	}
	for (uint32_t i = p->nthreads; i-- > 0;)
		if (!p->threads[i].listed) {
			offcpu_end(&p->threads[i].oc);
			p->threads[i] = p->threads[--p->nthreads];
		}
	if (!p->nthreads)
		p->gone = 1; /* only zombies left */
}

/* Bring the watched processes in line with procs.c's: new images watched, ended or exec'd ones dropped. */
static void sync_processes(struct wall_watch *ww, const struct procs *ps)
{
	uint32_t n = procs_profiled(ps, ww->list, MAX_WATCHED);
	for (uint32_t i = 0; i < ww->nprocs; i++)
		ww->procs[i].listed = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = 0;
		while (i < ww->nprocs && ww->procs[i].pid != ww->list[k].pid)
			i++;
		if (i < ww->nprocs && ww->procs[i].image != ww->list[k].image)
			unwatch(&ww->procs[i]); /* exec'd: another program in the same process */
		else if (i == ww->nprocs) {
			ALLOC_GROW(ww->procs, ww->nprocs + 1, ww->procs_cap);
			memset(&ww->procs[ww->nprocs++], 0, sizeof *ww->procs);
		}
		struct watched *p = &ww->procs[i];
		if (!p->pid) {
			p->pid = ww->list[k].pid;
			p->image = ww->list[k].image;
			p->image_cpu_ns = ww->list[k].cpu_ns;
		}
		p->exec_pending = ww->list[k].exec_pending;
		p->listed = 1;
	}
	for (uint32_t i = ww->nprocs; i-- > 0;)
		if (!ww->procs[i].listed) {
			unwatch(&ww->procs[i]);
			ww->procs[i] = ww->procs[--ww->nprocs];
		}
}

struct sink_ctx {
	struct drain *d;
	struct wall_watch *ww;
	struct watched *p;
	uint64_t now;
};

/* p's objects for a walk: read now unless MODULES_PER_TICK processes were this tick (NULL: later); the
 * least recently walked process's are let go past MODULES_KEPT. */
static struct remote_modules *modules(void *ctx)
{
	struct sink_ctx *c = ctx;
	struct watched *p = c->p;
	if (!p->rm) {
		if (c->ww->modules_made >= MODULES_PER_TICK)
			return NULL;
		c->ww->modules_made++;
		struct watched *oldest = NULL;
		uint32_t kept = 0;
		for (uint32_t i = 0; i < c->ww->nprocs; i++) {
			struct watched *q = &c->ww->procs[i];
			if (q->rm) {
				kept++;
				if (!oldest || q->rm_used_ns < oldest->rm_used_ns)
					oldest = q;
			}
		}
		if (kept >= MODULES_KEPT && oldest) {
			remote_modules_free(oldest->rm);
			oldest->rm = NULL;
		}
		if (!(p->rm = remote_modules_new(p->pid)))
			return NULL;
		remote_modules_scan(p->rm, NULL, c->now);
		p->next_maps_scan = c->now + MAPS_SCAN_NS;
	}
	p->rm_used_ns = c->now;
	return p->rm;
}

static uint32_t stack_id(void *ctx, const uint64_t *ips, uint32_t n, uint32_t flags)
{
	struct sink_ctx *c = ctx;
	return drain_stack_id(c->d, (uint32_t)c->p->pid, ips, n, flags);
}

static void sample(void *ctx, const struct offcpu_thread *t, uint64_t time_ns, uint32_t stack, uint32_t weight,
		   uint32_t state, int32_t syscall)
{
	struct sink_ctx *c = ctx;
	struct trace_sample s = { time_ns, (uint32_t)t->pid, (uint32_t)t->tid, stack, weight, state, syscall };
	drain_sample(c->d, &s);
}

void wall_watch_tick(struct wall_watch *ww, struct drain *d, const struct procs *ps, const struct transport_header *h,
		     uint64_t now)
{
	sync_processes(ww, ps);
	/* Sampling off (--delay, a region, SIGUSR2): the time meanwhile is not the run's. */
	int paused = atomic_load(&h->paused) != 0 || atomic_load(&h->signal_taken) != 0;
	uint32_t samplers = atomic_load(&h->wall_samplers), long_blocked = 0, watched = 0;
	int sampler_started = samplers != ww->samplers_seen;
	ww->samplers_seen = samplers;
	ww->modules_made = 0;
	int keep_files = ww->threads_watched <= MANY_THREADS;
	for (uint32_t i = 0; i < ww->nprocs; i++) {
		struct watched *p = &ww->procs[i];
		if (p->sampler || p->gone)
			continue;
		if (sampler_started || now >= p->next_task_scan) {
			scan_tasks(p, now, sampler_started);
			p->next_task_scan = now + TASK_SCAN_NS;
			if (p->sampler || p->gone)
				continue;
		}
		struct sink_ctx ctx = { d, ww, p, now };
		struct offcpu_sink sink = { .ctx = &ctx, .stack_id = stack_id, .sample = sample, .rm = p->rm,
					    .modules = modules, .stack_copy = ww->stack_copy, .ips = ww->ips,
					    .guess_ips = ww->guess_ips, .max_frames = ww->o->max_frames,
					    .interval_ns = ww->o->interval_ns };
		for (uint32_t k = p->nthreads; k-- > 0;) {
			struct watched_thread *t = &p->threads[k];
			if (paused || ww->was_paused || p->exec_pending) {
				offcpu_skip(&t->oc, now);
			} else if (offcpu_tick(&t->oc, &sink, drain_last_stack(d, (uint32_t)t->oc.tid), now) < 0) {
				offcpu_end(&t->oc);
				*t = p->threads[--p->nthreads];
				continue;
			}
			if (!keep_files)
				offcpu_end(&t->oc); /* many threads: their files are opened again at the next tick */
			watched++;
			long_blocked += t->oc.blocked_ticks >= OFFCPU_LONG_BLOCKED_TICKS;
		}
		if (sink.truncated && p->rm && now >= p->next_maps_scan) {
			remote_modules_scan(p->rm, NULL, now); /* a library loaded since */
			p->next_maps_scan = now + MAPS_SCAN_NS;
		}
	}
	ww->was_paused = paused;
	ww->threads_watched = watched;
	ww->stride = watched && long_blocked == watched ? LONG_BLOCKED_STRIDE : 1;
}

uint32_t wall_watch_stride(const struct wall_watch *ww)
{
	return ww->stride ? ww->stride : 1;
}

int wall_watch_watching(const struct wall_watch *ww)
{
	for (uint32_t i = 0; i < ww->nprocs; i++) {
		const struct watched *p = &ww->procs[i];
		if (!p->sampler && !p->gone && !p->exec_pending && (p->nthreads || !p->scanned))
			return 1;
	}
	return 0;
}
