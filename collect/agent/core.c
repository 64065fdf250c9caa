/*
 * core.c - the agent's process-wide state, and the services of the core
 * that need nothing else: clocks, the calling thread's kernel id, closing a
 * descriptor of the agent's own (and reading a file of /proc/self/task
 * through one), whether the program took the sampling
 * signal, and the doorbell of the agent's background thread.
 *
 * The state is declared in agent.h and owned here: attach.c fills the
 * configuration (sampler_init the signal and source), the lifecycle the
 * flags; everyone reads it.
 */
#include "agent.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "futex.h"

struct transport agent_transport;
struct agent_config agent_config;
uint32_t agent_stream;
static struct agent_flags flags_before_start; /* all 0, until agent_start maps the page */
struct agent_flags *agent_flags = &flags_before_start;
AGENT_TLS __thread struct agent_thread agent_self = { .ring = AGENT_NO_RING };

/* The kernel's clock id of another thread's CPU time (MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)). */
#define THREAD_CPU_CLOCK(tid) ((clockid_t)((~(unsigned)(tid) << 3) | 6))

uint64_t agent_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t agent_thread_cpu_ns(uint32_t tid)
{
	struct timespec ts;
	if (clock_gettime(tid ? THREAD_CPU_CLOCK(tid) : CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t agent_gettid(void)
{
	if (!agent_self.tid)
		agent_self.tid = (uint32_t)syscall(SYS_gettid);
	return agent_self.tid;
}

int agent_close_own(int fd, const struct stat *opened)
{
	/* Between the open and this close the program (another thread) could have
	 * closed the number and got it back for a file of its own: then it is not ours. */
	struct stat now;
	if (fstat(fd, &now) < 0 || now.st_dev != opened->st_dev || now.st_ino != opened->st_ino)
		return -1;
	return (int)syscall(SYS_close, fd);
}

ssize_t agent_read_task_file(uint32_t tid, const char *file, char *buf, size_t size)
{
	/* Spelled out, not snprintf: the sampling handler reads these too (background.c). */
	char path[64] = "/proc/self/task/", digits[12];
	size_t at = strlen(path), n_digits = 0;
	do
		digits[n_digits++] = (char)('0' + tid % 10);
	while ((tid /= 10) && n_digits < sizeof digits);
	while (n_digits)
		path[at++] = digits[--n_digits];
	path[at++] = '/';
	for (; *file && at < sizeof path - 1; file++)
		path[at++] = *file;
	path[at] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	ssize_t n = -1;
	if (fstat(fd, &st) == 0) {
		n = read(fd, buf, size - 1);
		agent_close_own(fd, &st);
	} else {
		syscall(SYS_close, fd); /* the number is ours still: nothing ran between */
	}
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* ---- the sampling signal, once the program takes it ---- */

static _Atomic int signal_given_up;

int agent_signal_taken(void)
{
	return atomic_load(&signal_given_up);
}

int agent_signal_give_up(void)
{
	return !atomic_exchange(&signal_given_up, 1);
}

/* ---- the background thread's doorbell ---- */

static _Atomic uint32_t doorbell; /* futex word the background thread waits on: bumped by every ring */

void agent_wake_background(void)
{
	atomic_fetch_add(&doorbell, 1);
	futex_wake(&doorbell);
}

static _Atomic int descriptor_thread;

void agent_set_descriptor_thread(int on)
{
	atomic_store(&descriptor_thread, on);
}

int agent_descriptor_thread_serves(void)
{
	return atomic_load_explicit(&descriptor_thread, memory_order_acquire) && !agent_self.background;
}

void agent_background_sleep(uint64_t deadline)
{
	static uint32_t seen;
	uint32_t rung = atomic_load(&doorbell);
	if (rung != seen) {
		seen = rung;
		return;
	}
	futex_wait_until(&doorbell, rung, deadline);
	seen = atomic_load(&doorbell);
}
