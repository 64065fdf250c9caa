/*
 * background.c - the agent's background thread: wall mode's sampler (a tick
 * every interval, wall.c), and in both modes the thread that finds the
 * threads the agent did not start, unwinds the foreign ones and builds the
 * frame tables walks asked for. Its name, "ipscope-wall", is the one it had
 * when it served wall mode alone.
 *
 * It starts only once the program has a second thread: at the
 * program's first pthread_create or clone() (background_ensure), or at the
 * start when another library's constructor made one. A thread of the agent's own in a single-threaded program changes
 * what that program does: unshare(CLONE_NEWUSER) fails with EINVAL (it
 * wants one thread), /proc/self/task and "Threads:" count two, and glibc's
 * malloc leaves its single-thread paths for good (Lua's binary-trees spent
 * half as much again in _int_free). Until then the sampling handler does its
 * work (background_handler_duty): it builds the rows its walks asked for,
 * and every SCAN_INTERVAL_NS it looks for CPU time no known thread used (a
 * thread made by the clone system call itself) and adopts what it finds. The one thing it cannot do is
 * take a foreign thread's samples (a raw clone without TLS of its own): they
 * wait for an agent thread that is not there and are counted lost, until
 * the program starts a thread through pthread_create or clone.
 *
 * Wall mode waits the same way. This thread is its sampler, which signals
 * the running threads at every tick and reads the blocked ones from /proc;
 * until it starts, each thread is sampled on CPU by its CPU-time sources
 * (perf's task clock and its timer), as in cpu mode, and collect reads its
 * time off CPU from outside
 * (collect/wall_watch.c). When it starts, it makes every slot its own
 * (sampler_to_wall) before its first tick, while the thread that started it
 * waits, and counts itself in the header (wall_samplers): collect then
 * finds it by its name and leaves the process to it.
 *
 * Threads the agent did not start (made before it, by another library's
 * constructor, or with a raw clone()) are found by scanning /proc/self/task;
 * one whose TLS is its creator's is sampled through foreign.c, whose posted
 * samples this thread unwinds (it sleeps on the core's doorbell, which a
 * post rings, rather than for the whole interval). In wall mode it scans
 * every 100 ms and ticks every interval (wall.c). In cpu mode it runs for
 * the rest alone: it unwinds foreign threads, releases adopted threads that
 * are gone, and scans only when the process used CPU time no known thread
 * did (cpu_mode_check). The kernel's own tasks in the process (io_uring's
 * workers, "iou-wrk-N", which run a request's blocking part) are not the
 * program's threads and are left out: no signal reaches them, and wall mode
 * listed each as an unnamed thread always off CPU. It blocks every signal (a signal meant for the
 * program must never run the program's handler on it), is never sampled,
 * writes the samples it takes into its own ring (RING_AGENT_SAMPLER) and
 * adds its own CPU time to the header so the cost can be shown. It has a
 * descriptor table of its own, and opens what other threads need
 * (sources.c, rings.c), so that the agent's descriptors never take a number
 * the program is about to get.
 */
#include "sampling.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex.h"
#include "lifecycle.h"
#include "unwinding.h"

#define SCAN_INTERVAL_NS 100000000ull
#define BACKGROUND_STACK_BYTES (512u << 10)
#define UNKNOWN_CPU_NS 10000000ull /* cpu mode: CPU time no known thread used, before a scan */

static pthread_t thread;
static _Atomic int running, stopping;
static _Atomic int wall_sampler; /* wall mode: this thread samples the others (else their timers do) */
/* cpu mode, one thread so far: started at the program's second (background_ensure), its work done meanwhile
 * by the sampling handler (background_handler_duty, one handler at a time: duty_taken). */
static _Atomic int deferred, duty_taken;
static uint64_t duty_next_check, duty_unknown_seen;
/* Futex word: its descriptor table is set up (background_start waits for it: a thread the program starts
 * next must find it serving, or it would open its own descriptors after all). */
static _Atomic uint32_t table_ready;
static uint32_t background_tid;

