/*
 * attach_perf.c - collect -p's perf events: a task-clock event on each
 * thread of the target, per CPU, inherited by the threads it starts later,
 * every event of a CPU writing into that CPU's one ring (perf record -p
 * does the same). A sample carries the thread's user registers (ip, sp, bp)
 * and a copy of the top of its user stack, unwound here at once; the
 * ring's other records say what the target maps (MMAP2), how its threads
 * are named (COMM) and when they start and end (FORK, EXIT).
 *
 * Where the kernel allows it (root, CAP_PERFMON, perf_event_paranoid < 2),
 * samples that land in the kernel (system calls, page faults) are kept,
 * charged to the user stack that entered it, so a CPU profile holds all of
 * a thread's CPU time as a launched run's does; else the user-mode part
 * alone is sampled, and the trace's source says so.
 *
 * Threads that exist when collect attaches get events one by one; one
 * started meanwhile by a thread that had none yet would be missed, so the
 * thread list is read again until it holds no thread without an event
 * (each inherited one announced itself with a FORK record by then).
 */
#include "attach_internal.h"

#include "alloc.h"
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* x86-64's perf register numbers (arch/x86/include/uapi/asm/perf_regs.h) */
#define REG_BP 6
#define REG_SP 7
#define REG_IP 8
#define SAMPLE_REGS ((1ull << REG_BP) | (1ull << REG_SP) | (1ull << REG_IP))
#define SAMPLE_TYPE \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | \
	 PERF_SAMPLE_STACK_USER)
#define OPEN_PASSES 8 /* thread list readings; a process that starts threads faster than that is followed by inheritance */

static int perf_event_open(struct perf_event_attr *attr, pid_t tid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(const struct attach *a, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof *attr);
	attr->size = sizeof *attr;
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_TASK_CLOCK;
	attr->sample_period = a->o->interval_ns;
	attr->sample_type = SAMPLE_TYPE;
	attr->sample_regs_user = SAMPLE_REGS;
	attr->sample_stack_user = a->stack_bytes;
	attr->inherit = 1;
	if (a->inherit_thread)
		attr->inherit_thread = 1;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	if (!a->kernel_time)
		attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = (uint32_t)(a->ring_bytes / 4);
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 2;
	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

static void refused(const struct attach *a, int err)
{
	int level = paranoid_level();
	if (err == EACCES || err == EPERM)
		fprintf(stderr,
			"collect: -p %d: not permitted to profile it: it needs the process's own user (with "
			"kernel.perf_event_paranoid <= 2, here %d) or root/CAP_PERFMON\n",
			(int)a->pid, level);
	else if (err == ESRCH)
		fprintf(stderr, "collect: -p %d: the process ended while collect attached\n", (int)a->pid);
	else if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
		fprintf(stderr, "collect: -p %d: this kernel has no task-clock perf event with user stacks (%s)\n",
			(int)a->pid, strerror(err));
	else if (err == EMFILE || err == ENFILE)
		fprintf(stderr, "collect: -p %d: out of file descriptors for its threads' perf events (%s)\n",
			(int)a->pid, strerror(err));
	else
		fprintf(stderr, "collect: -p %d: perf_event_open: %s\n", (int)a->pid, strerror(err));
}

static void keep_fd(struct attach *a, int fd)
{
	ALLOC_GROW(a->fds, a->nfds + 1, a->fds_cap);
	a->fds[a->nfds++] = fd;
}

/* A ring of data_bytes for cpu's events on fd: 0, or -1 with errno. */
static int map_ring(struct attach *a, int cpu, int fd)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *m = mmap(NULL, page + a->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	a->ring[cpu] = m;
	a->ring_fd[cpu] = fd;
	return 0;
}

/* Events on every CPU for thread tid: 0, 1 when it ended meanwhile, or -1 with errno. */
static int open_thread(struct attach *a, pid_t tid)
{
	for (int cpu = 0; cpu < a->ncpu; cpu++) {
		struct perf_event_attr attr;
		fill_attr(a, &attr);
		int fd = perf_event_open(&attr, tid, cpu);
		if (fd < 0 && errno == EINVAL && a->inherit_thread) {
			a->inherit_thread = 0; /* before Linux 5.13: forked processes inherit too, and are left out */
			fill_attr(a, &attr);
			fd = perf_event_open(&attr, tid, cpu);
		}
		if (fd < 0 && (errno == EACCES || errno == EPERM) && a->kernel_time) {
			a->kernel_time = 0; /* user mode only: kernel time is not for this user to sample */
			fill_attr(a, &attr);
			fd = perf_event_open(&attr, tid, cpu);
		}
		if (fd < 0)
			return errno == ESRCH ? 1 : -1;
		keep_fd(a, fd);
		if (a->ring_fd[cpu] < 0) {
			/* The largest ring the locked-memory limit allows (perf_event_mlock_kb for a user). */
			while (map_ring(a, cpu, fd) < 0) {
				if (errno != EPERM && errno != ENOMEM)
					return -1;
				if (cpu > 0 || a->ring_bytes <= (64u << 10))
					return -1;
				a->ring_bytes /= 2;
			}
			if (cpu == 0 && a->stack_bytes > a->ring_bytes / 8)
				a->stack_bytes = (uint32_t)(a->ring_bytes / 8); /* later events copy less; this one too */
		} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, a->ring_fd[cpu]) < 0) {
			return -1;
		}
	}
	return 0;
}

