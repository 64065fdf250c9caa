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
	attr->inherit_stat = 1; /* an inherited event's count at its thread's end: PERF_RECORD_READ */
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

/* Events on every CPU for thread tid, into fds: 0, 1 when it ended meanwhile, or -1 with errno. */
static int open_events(struct attach *a, pid_t tid, int *fds)
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
		if (fd < 0) {
			int err = errno;
			while (cpu-- > 0)
				close(fds[cpu]);
			errno = err;
			return err == ESRCH ? 1 : -1;
		}
		fds[cpu] = fd;
	}
	return 0;
}

static void unmap_rings(struct attach *a)
{
	for (int cpu = 0; a->ring && cpu < a->ncpu; cpu++) {
		if (a->ring[cpu])
			munmap(a->ring[cpu], (size_t)sysconf(_SC_PAGESIZE) + a->ring_bytes);
		a->ring[cpu] = NULL;
		a->ring_fd[cpu] = -1;
	}
}

/* A ring per CPU on the first thread's events: the largest the user's locked-memory allowance gives every CPU
 * (perf_event_mlock_kb per CPU, then RLIMIT_MEMLOCK); 0, or -1 with errno. */
static int map_rings(struct attach *a, const int *fds)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	for (;;) {
		int cpu, err = 0;
		for (cpu = 0; cpu < a->ncpu; cpu++) {
			void *m = mmap(NULL, page + a->ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fds[cpu], 0);
			if (m == MAP_FAILED) {
				err = errno;
				break;
			}
			a->ring[cpu] = m;
			a->ring_fd[cpu] = fds[cpu];
		}
		if (cpu == a->ncpu)
			return 0;
		unmap_rings(a);
		if ((err != EPERM && err != ENOMEM) || a->ring_bytes <= (16u << 10)) {
			errno = err;
			return -1;
		}
		a->ring_bytes /= 2;
	}
}

/* The first thread's events and the rings every event writes to; 0, 1 (it ended meanwhile), or -1 with a message. */
static int open_first(struct attach *a, pid_t tid, int *fds)
{
	for (;;) {
		int rc = open_events(a, tid, fds);
		if (rc)
			return rc < 0 ? (refused(a, errno), -1) : 1;
		if (map_rings(a, fds) < 0) {
			int err = errno;
			for (int cpu = 0; cpu < a->ncpu; cpu++)
				close(fds[cpu]);
			fprintf(stderr,
				"collect: -p %d: cannot map perf buffers for %d CPUs (%s): the locked memory allowed "
				"(kernel.perf_event_mlock_kb, ulimit -l) is too small\n",
				(int)a->pid, a->ncpu, strerror(err));
			return -1;
		}
		/* A sample must fit a ring eight times over: copy less of the stack in a small ring. */
		if (a->stack_bytes <= a->ring_bytes / 8)
			return 0;
		a->stack_bytes = (uint32_t)(a->ring_bytes / 8) & ~7u;
		unmap_rings(a);
		for (int cpu = 0; cpu < a->ncpu; cpu++)
			close(fds[cpu]);
	}
}

/* Events on every CPU for thread tid, writing to the rings: 0, 1 when it ended meanwhile, or -1 (a message
 * printed). */
static int open_thread(struct attach *a, pid_t tid, uint64_t now)
{
	int *fds = calloc_or_abort((size_t)a->ncpu, sizeof *fds);
	int rc = a->ring[0] ? open_events(a, tid, fds) : open_first(a, tid, fds);
	if (rc < 0 && a->ring[0])
		refused(a, errno);
	for (int cpu = 0; rc == 0 && cpu < a->ncpu; cpu++)
		if (fds[cpu] != a->ring_fd[cpu] && ioctl(fds[cpu], PERF_EVENT_IOC_SET_OUTPUT, a->ring_fd[cpu]) < 0) {
			refused(a, errno);
			for (int c = 0; c < a->ncpu; c++)
				if (fds[c] != a->ring_fd[c])
					close(fds[c]);
			rc = -1;
		}
	if (rc == 0) {
		struct attach_thread *t = attach_thread_of(a, tid, now, 0);
		t->fds_at = a->nfds;
		t->nfds = (uint32_t)a->ncpu;
		for (int cpu = 0; cpu < a->ncpu; cpu++)
			keep_fd(a, fds[cpu]);
	}
	free(fds);
	return rc;
}