/* The kernel's task flag of io_uring's worker threads (include/linux/sched.h). */
#define PF_IO_WORKER 0x00000010u

/* Kernel workers the scans found, not to be read again (a ring: more are read again, that is all). */
static uint32_t kernel_workers[64];
static uint32_t kernel_workers_next;

/* Whether tid is a task of the kernel's in this process (io_uring's workers), by its flags in stat.
 * Async-signal-safe (the sampling handler scans too): no stdio. */
static int kernel_worker(uint32_t tid)
{
	for (size_t i = 0; i < sizeof kernel_workers / sizeof *kernel_workers; i++)
		if (kernel_workers[i] == tid)
			return 1;
	char buf[512];
	if (agent_read_task_file(tid, "stat", buf, sizeof buf) <= 0)
		return 0;
	/* "tid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm may hold anything. */
	const char *at = strrchr(buf, ')');
	if (!at)
		return 0;
	for (int field = 0; field < 6; field++) { /* past ") state ppid pgrp session tty_nr tpgid" */
		while (*++at == ' ')
			;
		while (*at && *at != ' ')
			at++;
		if (!*at)
			return 0;
	}
	uint32_t flags = 0;
	while (*++at >= '0' && *at <= '9')
		flags = flags * 10 + (uint32_t)(*at - '0');
	if (!(flags & PF_IO_WORKER))
		return 0;
	kernel_workers[kernel_workers_next++ % (sizeof kernel_workers / sizeof *kernel_workers)] = tid;
	return 1;
}

/* Threads the agent did not start: adopt every tid of /proc/self/task it does not know; how many. */
int background_scan_threads(void)
{
	int adopted = 0;
	if (sandbox_any())
		return 0; /* a thread it finds may be under the program's seccomp filter: not adopted (sandbox.c) */
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	char buf[4096];
	long n;
	if (fstat(fd, &st) == 0)
		while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
			for (long at = 0; at < n;) {
				struct {
					uint64_t ino;
					int64_t off;
					unsigned short reclen;
					unsigned char type;
					char name[];
				} *e = (void *)(buf + at);
				uint32_t tid = 0;
				for (const char *d = e->name; *d >= '0' && *d <= '9'; d++)
					tid = tid * 10 + (uint32_t)(*d - '0');
				if (tid && tid != background_tid && !sampler_knows(tid) && !kernel_worker(tid) &&
				    sampler_adopt(tid) == 0)
					adopted++;
				at += e->reclen;
			}
	agent_close_own(fd, &st);
	return adopted;
}

/*
 * cpu mode: threads made since the start by a raw clone system call (the
 * clone() wrapper adopts the others at once) are found by a scan, but only
 * when the process used more CPU time than every known thread did: a scan
 * opens a descriptor, which the program would see for a moment, and a
 * thread that uses no CPU has nothing to sample in this mode. Adopted
 * threads that are gone are released (their timers deleted).
 */
static void cpu_mode_check(uint64_t *unknown_seen, int own)
{
	uint64_t process = 0;
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		process = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	/* own: the background thread's, which has no slot; a handler's thread has one */
	uint64_t known = sampler_accounted_cpu_ns() + (own ? agent_thread_cpu_ns(0) : 0);
	uint64_t unknown = process > known ? process - known : 0;
	if (unknown > *unknown_seen + UNKNOWN_CPU_NS) {
		background_scan_threads();
		known = sampler_accounted_cpu_ns() + (own ? agent_thread_cpu_ns(0) : 0);
		*unknown_seen = process > known ? process - known : 0;
	} else if (unknown < *unknown_seen) {
		*unknown_seen = unknown; /* since the last scan: it only grows while a thread is unknown */
	}
	sampler_reap_adopted();
}

static uint64_t next_after(uint64_t deadline, uint64_t now, uint32_t *ticks)
{
	*ticks = 1;
	while (deadline + agent_config.interval_ns <= now) {
		deadline += agent_config.interval_ns;
		++*ticks;
	}
	return deadline + agent_config.interval_ns;
}