/* The process's threads without an event: each opened; how many were, or -1 with errno (a message printed). */
static int open_new_threads(struct attach *a, uint64_t now)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)a->pid);
	DIR *d = opendir(path);
	if (!d) {
		refused(a, errno == ENOENT ? ESRCH : errno);
		return -1;
	}
	int opened = 0, err = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		int known = 0;
		for (uint32_t i = 0; i < a->nthreads && !known; i++)
			known = a->threads[i].tid == tid;
		if (known)
			continue;
		int rc = open_thread(a, tid);
		if (rc < 0) {
			err = errno;
			break;
		}
		if (rc == 0) {
			attach_thread_of(a, tid, now, 0);
			opened++;
		}
	}
	closedir(d);
	if (err) {
		refused(a, err);
		return -1;
	}
	return opened;
}

int attach_perf_open(struct attach *a)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	a->ncpu = ncpu > 0 ? (int)ncpu : 1;
	a->ring_fd = calloc_or_abort((size_t)a->ncpu, sizeof *a->ring_fd);
	a->ring = calloc_or_abort((size_t)a->ncpu, sizeof *a->ring);
	for (int c = 0; c < a->ncpu; c++)
		a->ring_fd[c] = -1;
	a->ring_bytes = 2u << 20;
	a->stack_bytes = ATTACH_STACK_BYTES;
	a->kernel_time = 1;
	a->inherit_thread = 1;
	a->scratch = realloc_or_abort(NULL, 1u << 16);
	uint64_t now = attach_now_ns();
	for (int pass = 0; pass < OPEN_PASSES; pass++) {
		int opened = open_new_threads(a, now);
		if (opened < 0)
			return -1;
		if (pass > 0 && !opened)
			break;
		attach_perf_drain(a); /* FORK records: threads the events already follow */
	}
	if (!a->nthreads) {
		refused(a, ESRCH);
		return -1;
	}
	return 0;
}

/* The sample_id at a record's end (TID, TIME): its thread and time. */
static void record_id(const struct perf_event_header *h, uint32_t *tid, uint64_t *time)
{
	const uint8_t *end = (const uint8_t *)h + h->size;
	memcpy(time, end - 8, 8);
	memcpy(tid, end - 12, 4);
}

static void on_sample(struct attach *a, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1), *end = (const uint8_t *)h + h->size;
	struct {
		uint64_t ip;
		uint32_t pid, tid;
		uint64_t time, period, abi;
		uint64_t regs[3]; /* bp, sp, ip: by register number */
		uint64_t stack_size;
	} s;
	size_t fixed = offsetof(__typeof__(s), stack_size) + 8;
	if ((size_t)(end - p) < fixed)
		return;
	memcpy(&s, p, 8 + 8 + 8 + 8 + 8); /* ip, pid/tid, time, period, abi */
	p += 40;
	if (s.pid != (uint32_t)a->pid) {
		a->other_process++;
		return;
	}
	if (!s.abi) { /* no user registers (a kernel thread's, or a thread on its way out) */
		a->lost++;
		return;
	}
	memcpy(s.regs, p, sizeof s.regs);
	p += sizeof s.regs;
	memcpy(&s.stack_size, p, 8);
	p += 8;
	const uint8_t *stack = p;
	uint64_t dyn = 0;
	if (s.stack_size && s.stack_size <= (uint64_t)(end - p) && (uint64_t)(end - p) - s.stack_size >= 8)
		memcpy(&dyn, p + s.stack_size, 8);
	if (dyn > s.stack_size)
		dyn = 0;
	uint32_t cap = a->o->max_frames, flags;
	uint32_t n = remote_unwind(a->rm, s.regs[2], s.regs[1], s.regs[0], stack, dyn, a->ips, cap, &flags);
	uint32_t stack_flags = TRACE_STACK_LEAF_EXACT | ((flags & REMOTE_UNWIND_TRUNCATED) ? TRACE_STACK_TRUNCATED : 0);
	a->truncated += (flags & REMOTE_UNWIND_TRUNCATED) != 0;
	uint32_t id = attach_stack_id(a, a->ips, n, stack_flags);
	uint64_t interval = a->o->interval_ns;
	uint64_t weight = (s.period + interval / 2) / interval;
	struct attach_thread *t = attach_thread_of(a, (pid_t)s.tid, s.time, 1);
	if (t)
		t->last_cpu_stack = id;
	attach_sample(a, s.time, (pid_t)s.tid, id, weight ? (uint32_t)weight : 1, TRACE_STATE_ON_CPU, -1);
}

