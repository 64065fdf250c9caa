/*
 * attach.c - `collect -p PID`: profile a process that is already running,
 * from outside, into the same trace a launched run writes.
 *
 * Nothing is put into the target. A launched program carries the agent
 * from its first instruction; a running one would need code injected with
 * ptrace, which stops every thread and leaves a library behind. Instead:
 *  - CPU time: a task-clock perf event on each of its threads (new threads
 *    inherit it), sampling every interval of the thread's CPU time with a
 *    copy of its user registers and of the top of its user stack
 *    (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER). collect unwinds each
 *    copy at once with the agent's own .eh_frame rows, built from the
 *    target's files (remote_unwind.c), and stores stacks as a launched run
 *    does: the raw copies never reach the trace.
 *  - Modules: /proc/PID/maps at the start, perf's MMAP2 records for what is
 *    mapped later (dlopen), COMM and FORK/EXIT records for thread names and
 *    lives: the same MODULE and THREAD records the agent writes.
 *  - Wall time (-m wall): blocked threads are read from /proc, never
 *    signalled (attach_wall.c), so the target's sleeps and reads are not cut.
 * Allocations need hooks in the program from its first allocation: -p
 * refuses --allocs (options.c) and says to launch under collect.
 *
 * The run ends at --duration, at SIGINT, SIGTERM or SIGHUP to collect, or
 * when the process ends (a pidfd says so); collect then closes the events
 * (the program runs on as before) and exits 0 with a complete trace.
 */
#include "attach_internal.h"

#include "alloc.h"
#include "jitmap_copy.h"
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FLUSH_INTERVAL_NS 100000000ull
#define CPU_POLL_NS 20000000ull /* cpu mode: rings are read at least this often */

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

uint64_t attach_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The state letter of /proc/PID/stat (after the command's closing parenthesis), 0 when unreadable. */
static char process_state(pid_t pid, int *exit_code)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_proc_file(path, buf, sizeof buf) < 0)
		return 0;
	const char *fields = proc_stat_fields(buf);
	if (!fields)
		return 0;
	if (exit_code) { /* field 52, the last: the status a parent's wait would get */
		const char *last = strrchr(buf, ' ');
		*exit_code = last ? atoi(last + 1) : -1;
	}
	return fields[0];
}

void attach_thread_start(struct attach *a, const struct attach_thread *t, uint64_t now_ns)
{
	char path[96], name[64] = "";
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)a->pid, (int)t->tid);
	if (read_proc_file(path, name, sizeof name) > 0)
		name[strcspn(name, "\n")] = 0;
	struct trace_thread rec = { (uint32_t)a->pid, (uint32_t)t->tid, now_ns, TRACE_THREAD_START | TRACE_THREAD_NAME,
				    name, 0 };
	if (a->w && trace_writer_thread(a->w, &rec) < 0)
		a->write_failed = 1;
}