static void *background_main(void *unused)
{
	(void)unused;
	agent_self.background = 1;
	agent_self.internal = 1; /* the agent's own thread: none of its allocations are the program's */
	agent_self.tid = 0;
	background_tid = agent_gettid();
	prctl(PR_SET_NAME, "ipscope-wall", 0, 0, 0); /* collect's wall_watch.c knows it by this name */
	if (agent_config.wall) {
		/* From here on this thread samples the others (the thread that started it waits below). */
		atomic_store(&wall_sampler, 1);
		sampler_to_wall();
		atomic_fetch_add(&agent_transport.header->wall_samplers, 1);
	}
	/* A descriptor table of its own: what it opens (perf events and shared memory for other threads,
	 * /proc files) never takes the number the program's next open() would get, nor shows in
	 * /proc/self/fd (sources.c). The copy holds the program's files open: emptied at once (a pipe's
	 * reader would wait for an EOF). */
	if (REAL(syscall)(SYS_close_range, ~0u, ~0u, 0u) == 0 && /* it can be emptied (Linux 5.9) */
	    REAL(syscall)(SYS_unshare, CLONE_FILES) == 0 && REAL(syscall)(SYS_close_range, 0u, ~0u, 0u) == 0)
		agent_set_descriptor_thread(1);
	atomic_store(&table_ready, 1);
	futex_wake(&table_ready);
	foreign_serviced(1);
	uint32_t ring = AGENT_NO_RING;
	/* The constructor scanned just before starting this thread (lifecycle.c). */
	uint64_t deadline = agent_now_ns() + (agent_config.wall ? agent_config.interval_ns : SCAN_INTERVAL_NS);
	uint64_t last_scan = agent_now_ns(), cpu_seen = 0, unknown_seen = 0;
	uint32_t ticks = 0, was_on = 0;
	while (!atomic_load(&stopping)) {
		agent_background_sleep(deadline); /* or until rung: a foreign thread posted, rows are wanted */
		source_serve_requests(); /* perf events new threads wait for */
		agent_map_asked_chunks(); /* the rings new threads look for */
		foreign_service(&ring);
		modules_build_tables(); /* the frame tables walks met unbuilt since */
		uint64_t now = agent_now_ns();
		if (now < deadline)
			continue;
		uint32_t weight;
		if (!agent_config.wall) {
			deadline = now + SCAN_INTERVAL_NS;
			if (agent_flags->enabled && !agent_signal_taken())
				cpu_mode_check(&unknown_seen, 1);
			continue;
		}
		deadline = next_after(deadline, now, &weight);
		if (!agent_flags->enabled || agent_signal_taken())
			continue;
		if (!agent_sampling_on()) {
			was_on = 0;
			continue;
		}
		if (!was_on) {
			weight = 1; /* paused until now: the time before is not the run's */
			was_on = 1;
		}
		if (ring == AGENT_NO_RING && (ring = agent_thread_ring()) == AGENT_NO_RING) {
			atomic_fetch_add(&agent_transport.header->lost_no_ring, 1);
			continue;
		}
		if (now - last_scan >= SCAN_INTERVAL_NS) {
			background_scan_threads();
			last_scan = now;
		}
		uint32_t high = sampler_slots_high();
		for (uint32_t i = 0; i < high && !atomic_load(&stopping); i++)
			wall_tick(ring, i, now, weight);
		/* Its own CPU time is the agent's cost in this mode: shown by analyze info. */
		if (++ticks % 64 == 0) {
			uint64_t cpu = agent_thread_cpu_ns(0);
			atomic_fetch_add(&agent_transport.header->sampler_cpu_ns, cpu - cpu_seen);
			cpu_seen = cpu;
		}
	}
	wall_finish(ring);
	agent_set_descriptor_thread(0);
	source_serve_requests(); /* asked before the line above: answered, not left to time out */
	agent_map_asked_chunks();
	foreign_serviced(0);
	foreign_service(&ring); /* a post that came meanwhile */
	uint64_t cpu = agent_thread_cpu_ns(0);
	atomic_fetch_add(&agent_transport.header->sampler_cpu_ns, cpu - cpu_seen);
	atomic_store(&running, 0);
	return NULL;
}