static void on_record(struct attach *a, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t body = h->size - sizeof *h;
	uint32_t tid;
	uint64_t time;
	/* Before the trace began (the threads' events being opened): threads are listed, the rest is its start's. */
	if (!a->w && h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT)
		return;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(a, h);
		break;
	case PERF_RECORD_MMAP2: {
		/* pid, tid, addr, len, pgoff, (maj, min, ino, ino_generation | build id), prot, flags, filename */
		struct {
			uint32_t pid, tid;
			uint64_t addr, len, pgoff;
			uint8_t id[24];
			uint32_t prot, flags;
		} m;
		if (body < sizeof m + 12 + 1)
			break;
		memcpy(&m, p, sizeof m);
		const char *name = (const char *)p + sizeof m;
		size_t max = body - sizeof m - 12;
		if (m.pid != (uint32_t)a->pid || !(m.prot & PROT_EXEC) || strnlen(name, max) == max)
			break;
		record_id(h, &tid, &time);
		remote_modules_mapped(a->rm, a->w, m.addr, m.len, m.pgoff, name, time);
		break;
	}
	case PERF_RECORD_COMM: {
		uint32_t ids[2];
		if (body < sizeof ids + 12 + 1)
			break;
		memcpy(ids, p, sizeof ids);
		const char *name = (const char *)p + sizeof ids;
		size_t max = body - sizeof ids - 12;
		if (ids[0] != (uint32_t)a->pid || strnlen(name, max) == max)
			break;
		record_id(h, &tid, &time);
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			attach_exec(a, time);
		attach_thread_name(a, (pid_t)ids[1], name, time);
		break;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} f;
		if (body < sizeof f)
			break;
		memcpy(&f, p, sizeof f);
		if (f.pid != (uint32_t)a->pid)
			break;
		if (h->type == PERF_RECORD_FORK)
			attach_thread_of(a, (pid_t)f.tid, f.time, 1);
		else
			attach_thread_exit(a, (pid_t)f.tid, f.time);
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost[2]; /* id, count */
		if (body < sizeof lost)
			break;
		memcpy(lost, p, sizeof lost);
		a->lost += lost[1];
		record_id(h, &tid, &time);
		struct trace_loss l = { (uint32_t)a->pid, 0, time, lost[1] };
		if (a->w && trace_writer_loss(a->w, &l) < 0)
			a->write_failed = 1;
		break;
	}
	default:
		break;
	}
}

static void drain_ring(struct attach *a, int cpu)
{
	struct perf_event_mmap_page *pg = (struct perf_event_mmap_page *)a->ring[cpu];
	const uint8_t *data = a->ring[cpu] + pg->data_offset;
	uint64_t size = pg->data_size;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t at = tail & (size - 1);
		for (size_t i = 0; i < sizeof h; i++)
			((uint8_t *)&h)[i] = data[(at + i) & (size - 1)];
		if (h.size < sizeof h || h.size > head - tail)
			break;
		const struct perf_event_header *rec = (const struct perf_event_header *)(data + at);
		if (at + h.size > size) { /* wraps the ring's end: whole, in the scratch */
			uint64_t first = size - at;
			memcpy(a->scratch, data + at, first);
			memcpy(a->scratch + first, data, h.size - first);
			rec = (const struct perf_event_header *)a->scratch;
		}
		on_record(a, rec);
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

void attach_perf_drain(struct attach *a)
{
	for (int cpu = 0; cpu < a->ncpu; cpu++)
		if (a->ring[cpu])
			drain_ring(a, cpu);
}

void attach_perf_close(struct attach *a)
{
	for (uint32_t i = 0; i < a->nfds; i++)
		ioctl(a->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	attach_perf_drain(a);
	for (uint32_t i = 0; i < a->nfds; i++)
		close(a->fds[i]);
	for (int cpu = 0; cpu < a->ncpu; cpu++)
		if (a->ring[cpu])
			munmap(a->ring[cpu], (size_t)sysconf(_SC_PAGESIZE) + a->ring_bytes);
	a->nfds = 0;
	free(a->fds);
	free(a->ring);
	free(a->ring_fd);
	free(a->scratch);
	a->fds = NULL;
	a->ring = NULL;
	a->ring_fd = NULL;
	a->scratch = NULL;
}