/* The process's threads without an event: each opened; how many were, or -1 (a message printed). */
static int open_new_threads(struct attach *a, uint64_t now)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)a->pid);
	DIR *d = opendir(path);
	if (!d) {
		refused(a, errno == ENOENT ? ESRCH : errno);
		return -1;
	}
	int opened = 0, failed = 0;
	struct dirent *e;
	while (!failed && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		int known = 0;
		for (uint32_t i = 0; i < a->nthreads && !known; i++)
			known = a->threads[i].tid == tid;
		if (known)
			continue;
		int rc = open_thread(a, tid, now);
		failed = rc < 0;
		opened += rc == 0;
		if (opened % 16 == 15)
			attach_perf_drain(a); /* the threads' FORK records, before a ring fills up */
	}
	closedir(d);
	return failed ? -1 : opened;
}

/* A thread given events of its own that also inherited its creator's (it was started while the list was read):
 * its own are closed, or it would be sampled twice. */
static void close_doubled(struct attach *a)
{
	for (uint32_t i = 0; i < a->nthreads; i++) {
		struct attach_thread *t = &a->threads[i];
		if (!t->inherited || !t->nfds)
			continue;
		for (uint32_t k = 0; k < t->nfds; k++) {
			int *fd = &a->fds[t->fds_at + k];
			int owner = 0;
			for (int cpu = 0; cpu < a->ncpu; cpu++)
				owner |= *fd == a->ring_fd[cpu];
			if (*fd >= 0 && !owner) {
				close(*fd);
				*fd = -1;
			}
		}
		t->nfds = 0;
	}
}