struct attach_thread *attach_thread_of(struct attach *a, pid_t tid, uint64_t now_ns, int write_start)
{
	for (uint32_t i = a->nthreads; i-- > 0;) {
		struct attach_thread *t = &a->threads[i];
		if (t->tid != tid)
			continue;
		/* One that ended: its own record from before its end (another CPU's ring), else a new thread with its tid. */
		if (t->alive || now_ns <= t->exit_ns)
			return t;
		break;
	}
	ALLOC_GROW(a->threads, a->nthreads + 1, a->threads_cap);
	struct attach_thread *t = &a->threads[a->nthreads++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->alive = 1;
	offcpu_begin(&t->wall, a->pid, tid, now_ns);
	t->runtime_at_start = t->wall.last_runtime;
	if (write_start)
		attach_thread_start(a, t, now_ns);
	return t;
}

/* SHORT_THREAD_INTERVALS: as the agent's (sampler.c): a thread shorter than that is charged all its samples
 * missed (its start and end are most of its life), a longer one at most one interval. */
#define SHORT_THREAD_INTERVALS 10

/* A thread's CPU time after its last sample (cpu_ns, its events' count, less what its samples stand for): one
 * more sample on its last stack, flagged TRACE_STACK_EXIT_CHARGE, as a launched run's agent charges it. */
static void charge_exit(struct attach *a, const struct attach_thread *t, uint64_t cpu_ns, uint64_t time_ns)
{
	uint64_t interval = a->o->interval_ns, covered = t->sampled * interval;
	if (!t->last_cpu_stack || cpu_ns <= covered)
		return;
	uint64_t missed = cpu_ns - covered;
	if (cpu_ns >= SHORT_THREAD_INTERVALS * interval && missed > interval)
		missed = interval;
	a->random ^= a->random << 13;
	a->random ^= a->random >> 7;
	a->random ^= a->random << 17;
	uint64_t weight = missed / interval + ((a->random % interval) < missed % interval);
	if (!weight)
		return;
	const struct attach_stack *s = &a->stacks[t->last_cpu_stack - 1];
	uint32_t id = attach_stack_id(a, &a->frames[s->first], s->n, s->flags | TRACE_STACK_EXIT_CHARGE);
	attach_sample(a, time_ns, t->tid, id, (uint32_t)weight, TRACE_STATE_ON_CPU, -1);
	a->exit_charged += weight;
	a->exit_charged_threads++;
}

struct attach_thread *attach_thread_find(struct attach *a, pid_t tid)
{
	for (uint32_t i = a->nthreads; i-- > 0;)
		if (a->threads[i].tid == tid)
			return &a->threads[i];
	return NULL;
}

void attach_thread_exit(struct attach *a, pid_t tid, uint64_t time_ns)
{
	struct attach_thread *t = attach_thread_find(a, tid);
	if (!t || !t->alive)
		return;
	t->alive = 0;
	t->exit_ns = time_ns;
	t->exit_drain = a->drains;
	t->exit_pending = 1;
	offcpu_end(&t->wall);
}

void attach_finish_exits(struct attach *a, int all)
{
	for (uint32_t i = 0; i < a->nthreads; i++) {
		struct attach_thread *t = &a->threads[i];
		if (!t->exit_pending || (!all && t->exit_drain == a->drains))
			continue;
		t->exit_pending = 0;
		uint64_t cpu_ns = attach_perf_thread_ns(a, t);
		if (a->w && !a->o->wall)
			charge_exit(a, t, cpu_ns, t->exit_ns);
		struct trace_thread rec = { (uint32_t)a->pid, (uint32_t)t->tid, t->exit_ns, TRACE_THREAD_EXIT, "", cpu_ns };
		if (a->w && trace_writer_thread(a->w, &rec) < 0)
			a->write_failed = 1;
	}
}

void attach_thread_name(struct attach *a, pid_t tid, const char *name, uint64_t time_ns)
{
	attach_thread_of(a, tid, time_ns, 1); /* a COMM handled before its FORK (another ring): the thread starts here */
	struct trace_thread rec = { (uint32_t)a->pid, (uint32_t)tid, time_ns, TRACE_THREAD_NAME, name, 0 };
	if (a->w && trace_writer_thread(a->w, &rec) < 0)
		a->write_failed = 1;
}

struct stack_key {
	const struct attach *a;
	const uint64_t *ips;
	uint32_t n, flags;
};

static int same_stack(const void *ctx, uint32_t id)
{
	const struct stack_key *k = ctx;
	const struct attach_stack *s = &k->a->stacks[id];
	return s->n == k->n && s->flags == k->flags && !memcmp(&k->a->frames[s->first], k->ips, k->n * sizeof *k->ips);
}

uint32_t attach_stack_id(struct attach *a, const uint64_t *ips, uint32_t n, uint32_t flags)
{
	uint64_t h = hash_combine(hash_bytes(ips, n * sizeof *ips), flags);
	struct stack_key k = { a, ips, n, flags };
	uint32_t id = hashmap_find(&a->stack_index, h, same_stack, &k);
	if (id != HASHMAP_NONE)
		return id + 1;
	id = a->nstacks;
	ALLOC_GROW(a->stacks, a->nstacks + 1, a->stacks_cap);
	ALLOC_GROW(a->frames, a->nframes + n, a->frames_cap);
	memcpy(&a->frames[a->nframes], ips, n * sizeof *ips);
	a->stacks[a->nstacks++] = (struct attach_stack){ a->nframes, n, flags };
	a->nframes += n;
	hashmap_insert(&a->stack_index, h, id);
	struct trace_stack s = { id + 1, flags, n, ips };
	if (a->w && trace_writer_stack(a->w, &s) < 0)
		a->write_failed = 1;
	return id + 1;
}

void attach_sample(struct attach *a, uint64_t time_ns, pid_t tid, uint32_t stack, uint32_t weight, uint32_t state,
		   int32_t syscall)
{
	struct trace_sample s = { time_ns, (uint32_t)a->pid, (uint32_t)tid, stack, weight, state, syscall };
	if (a->w && trace_writer_sample(a->w, &s) < 0)
		a->write_failed = 1;
	a->samples++;
	a->weight += weight;
}

/* argv of the process as one line (NULs to spaces), or its name in brackets when it has none. */
static void command_of(pid_t pid, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	ssize_t n = read_proc_file(path, buf, size);
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (ssize_t i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	if (n > 0) {
		buf[n] = 0;
		return;
	}
	char comm[64] = "";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	if (read_proc_file(path, comm, sizeof comm) > 0)
		comm[strcspn(comm, "\n")] = 0;
	snprintf(buf, size, "[%s]", comm);
}

static void write_process(struct attach *a, uint32_t kind, uint64_t time_ns)
{
	char exe[PATH_MAX] = "", link[64], cmd[4096];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)a->pid);
	ssize_t n = readlink(link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	command_of(a->pid, cmd, sizeof cmd);
	char buf[1024];
	unsigned ppid = 0;
	snprintf(link, sizeof link, "/proc/%d/stat", (int)a->pid);
	if (read_proc_file(link, buf, sizeof buf) > 0) {
		const char *fields = proc_stat_fields(buf);
		if (fields)
			sscanf(fields, "%*c %u", &ppid);
	}
	struct trace_process pr = { (uint32_t)a->pid, ppid, time_ns, kind, 0, exe, cmd, 0, "" };
	if (a->w && trace_writer_process(a->w, &pr) < 0)
		a->write_failed = 1;
}

void attach_exec(struct attach *a, uint64_t time_ns)
{
	remote_modules_forget(a->rm, a->w, time_ns);
	remote_modules_scan(a->rm, a->w, time_ns);
	write_process(a, TRACE_PROCESS_EXECED, time_ns);
}

static void write_meta(struct attach *a, uint64_t start_real, uint64_t start_mono)
{
	const struct collect_options *o = a->o;
	char buf[4096];
	command_of(a->pid, buf, sizeof buf);
	trace_writer_meta(a->w, TRACE_META_COMMAND, buf);
	trace_writer_meta(a->w, TRACE_META_MODE, o->wall ? "wall" : "cpu");
	trace_writer_meta(a->w, TRACE_META_ATTACHED, "1");
	trace_writer_meta(a->w, TRACE_META_FOLLOW, "0");
	trace_writer_meta(a->w, TRACE_META_SOURCE, a->kernel_time ? "perf-task-clock-attached" : "perf-task-clock-attached-user");
	meta_number(a->w, TRACE_META_INTERVAL_NS, o->interval_ns);
	if (o->duration_ns)
		meta_number(a->w, TRACE_META_DURATION_NS, o->duration_ns);
	if (o->delay_ns)
		meta_number(a->w, TRACE_META_DELAY_NS, o->delay_ns);
	meta_run(a->w, a->pid, start_real, start_mono, o->max_frames);
}

/* When the process started, on CLOCK_REALTIME (boot time plus its start in clock ticks); fallback when unknown. */
static uint64_t process_start_realtime(pid_t pid, uint64_t fallback)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	const char *fields = read_proc_file(path, buf, sizeof buf) > 0 ? proc_stat_fields(buf) : NULL;
	unsigned long long ticks = 0;
	/* starttime is field 22; fields are 3 on */
	if (!fields || sscanf(fields, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
			 &ticks) != 1)
		return fallback;
	FILE *f = fopen("/proc/stat", "re");
	unsigned long long btime = 0;
	char line[256];
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "btime %llu", &btime) == 1)
			break;
	if (f)
		fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	if (!btime || hz <= 0)
		return fallback;
	return btime * 1000000000ull + ticks * (1000000000ull / (unsigned long long)hz);
}