int background_start(void)
{
	if (atomic_load(&running))
		return 0;
	/* It starts with every signal blocked: none of the program's may run on it. */
	sigset_t all, old;
	sigfillset(&all);
	REAL(syscall)(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
	atomic_store(&stopping, 0);
	atomic_store(&running, 1);
	atomic_store(&table_ready, 0);
	agent_self.internal++; /* the loader's allocations for its TLS are not the program's */
	/* A stack of its own size, not the default (RLIMIT_STACK, 8 MiB): address space a program under
	 * ulimit -v would miss. Its deepest work is an unwind, a few KiB. */
	pthread_attr_t attr;
	int have_attr = pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, BACKGROUND_STACK_BYTES) == 0;
	int rc = REAL(pthread_create)(&thread, have_attr ? &attr : NULL, background_main, NULL);
	if (have_attr)
		pthread_attr_destroy(&attr);
	agent_self.internal--;
	REAL(syscall)(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
	if (rc) {
		atomic_store(&running, 0);
		if (agent_config.wall && agent_transport.header->pid == (uint32_t)getpid())
			strcpy(agent_transport.header->agent_error, "cannot start the wall-mode sampler thread");
		return -1;
	}
	pthread_detach(thread);
	for (uint64_t give_up = agent_now_ns() + 50000000ull; !atomic_load(&table_ready) && agent_now_ns() < give_up;)
		futex_wait_until(&table_ready, 0, give_up);
	return 0;
}

/*
 * At the start of an image or a fork child: the thread starts when the
 * program has a second thread, now if it has one already (others: the
 * threads the start's scan adopted).
 */
int background_start_when_needed(int others)
{
	if (others)
		return background_start();
	atomic_store(&deferred, 1);
	return 0;
}

void background_ensure(void)
{
	if (atomic_load_explicit(&deferred, memory_order_relaxed) && atomic_exchange(&deferred, 0) &&
	    agent_flags->enabled && !sandbox_any())
		background_start();
}

void background_handler_duty(void)
{
	if (!atomic_load_explicit(&deferred, memory_order_relaxed) || atomic_exchange(&duty_taken, 1))
		return;
	modules_build_tables_if_free();
	uint64_t now = agent_now_ns();
	if (now >= duty_next_check && agent_flags->enabled && !agent_signal_taken()) {
		duty_next_check = now + SCAN_INTERVAL_NS;
		cpu_mode_check(&duty_unknown_seen, 0);
	}
	atomic_store(&duty_taken, 0);
}

/* Stop it and wait (briefly) for its last samples: at exit they would be lost. */
void background_stop(void)
{
	atomic_store(&stopping, 1);
	if (agent_self.background)
		return;
	/* In CPU mode it sleeps until its next scan, 100 ms away: woken, it ends at once. Left to wake by
	 * itself, every program's exit waited for it in 200 us naps (bench/README.md). */
	agent_wake_background();
	for (uint64_t give_up = agent_now_ns() + 50000000ull; atomic_load(&running) && agent_now_ns() < give_up;) {
		struct timespec ts = { 0, 200000 };
		REAL(syscall)(SYS_nanosleep, &ts, NULL);
	}
}

int background_wall_sampler(void)
{
	return atomic_load(&wall_sampler); /* sequentially consistent: start_sources relies on it */
}

void background_forget(void)
{
	/* The background thread did not survive the fork. */
	atomic_store(&running, 0);
	atomic_store(&wall_sampler, 0);
	atomic_store(&stopping, 0);
	atomic_store(&deferred, 0);
	atomic_store(&duty_taken, 0);
	agent_set_descriptor_thread(0);
	duty_next_check = duty_unknown_seen = 0;
	background_tid = 0;
}