int attach_perf_open(struct attach *a)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	a->ncpu = ncpu > 0 ? (int)ncpu : 1;
	a->ring_fd = calloc_or_abort((size_t)a->ncpu, sizeof *a->ring_fd);
	a->ring = calloc_or_abort((size_t)a->ncpu, sizeof *a->ring);
	a->ring_hup = calloc_or_abort((size_t)a->ncpu, sizeof *a->ring_hup);
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
		attach_perf_drain(a); /* FORK records: threads the events already follow */
		if (pass > 0 && !opened)
			break;
	}
	attach_perf_drain(a);
	close_doubled(a);
	if (!a->ring[0]) {
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
	uint32_t id = attach_stack_id(a, a->ips, n, stack_flags);
	uint64_t interval = a->o->interval_ns;
	uint64_t weight = (s.period + interval / 2) / interval;
	struct attach_thread *t = attach_thread_of(a, (pid_t)s.tid, s.time, 1);
	if (t)
		t->last_cpu_stack = id;
	if (t)
		t->sampled += weight ? weight : 1;
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
		uint64_t inode = 0; /* maj, min, ino, ino_generation (no build-id asked for) */
		if (!(h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID))
			memcpy(&inode, m.id + 8, 8);
		remote_modules_mapped(a->rm, a->w, m.addr, m.len, m.pgoff, inode, name, time);
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
		if (h->type == PERF_RECORD_FORK) {
			struct attach_thread *creator = attach_thread_find(a, (pid_t)f.ptid);
			uint32_t root = !creator ? 0 : creator->nfds ? (uint32_t)(creator - a->threads) + 1 : creator->root;
			struct attach_thread *t = attach_thread_of(a, (pid_t)f.tid, f.time, 1);
			t->inherited = 1;
			t->root = root; /* (its own events, if it got some meanwhile, are closed: close_doubled) */
		} else
			attach_thread_exit(a, (pid_t)f.tid, f.time);
		break;
	}
	case PERF_RECORD_READ: {
		uint32_t ids[2]; /* pid, tid, then the value (read_format 0) */
		uint64_t value;
		if (body < sizeof ids + sizeof value)
			break;
		memcpy(ids, p, sizeof ids);
		memcpy(&value, p + sizeof ids, sizeof value);
		if (ids[0] != (uint32_t)a->pid)
			break;
		/* After the thread's EXIT: its latest entry, never a new thread. The count folds into the events it
		 * inherited from, whose own thread's count is the rest. */
		struct attach_thread *t = attach_thread_find(a, (pid_t)ids[1]);
		if (!t)
			break;
		t->counted_ns += value;
		if (t->root && t->root <= a->nthreads)
			a->threads[t->root - 1].descendants_ns += value;
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t lost[2]; /* id, count */
		if (body < sizeof lost)
			break;
		memcpy(lost, p, sizeof lost);
		a->rescan = 1; /* an MMAP2 may be among them */
		if (!a->w)
			break; /* while the events were being opened: samples the trace would not have held */
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

/* A record waiting in a ring, to be handled in time order with the other rings'. */
struct pending {
	uint64_t time;
	uint64_t at; /* its offset in its ring's data */
	uint32_t cpu, seq;
};

/* n bytes of cpu's ring data from offset at (the ring wraps) into buf. */
static void ring_copy(const struct attach *a, int cpu, uint64_t at, void *buf, size_t n)
{
	const struct perf_event_mmap_page *pg = (const struct perf_event_mmap_page *)a->ring[cpu];
	const uint8_t *data = a->ring[cpu] + pg->data_offset;
	uint64_t size = pg->data_size, off = at & (size - 1), first = size - off < n ? size - off : n;
	memcpy(buf, data + off, first);
	memcpy((uint8_t *)buf + first, data, n - first);
}

static int by_time(const void *x, const void *y)
{
	const struct pending *p = x, *q = y;
	if (p->time != q->time)
		return p->time < q->time ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/*
 * Every ring read to its end, the records of all of them handled in time order: a thread's records are in the
 * ring of the CPU it ran on, so its EXIT may be in one ring and its last sample in another, a dlopen's MMAP2 in
 * one and the first sample in the new library in another. (A record still being written on another CPU may
 * come at the next drain with an earlier time: a thread's records in one ring stay in order, and a record of
 * an exited thread never brings it back, attach.c.)
 */
void attach_perf_drain(struct attach *a)
{
	uint64_t head[a->ncpu > 0 ? a->ncpu : 1];
	a->npending = 0;
	for (int cpu = 0; cpu < a->ncpu; cpu++) {
		if (!a->ring[cpu])
			continue;
		const struct perf_event_mmap_page *pg = (const struct perf_event_mmap_page *)a->ring[cpu];
		head[cpu] = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = pg->data_tail;
		while (head[cpu] - tail >= sizeof(struct perf_event_header)) {
			struct perf_event_header h;
			ring_copy(a, cpu, tail, &h, sizeof h);
			if (h.size < sizeof h + 8 || h.size > head[cpu] - tail)
				break;
			uint64_t time = 0;
			/* A sample's time follows its ip and pid/tid; the others' ends their sample_id (TID, TIME). */
			ring_copy(a, cpu, h.type == PERF_RECORD_SAMPLE ? tail + sizeof h + 16 : tail + h.size - 8, &time, 8);
			ALLOC_GROW(a->pending, a->npending + 1, a->pending_cap);
			a->pending[a->npending] = (struct pending){ time, tail, (uint32_t)cpu, a->npending };
			a->npending++;
			tail += h.size;
		}
		head[cpu] = tail;
	}
	if (a->npending > 1)
		qsort(a->pending, a->npending, sizeof *a->pending, by_time);
	for (uint32_t i = 0; i < a->npending; i++) {
		const struct pending *p = &a->pending[i];
		struct perf_event_header h;
		ring_copy(a, (int)p->cpu, p->at, &h, sizeof h);
		ring_copy(a, (int)p->cpu, p->at, a->scratch, h.size); /* whole: a record may wrap the ring's end */
		on_record(a, (const struct perf_event_header *)a->scratch);
	}
	for (int cpu = 0; cpu < a->ncpu; cpu++)
		if (a->ring[cpu])
			__atomic_store_n(&((struct perf_event_mmap_page *)a->ring[cpu])->data_tail, head[cpu], __ATOMIC_RELEASE);
	a->drains++;
	attach_finish_exits(a, 0);
}

uint64_t attach_perf_thread_ns(const struct attach *a, const struct attach_thread *t)
{
	uint64_t sum = t->counted_ns, own = 0;
	for (uint32_t k = 0; k < t->nfds; k++) {
		uint64_t value;
		int fd = a->fds ? a->fds[t->fds_at + k] : -1;
		if (fd >= 0 && read(fd, &value, sizeof value) == (ssize_t)sizeof value)
			own += value;
	}
	/* An own event's count holds those of the threads that inherited it and ended (inherit_stat). */
	return sum + (own > t->descendants_ns ? own - t->descendants_ns : 0);
}

void attach_perf_stop(struct attach *a)
{
	for (uint32_t i = 0; i < a->nfds; i++)
		if (a->fds[i] >= 0)
			ioctl(a->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	attach_perf_drain(a);
	attach_finish_exits(a, 1);
}

void attach_perf_close(struct attach *a)
{
	for (uint32_t i = 0; i < a->nfds; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	unmap_rings(a);
	a->nfds = 0;
	free(a->fds);
	free(a->ring);
	free(a->ring_fd);
	free(a->scratch);
	free(a->pending);
	free(a->ring_hup);
	a->pending = NULL;
	a->ring_hup = NULL;
	a->fds = NULL;
	a->ring = NULL;
	a->ring_fd = NULL;
	a->scratch = NULL;
}