/* Why the process cannot be attached to, as one line; NULL when it can be tried. */
static const char *refusal(pid_t pid, char *buf, size_t size)
{
	if (pid == getpid())
		return "that is collect itself";
	char state = process_state(pid, NULL);
	if (!state) {
		snprintf(buf, size, "no such process");
		return buf;
	}
	if (state == 'Z' || state == 'X') {
		/* A leader that ended (pthread_exit in main) with threads running on is a zombie too. */
		char task[64];
		snprintf(task, sizeof task, "/proc/%d/task", (int)pid);
		DIR *d = opendir(task);
		int threads = 0;
		for (struct dirent *e; d && (e = readdir(d));)
			threads += e->d_name[0] != '.';
		if (d)
			closedir(d);
		if (threads <= 1)
			return "the process has ended (a zombie its parent has not reaped)";
	}
	char path[64], maps[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM))
		return NULL; /* perf_event_open says why, with the paranoid level */
	ssize_t n = fd >= 0 ? read(fd, maps, sizeof maps) : -1;
	if (fd >= 0)
		close(fd);
	if (n == 0)
		return "a kernel thread: it has no user space to profile";
	return NULL;
}

/* Wall mode reads blocked threads' stacks (/proc/PID/syscall, process_vm_readv): what ptrace's rules allow. */
static int wall_refusal(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	if (read_proc_file(path, buf, sizeof buf) >= 0 || (errno != EACCES && errno != EPERM))
		return 0;
	int err = errno, scope = -1;
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	char scope_text[64] = "";
	if (scope >= 0)
		snprintf(scope_text, sizeof scope_text, " (kernel.yama.ptrace_scope is %d)", scope);
	fprintf(stderr,
		"collect: -p %d -m wall: cannot read its blocked threads' stacks: %s: %s%s; run as root, or use -m cpu\n",
		(int)pid, path, strerror(err), scope_text);
	return -1;
}

/* The process ended: its status as a parent's wait would see it, from /proc while it is a zombie; -1: unknown. */
static int ended_status(pid_t pid)
{
	int code = -1;
	char state = process_state(pid, &code);
	return state == 'Z' || state == 'X' ? code : -1;
}

static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Sleep until the end of --delay (0) or a stop signal (-1). */
static int wait_delay(uint64_t delay_ns)
{
	struct timespec ts = { (time_t)(delay_ns / 1000000000u), (long)(delay_ns % 1000000000u) };
	while (!stop_signal && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return stop_signal ? -1 : 0;
}

/* Sample until the window ends; the process's wait status when it ended meanwhile, else -1. */
static int run(struct attach *a, int pidfd, uint64_t start)
{
	const struct collect_options *o = a->o;
	uint64_t end = o->duration_ns ? start + o->duration_ns : UINT64_MAX;
	uint64_t next_tick = start + o->interval_ns, next_flush = start + FLUSH_INTERVAL_NS;
	struct pollfd *pfd = calloc_or_abort((size_t)a->ncpu + 1, sizeof *pfd);
	int status = -1;
	for (;;) {
		uint64_t now = attach_now_ns();
		if (stop_signal || now >= end)
			break;
		uint64_t until = o->wall ? next_tick : now + CPU_POLL_NS;
		if (until > end)
			until = end;
		nfds_t n = 0;
		int polled[a->ncpu > 0 ? a->ncpu : 1];
		for (int c = 0; c < a->ncpu; c++)
			if (a->ring_fd[c] >= 0 && !a->ring_hup[c]) {
				polled[n] = c;
				pfd[n++] = (struct pollfd){ a->ring_fd[c], POLLIN, 0 };
			}
		nfds_t rings = n;
		if (pidfd >= 0)
			pfd[n++] = (struct pollfd){ pidfd, POLLIN, 0 };
		uint64_t wait = until > now ? until - now : 0;
		struct timespec ts = { (time_t)(wait / 1000000000u), (long)(wait % 1000000000u) };
		int ready = ppoll(pfd, n, &ts, NULL);
		/* A ring whose event's thread ended (the leader's, with others running on) reports POLLHUP at
		 * once, forever: it is read at every turn, not polled. */
		for (nfds_t i = 0; ready > 0 && i < rings; i++)
			if (pfd[i].revents & POLLHUP)
				a->ring_hup[polled[i]] = 1;
		attach_perf_drain(a);
		if (a->rescan) {
			a->rescan = 0;
			remote_modules_scan(a->rm, a->w, attach_now_ns());
		}
		if (a->write_failed || remote_modules_write_failed(a->rm))
			break;
		now = attach_now_ns();
		if (ready > 0 && pidfd >= 0 && (pfd[n - 1].revents & (POLLIN | POLLHUP))) {
			status = ended_status(a->pid);
			if (status < 0)
				status = -2; /* ended, status unknown */
			break;
		}
		if (pidfd < 0) { /* before Linux 5.3: no pidfd, and kill(pid, 0) succeeds on a zombie */
			int code = -1;
			char state = process_state(a->pid, &code);
			if (!state || state == 'Z' || state == 'X') {
				status = state && code >= 0 ? code : -2;
				break;
			}
		}
		if (o->wall && now >= next_tick) {
			attach_wall_tick(a, now);
			next_tick += o->interval_ns;
			if (next_tick <= now) /* behind (a long drain): the off-CPU time is counted by the clock anyway */
				next_tick = now + o->interval_ns;
		}
		if (now >= next_flush) {
			if (a->w && trace_writer_flush(a->w) < 0)
				a->write_failed = 1;
			next_flush = now + FLUSH_INTERVAL_NS;
		}
	}
	free(pfd);
	return status;
}

/* Each thread still running: its AT_END record with the CPU time it used while collect watched. */
static void write_thread_ends(struct attach *a, uint64_t now)
{
	for (uint32_t i = 0; i < a->nthreads; i++) {
		struct attach_thread *t = &a->threads[i];
		if (!t->alive)
			continue;
		uint64_t runtime = offcpu_cpu_ns(&t->wall), counted = attach_perf_thread_ns(a, t);
		/* Its events' count where it has events of its own (exact), else its schedstat since first seen. */
		struct trace_thread rec = { (uint32_t)a->pid, (uint32_t)t->tid, now, TRACE_THREAD_AT_END, "",
					    counted	? counted
					    : runtime > t->runtime_at_start ? runtime - t->runtime_at_start
									    : 0 };
		if (runtime && a->w && trace_writer_thread(a->w, &rec) < 0)
			a->write_failed = 1;
		offcpu_end(&t->wall);
	}
}

/* Everything a's run holds: its events and rings, objects, tables, and the pidfd. */
static void attach_free(struct attach *a, int pidfd)
{
	attach_perf_close(a);
	for (uint32_t i = 0; i < a->nthreads; i++)
		offcpu_end(&a->threads[i].wall);
	if (pidfd >= 0)
		close(pidfd);
	remote_modules_free(a->rm);
	hashmap_free(&a->stack_index);
	free(a->stacks);
	free(a->frames);
	free(a->threads);
	free(a->stack_copy);
}

int attach_main(const struct collect_options *o)
{
	char why[128];
	const char *refused = refusal(o->pid, why, sizeof why);
	if (refused) {
		fprintf(stderr, "collect: -p %d: %s\n", (int)o->pid, refused);
		return 1;
	}
	if (o->wall && wall_refusal(o->pid) < 0)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal; /* no SA_RESTART: ppoll and the delay return at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();

	struct output out;
	int rc = output_open(&out, o->output);
	if (rc)
		return rc < 0 ? 1 : rc;
	if (o->delay_ns && wait_delay(o->delay_ns) < 0) {
		output_abandon(&out);
		return 0;
	}
	struct attach a;
	memset(&a, 0, sizeof a);
	a.o = o;
	a.pid = o->pid;
	a.rm = remote_modules_new(o->pid);
	a.stack_copy = malloc(OFFCPU_STACK_BYTES);
	a.random = attach_now_ns() | 1;
	hashmap_init(&a.stack_index, 1024);
	int pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
	if (!a.rm || !a.stack_copy || attach_perf_open(&a) < 0) {
		output_abandon(&out);
		attach_free(&a, pidfd);
		return 1;
	}
	uint64_t start_real, start_mono;
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		start_real = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		start_mono = attach_now_ns();
	}
	a.w = output_start_trace(&out, o->zstd_level);
	if (!a.w) {
		attach_free(&a, pidfd);
		return 1;
	}
	write_meta(&a, start_real, start_mono);
	write_process(&a, TRACE_PROCESS_EXECED, start_mono);
	if (remote_modules_scan(a.rm, a.w, start_mono) < 0)
		fprintf(stderr, "collect: -p %d: cannot read its maps (%s): its frames stay unnamed\n", (int)o->pid,
			strerror(errno));
	for (uint32_t i = 0; i < a.nthreads; i++) { /* their records, now that the trace has begun */
		struct attach_thread *t = &a.threads[i];
		if (!t->alive)
			continue; /* ended while the events were opened */
		attach_thread_start(&a, t, start_mono);
		/* What each ran and waited is counted from here, not from when its event was opened. */
		offcpu_end(&t->wall);
		offcpu_begin(&t->wall, a.pid, t->tid, start_mono);
		t->runtime_at_start = t->wall.last_runtime;
		/* Its own events counted while the others were opened: not the run's (wraps below 0, made up as
		 * they count on). */
		t->counted_ns -= attach_perf_thread_ns(&a, t);
	}
	if (!o->quiet)
		fprintf(stderr, "collect: attached to %d (%u threads)%s\n", (int)o->pid, a.nthreads,
			o->duration_ns ? "" : "; SIGINT (Ctrl-C) ends the profile");

	int status = run(&a, pidfd, start_mono);
	attach_perf_stop(&a);
	uint64_t now = attach_now_ns();
	if (status == -1)
		write_thread_ends(&a, now);
	attach_perf_close(&a);
	if (status != -1) {
		struct trace_process pr = { (uint32_t)a.pid, 0, now, TRACE_PROCESS_EXITED, status < 0 ? 0 : status, "", "",
					    status < 0 ? TRACE_PROCESS_STATUS_UNKNOWN : 0, "" };
		if (trace_writer_process(a.w, &pr) < 0)
			a.write_failed = 1;
	}
	if (a.exit_charged) {
		meta_number(a.w, TRACE_META_EXIT_CHARGED, a.exit_charged);
		meta_number(a.w, TRACE_META_EXIT_CHARGED_THREADS, a.exit_charged_threads);
	}
	char message[256];
	struct stat proc;
	char proc_path[64];
	snprintf(proc_path, sizeof proc_path, "/proc/%d", (int)a.pid);
	/* The JIT's map is the target's (its owner) and may have been written before the attach (since its start). */
	uid_t owner = stat(proc_path, &proc) == 0 ? proc.st_uid : geteuid();
	if (jitmap_copy(a.w, a.pid, owner, process_start_realtime(a.pid, start_real), now, message, sizeof message) < 0)
		a.write_failed = 1;
	else if (message[0] && !o->quiet)
		fprintf(stderr, "collect: %s\n", message);
	uint32_t flags = status == -1			      ? TRACE_END_DETACHED
			 : status == -2			      ? TRACE_END_STATUS_UNKNOWN
			 : WIFSIGNALED(status) ? TRACE_END_SIGNALED
							      : TRACE_END_EXITED;
	struct trace_end end = { now, status >= 0 ? status : 0, flags, a.samples, a.weight, a.lost, 0, 0, 0 };
	if (trace_writer_close(a.w, &end) < 0 && !a.write_failed) {
		fprintf(stderr, "collect: writing the trace failed: %s\n", strerror(errno));
		a.write_failed = 1;
	}
	if (a.write_failed)
		fprintf(stderr, "collect: the trace is incomplete\n");
	if (!o->quiet) {
		uint32_t known, untabled;
		remote_modules_counts(a.rm, &known, &untabled);
		fprintf(stderr, "collect: %s %d after %.2f s: %llu samples, %llu lost, %u threads, %u modules (%u without frame tables)\n",
			status == -1 ? "detached from" : "process ended:", (int)a.pid, (double)(now - start_mono) / 1e9,
			(unsigned long long)a.samples, (unsigned long long)a.lost, a.nthreads, known, untabled);
		if (a.other_process)
			fprintf(stderr, "collect: %llu samples of processes %d forked left out (this kernel has no inherit_thread)\n",
				(unsigned long long)a.other_process, (int)a.pid);
	}
	if (o->output && close(out.fd) < 0)
		fprintf(stderr, "collect: closing %s failed: %s\n", o->output, strerror(errno));
	attach_free(&a, pidfd);
	return a.write_failed ? 1 : 0;
}
