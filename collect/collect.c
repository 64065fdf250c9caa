/*
 * collect.c - `collect [options] PROGRAM [ARGS...]`: run a program under the
 * ipscope agent and write its trace.
 *
 * collect itself does the costly work the agent must not: it drains the
 * shared rings every 10 to 50 ms, merges stacks, compresses, and flushes
 * the trace at least every 100 ms so a cut-off file is still readable.
 *
 * The program must see the descriptors collect was given, closed ones
 * included: a closed 0, 1 or 2 is held by a close-on-exec /dev/null while
 * collect runs, so nothing collect opens lands there and the exec closes it
 * again.
 */
#include "collect.h"

#include "alloc.h"
#include "ipscope_revision.h"
#include "jitmap_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A ring holds 256 KiB, seconds of a busy thread's samples: drain every 50 ms,
 * every 10 ms while one fills faster. Each wake-up costs collect CPU time
 * (bench/README.md, "collect"). */
#define DRAIN_BUSY_MS 10
#define DRAIN_ALLOCS_BUSY_MS 2
#define DRAIN_IDLE_MS 50
#define FLUSH_INTERVAL_NS 100000000ull
/* How often rings of threads that died without handing them back are looked for. */
#define DEAD_RING_CHECK_NS 500000000ull
#define DEAD_RING_RECHECK_NS 5000000ull /* when rings are wanted: not more often (a check is a tgkill per ring) */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* argv as one line a shell would accept. */
static char *command_line(char **argv)
{
	size_t size = 1;
	for (char **a = argv; *a; a++)
		size += 4 * strlen(*a) + 3;
	char *out = realloc_or_abort(NULL, size), *p = out;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			*p++ = ' ';
		int plain = **a && strspn(*a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					      "0123456789-_./=:,+@%") == strlen(*a);
		if (plain) {
			p = stpcpy(p, *a);
			continue;
		}
		*p++ = '\'';
		for (const char *s = *a; *s; s++)
			p = *s == '\'' ? stpcpy(p, "'\\''") : (*p++ = *s, p);
		*p++ = '\'';
	}
	*p = 0;
	return out;
}

/* The perf maps JIT runtimes wrote (/tmp/perf-PID.map) of every process of the tree (node started by a
 * shell, a test runner's children), warnings on stderr; -1 when the trace cannot be written. */
static int copy_jit_maps(struct trace_writer *w, const struct launch *l, const struct procs *ps,
			 uint64_t start_real)
{
	uint32_t cap = procs_count(ps) + 1, n;
	pid_t *pids = calloc_or_abort(cap, sizeof *pids);
	n = procs_pids(ps, pids, cap);
	int first_known = 0;
	for (uint32_t i = 0; i < n; i++)
		first_known |= pids[i] == l->pid;
	if (!first_known)
		pids[n++] = l->pid; /* the program itself, even when its agent never attached */
	int rc = 0;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		char message[256] = "";
		rc = jitmap_copy(w, pids[i], getuid(), start_real, clock_ns(CLOCK_MONOTONIC), message, sizeof message);
		if (rc == 0 && message[0])
			fprintf(stderr, "collect: warning: %s\n", message);
	}
	free(pids);
	return rc;
}

/* A META entry of a text field of the header the agents write (not NUL-terminated when full). */
static void meta_field(struct trace_writer *w, const char *key, const char *field, size_t size)
{
	char text[256];
	snprintf(text, sizeof text, "%.*s", (int)(size < sizeof text ? size : sizeof text - 1), field);
	trace_writer_meta(w, key, text);
}

void meta_number(struct trace_writer *w, const char *key, uint64_t value)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)value);
	trace_writer_meta(w, key, buf);
}

static void write_meta(struct trace_writer *w, const struct collect_options *o, pid_t pid,
		       uint64_t start_real, uint64_t start_mono)
{
	char buf[64];
	char *cmd = command_line(o->argv);
	trace_writer_meta(w, TRACE_META_COMMAND, cmd);
	free(cmd);
	/* What was sampled (cpu or wall, none with --no-cpu) and whether allocations were recorded. */
	const char *sampled = !o->cpu ? "" : o->wall ? "wall" : "cpu";
	char mode[32];
	snprintf(mode, sizeof mode, "%s%s%s", sampled, *sampled && o->allocs ? "," : "", o->allocs ? "allocs" : "");
	trace_writer_meta(w, TRACE_META_MODE, mode);
	trace_writer_meta(w, TRACE_META_FOLLOW, o->follow ? "1" : "0");
	if (o->paused || o->delay_ns)
		trace_writer_meta(w, TRACE_META_PAUSED, "1");
	if (o->delay_ns) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->delay_ns);
		trace_writer_meta(w, TRACE_META_DELAY_NS, buf);
	}
	if (o->duration_ns) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->duration_ns);
		trace_writer_meta(w, TRACE_META_DURATION_NS, buf);
	}
	if (o->cpu) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->interval_ns);
		trace_writer_meta(w, TRACE_META_INTERVAL_NS, buf);
	}
	if (o->allocs) {
		trace_writer_meta(w, TRACE_META_ALLOC_SCHEME,
				  o->alloc_scheme == TRANSPORT_ALLOC_BYTES  ? TRACE_ALLOC_SCHEME_BYTES
				  : o->alloc_scheme == TRANSPORT_ALLOC_RATE ? TRACE_ALLOC_SCHEME_RATE
									    : TRACE_ALLOC_SCHEME_ALL);
		if (o->alloc_scheme == TRANSPORT_ALLOC_RATE)
			snprintf(buf, sizeof buf, "%.17g", o->alloc_rate);
		else
			snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->alloc_mean_bytes);
		if (o->alloc_scheme != TRANSPORT_ALLOC_ALL)
			trace_writer_meta(w, o->alloc_scheme == TRANSPORT_ALLOC_RATE ? TRACE_META_ALLOC_RATE
										  : TRACE_META_ALLOC_MEAN_BYTES,
					  buf);
	}
	meta_run(w, pid, start_real, start_mono, o->max_frames);
}

void meta_run(struct trace_writer *w, pid_t pid, uint64_t start_real, uint64_t start_mono, uint32_t max_frames)
{
	meta_number(w, TRACE_META_START_REALTIME_NS, start_real);
	meta_number(w, TRACE_META_START_MONOTONIC_NS, start_mono);
	meta_number(w, TRACE_META_PID, (uint64_t)pid);
	meta_number(w, TRACE_META_MAX_FRAMES, max_frames);
	char host[256];
	if (gethostname(host, sizeof host) == 0) {
		host[sizeof host - 1] = 0;
		trace_writer_meta(w, TRACE_META_HOSTNAME, host);
	}
	trace_writer_meta(w, TRACE_META_COLLECTOR, "ipscope " IPSCOPE_VERSION " " IPSCOPE_REVISION);
}

static const char *source_name(uint32_t source)
{
	return source == TRANSPORT_SOURCE_PERF	? "perf-task-clock+cpu-timer"
	       : source == TRANSPORT_SOURCE_TIMER ? "posix-cpu-timer"
						  : "none";
}

/* Hold closed standard descriptors with /dev/null (close-on-exec) while collect runs; see the top. */
static unsigned hold_closed_std_fds(void)
{
	unsigned closed = 0;
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			closed |= 1u << fd;
	for (int fd = 0; fd <= 2; fd++)
		if (closed & (1u << fd))
			open("/dev/null", O_RDWR | O_CLOEXEC); /* the lowest free number: fd */
	return closed;
}

static int exit_code(int status, const char *program)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		fprintf(stderr, "collect: %s was killed by signal %d (%s)%s\n", program, sig, strsignal(sig),
			WCOREDUMP(status) ? ", core dumped" : "");
		return 128 + sig;
	}
	return 1;
}

/* META records that wait for the agent: what it chose once it runs. */
static void write_agent_meta(struct trace_writer *w, const struct transport_header *h)
{
	char buf[16];
	/* Wall mode: the agent's sampler thread times every sample (and signals only running threads). */
	trace_writer_meta(w, TRACE_META_SOURCE, (h->mode & TRANSPORT_MODE_WALL) ? "wall-clock-sampler" : source_name(h->source));
	snprintf(buf, sizeof buf, "%u", h->signal);
	trace_writer_meta(w, TRACE_META_SIGNAL, buf);
}

/* The sampling schedule: --delay, --duration and SIGUSR2 toggles (the program's ipscope_start and
 * ipscope_stop write the same flag). paused: 0 on, 1 off, 2 stopped for good (--duration). */
struct schedule {
	uint64_t start_ns, resume_ns, stop_ns; /* 0: none */
};

static void schedule_tick(struct schedule *s, struct transport_header *h, uint64_t now, int toggles)
{
	if (s->resume_ns && now >= s->resume_ns) {
		uint32_t off = 1;
		atomic_compare_exchange_strong(&h->paused, &off, 0);
		s->resume_ns = 0;
	}
	if (s->stop_ns && now >= s->stop_ns) {
		atomic_store(&h->paused, 2);
		s->stop_ns = 0;
	}
	for (; toggles > 0; toggles--) {
		uint32_t was = atomic_load(&h->paused);
		if (was < 2)
			atomic_compare_exchange_strong(&h->paused, &was, was ^ 1);
		atomic_store(&h->ever_paused, 1);
		s->resume_ns = 0; /* the user took over */
	}
}

/* How long collect may wait before the schedule's next change (ms, at most max_ms). */
static int schedule_wait_ms(const struct schedule *s, uint64_t now, int max_ms)
{
	uint64_t next = s->resume_ns ? s->resume_ns : s->stop_ns;
	if (!next)
		return max_ms;
	uint64_t ms = next > now ? (next - now + 999999) / 1000000 : 0;
	return ms < (uint64_t)max_ms ? (int)ms : max_ms;
}

struct reaped_ctx {
	struct procs *procs;
	struct trace_writer *w;
	const int *write_failed;
};

static void on_reaped(void *ctx, pid_t pid, int status)
{
	struct reaped_ctx *r = ctx;
	procs_reaped(r->procs, *r->write_failed ? NULL : r->w, pid, status, clock_ns(CLOCK_MONOTONIC));
}

/*
 * Drain until the program ends and, following the tree, until every process
 * of it has (collect is their subreaper); returns the program's wait status.
 * *write_failed says whether the trace is whole; busy_ms: how soon a busy ring is drained again.
 */
static int run_until_exit(const struct collect_options *o, struct launch *l, struct drain *d, struct procs *ps,
			  struct trace_writer *w, int *write_failed, int busy_ms, uint64_t start_mono)
{
	struct transport_header *h = l->transport.header;
	int agent_meta_written = 0;
	uint64_t last_flush = clock_ns(CLOCK_MONOTONIC), last_check = last_flush;
	/* --delay and --duration count from the trace's start, when the program was started (the trace's
	 * start time), not from here: opening the output and writing its first records can take tens of
	 * milliseconds on a loaded machine, which the delay would otherwise add to. */
	struct schedule sched = { start_mono, o->delay_ns ? start_mono + o->delay_ns : 0,
				  o->duration_ns ? start_mono + o->delay_ns + o->duration_ns : 0 };
	struct reaped_ctx rc = { ps, w, write_failed };
	/* -m wall: the time off CPU of processes without an agent sampler thread is read from here, every interval. */
	struct wall_watch *ww = o->wall ? wall_watch_new(o) : NULL;
	uint64_t next_tick = last_flush;
	for (;;) {
		uint64_t before = clock_ns(CLOCK_MONOTONIC);
		int wait_ms = schedule_wait_ms(&sched, before, drain_busy(d) ? busy_ms : DRAIN_IDLE_MS);
		if (ww && wall_watch_watching(ww)) {
			int tick_ms = next_tick > before ? (int)((next_tick - before + 999999) / 1000000) : 0;
			wait_ms = tick_ms < wait_ms ? tick_ms : wait_ms;
		}
		int toggles = launch_wait(l, wait_ms, on_reaped, &rc);
		int done = l->ended && (!o->follow || forward_terminated() || !launch_children_left());
		if (l->ended)
			forward_detach(); /* the program's pid may be reused: signals are not passed on any more */
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		atomic_store(&h->consumer_heartbeat_ns, now);
		schedule_tick(&sched, h, now, toggles);
		if (ww && now >= next_tick) {
			wall_watch_tick(ww, d, ps, h, now);
			next_tick += o->interval_ns * wall_watch_stride(ww);
			if (next_tick <= now) /* behind: the time off CPU is counted by the clock anyway */
				next_tick = now + o->interval_ns;
		}
		if (!*write_failed && !agent_meta_written && atomic_load(&h->agent_state) == AGENT_RUNNING) {
			write_agent_meta(w, h);
			agent_meta_written = 1;
		}
		/* Rings of threads that ended without closing them (a process's last) are freed once closed
		 * and drained: at once when an agent found none free, else twice a second. */
		if (done || now - last_check >= (l->rings_wanted ? DEAD_RING_RECHECK_NS : DEAD_RING_CHECK_NS)) {
			drain_close_dead(d);
			last_check = now;
			l->rings_wanted = 0;
		}
		launch_grow(l);
		/* After a write error the rings are still emptied: the program must never wait on them. */
		int failed = (done ? drain_finish(d) : drain_all(d)) < 0;
		if (!failed && !done && now - last_flush >= FLUSH_INTERVAL_NS) {
			failed = trace_writer_flush(w) < 0;
			last_flush = now;
		}
		if (failed && !*write_failed) {
			fprintf(stderr, "collect: writing the trace failed: %s\n", strerror(errno));
			*write_failed = 1;
		}
		if (done) {
			wall_watch_free(ww);
			return l->status;
		}
	}
}

/* Text the agent wrote (the program can scribble on it: a path), fit for a terminal: bytes that are
 * not printable ASCII become '?'. */
static const char *printable(const char *text, size_t len, char *buf, size_t buflen)
{
	size_t n = 0;
	for (; n < len && n + 1 < buflen && text[n]; n++)
		buf[n] = text[n] >= 0x20 && text[n] < 0x7f ? text[n] : '?';
	buf[n] = 0;
	return buf;
}

/* What the summary warns about: anything that makes the profile less than the whole run. */
static void warn(const struct collect_options *o, const struct launch *l, const struct drain_totals *t,
		 int status)
{
	const char *program = o->argv[0];
	const struct transport_header *h = l->transport.header;
	uint32_t state = atomic_load(&h->agent_state), taken = atomic_load(&h->signal_taken);
	if (state == AGENT_NOT_STARTED && o->allocs)
		fprintf(stderr, "collect: the agent did not start in %s (statically linked or setuid, "
				"or /proc/%d/fd not readable?): no samples, and no allocations were recorded: "
				"LD_PRELOAD cannot interpose the allocator of a statically linked program\n",
			program, (int)getpid());
	else if (state == AGENT_NOT_STARTED)
		fprintf(stderr, "collect: the agent did not start in %s (statically linked or setuid, "
				"or /proc/%d/fd not readable?): no samples\n", program, (int)getpid());
	char error[sizeof h->agent_error + 1];
	printable(h->agent_error, sizeof h->agent_error, error, sizeof error);
	if (state == AGENT_FAILED)
		fprintf(stderr, "collect: the agent failed in %s: %s\n", program, error);
	if (state == AGENT_RUNNING && o->allocs && atomic_load(&h->allocator_elsewhere) && t->heap.allocs < 100)
		fprintf(stderr, "collect: %s allocates with a malloc of its own (%s), which the profiler cannot "
				"interpose (a statically linked allocator such as jemalloc or mimalloc): %llu "
				"allocations were recorded, only those of libc's own\n",
			program, error, (unsigned long long)t->heap.allocs);
	else if (state == AGENT_RUNNING && o->allocs && !t->heap.allocs)
		fprintf(stderr, "collect: no allocations were seen in %s: it allocates without the C library's "
				"malloc (a statically linked allocator such as jemalloc or mimalloc, as many Rust "
				"programs have, or its own), which the profiler cannot interpose\n", program);
	uint64_t unrecorded = atomic_load(&h->allocs_unrecorded);
	if (o->allocs && unrecorded)
		fprintf(stderr, "collect: %llu allocations (%llu bytes) were made before the profiler could start, on "
				"threads a library's constructor started: they are not recorded\n",
			(unsigned long long)unrecorded, (unsigned long long)atomic_load(&h->alloc_bytes_unrecorded));
	uint32_t deepbind = atomic_load(&h->deepbind_rebound);
	char text[sizeof h->agent_error + 1];
	if (o->allocs && deepbind)
		fprintf(stderr, "collect: %u %s loaded with RTLD_DEEPBIND (%s%s), which binds malloc to libc's past "
				"the profiler: what %s allocated later is recorded, not what %s constructors allocated "
				"inside dlopen\n",
			deepbind, deepbind > 1 ? "libraries were" : "library was",
			printable(h->deepbind_library, sizeof h->deepbind_library, text, sizeof text),
			deepbind > 1 ? " and others" : "", deepbind > 1 ? "they" : "it", deepbind > 1 ? "their" : "its");
	if (o->allocs && atomic_load(&h->allocator_api))
		fprintf(stderr, "collect: %s allocates through an allocator's own API (%s), which the profiler "
				"cannot see: only what it allocates through malloc and the rest of the C library's "
				"family is recorded\n",
			program, printable(h->allocator_api_text, sizeof h->allocator_api_text, text, sizeof text));
	if (atomic_load(&h->sandboxed))
		fprintf(stderr, "collect: %s installed a seccomp filter (%s): from there the profiler makes no system "
				"call where it applies, so the threads it starts are not sampled, the processes it "
				"forks or execs are not profiled, and the ends of its threads are not recorded\n",
			program, printable(h->sandbox_text, sizeof h->sandbox_text, text, sizeof text));
	uint64_t heap_lost = atomic_load(&h->alloc_events_lost);
	if (heap_lost)
		fprintf(stderr, "collect: %llu allocation events were lost (signal handlers nested in the "
				"profiler's allocation hooks, or collect stopped draining): allocation figures are "
				"not exact\n", (unsigned long long)heap_lost);
	if (taken)
		fprintf(stderr, "collect: %s installed its own handler for signal %u, the profiler's sampling "
				"signal: sampling stopped there (choose another with --signal)\n", program, taken);
	else if (state == AGENT_RUNNING && o->cpu && !t->samples && !WIFSIGNALED(status))
		fprintf(stderr, "collect: no samples: %s used (almost) no CPU time, or its threads block signal %u\n",
			program, h->signal);
	uint32_t fallback = atomic_load(&h->perf_fallback_threads);
	if (fallback)
		fprintf(stderr, "collect: %u threads could not map a perf event: CPU-time timers sampled them "
				"at the scheduler tick\n", fallback);
	uint64_t records_lost = atomic_load(&h->records_lost);
	if (records_lost)
		fprintf(stderr, "collect: %llu records of processes, modules or threads were lost (every buffer was "
				"taken for 1 s): processes may be shown as not profiled and samples as in no "
				"module\n", (unsigned long long)records_lost);
	uint32_t ringless = atomic_load(&h->threads_without_ring);
	if (ringless)
		fprintf(stderr, "collect: %u threads ended without a buffer to write to (every ring was taken): "
				"they and their samples are missing\n", ringless);
	if (l->grow_errno)
		fprintf(stderr, "collect: the shared memory could not grow past %u threads (%s): samples of "
				"threads beyond that are counted lost\n", transport_nrings(&l->transport),
			strerror(l->grow_errno));
	/* The samples miss much of the threads' CPU time: say how much, and why (coverage.h), naming
	 * short threads only for the time they account for. */
	const struct coverage *c = &t->coverage;
	uint64_t sampled = t->measured_weight * o->interval_ns;
	if (o->cpu && !o->wall && t->measured_cpu_ns && sampled < t->measured_cpu_ns && !atomic_load(&h->ever_paused) &&
	    t->measured_cpu_ns - sampled > t->measured_cpu_ns / 10 &&
	    t->measured_cpu_ns - sampled > 20 * o->interval_ns) {
		fprintf(stderr, "collect: the samples cover %.0f%% of the %.3f s of CPU time the threads used; missing:",
			100.0 * (double)sampled / (double)t->measured_cpu_ns, (double)t->measured_cpu_ns / 1e9);
		const char *sep = "";
		if (c->unsampled_threads) {
			fprintf(stderr, " %.3f s in %u threads that ended before their first sample",
				(double)c->unsampled_threads_ns / 1e9, c->unsampled_threads);
			sep = ";";
		}
		if (c->partial_ns) {
			fprintf(stderr, "%s %.3f s in the last partial interval of %u threads", sep, (double)c->partial_ns / 1e9,
				c->partial_threads);
			sep = ";";
		}
		if (c->unseen_ns)
			fprintf(stderr, "%s %.3f s beyond that, not sampled: %s", sep, (double)c->unseen_ns / 1e9,
				l->transport.header->source == TRANSPORT_SOURCE_PERF
					? "kernel time outside system calls (page faults, interrupts)"
					: "time between samples");
		/* A shorter interval helps only with what falls between samples. */
		fprintf(stderr, "%s\n", c->unsampled_threads_ns + c->partial_ns > c->unseen_ns ? " (a shorter -i covers more)" : "");
	}
}

static void summarize(const struct collect_options *o, const struct launch *l, const struct drain_totals *t,
		      const struct output *out, uint32_t processes)
{
	if (o->quiet)
		return;
	char where[64] = "on stdout";
	struct stat st;
	if (o->output && out->regular && fstat(out->fd, &st) == 0)
		snprintf(where, sizeof where, "%lld bytes in ", (long long)st.st_size);
	else if (o->output)
		snprintf(where, sizeof where, "written to ");
	struct rusage self;
	getrusage(RUSAGE_SELF, &self);
	double own = (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
		     (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec) / 1e6;
	char procs_text[32] = "";
	if (processes > 1)
		snprintf(procs_text, sizeof procs_text, " in %u processes", processes);
	fprintf(stderr, "collect: %llu samples (%.3f s %s) from %u threads%s, %llu lost, %s sampling; trace %s%s; "
			"collect itself used %.3f s CPU\n",
		(unsigned long long)t->samples, (double)t->weight * (double)o->interval_ns / 1e9,
		o->wall ? "wall" : "CPU", t->threads, procs_text, (unsigned long long)t->lost,
		o->wall ? "wall-clock" : source_name(l->transport.header->source), where, o->output ? o->output : "",
		own);
	if (o->allocs)
		fprintf(stderr, "collect: %llu allocations (%llu bytes) and %llu frees recorded\n",
			(unsigned long long)t->heap.allocs, (unsigned long long)t->heap.bytes,
			(unsigned long long)t->heap.frees);
}

/*
 * Whether a trace writer can work here at all (zstd allocates its workspace
 * at the first compression: under a small `ulimit -v` it cannot), tried on
 * /dev/null before the program starts, so collect refuses instead of
 * running the program unprofiled.
 */
static int probe_writer(int zstd_level)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	struct trace_writer *w = fd < 0 ? NULL : trace_writer_open(fd, zstd_level);
	int ok = w && trace_writer_meta(w, TRACE_META_MODE, "cpu") == 0 && trace_writer_flush(w) == 0;
	struct trace_end end;
	memset(&end, 0, sizeof end);
	if (w && trace_writer_close(w, &end) < 0)
		ok = 0;
	if (fd >= 0)
		close(fd);
	if (!ok && errno == EIO)
		fprintf(stderr, "collect: cannot start a trace: zstd failed (out of memory?)\n");
	else if (!ok)
		fprintf(stderr, "collect: cannot start a trace: %s\n", strerror(errno));
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct collect_options o;
	memset(&o, 0, sizeof o);
	o.closed_std = hold_closed_std_fds();
	int rc = collect_parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.pid)
		return attach_main(&o);
	struct output out;
	rc = output_open(&out, o.output);
	if (rc)
		return rc < 0 ? 1 : rc;
	forward_prepare();

	struct launch l;
	memset(&l, 0, sizeof l);
	/* A destination that takes no trace is refused before the program runs
	 * (output.c); over an existing file, the trace starts once it does. */
	struct trace_writer *w = NULL;
	if (launch_prepare(&l, &o) < 0 || probe_writer(o.zstd_level) < 0 ||
	    (output_starts_early(&out) && !(w = output_start_trace(&out, o.zstd_level)))) {
		output_abandon(&out);
		return 1;
	}
	uint64_t start_real = clock_ns(CLOCK_REALTIME), start_mono = clock_ns(CLOCK_MONOTONIC);
	atomic_store(&l.transport.header->consumer_heartbeat_ns, start_mono);
	forward_hold();
	rc = launch_start(&l, &o, out.is_stdout);
	if (rc) {
		/* A stream that has the header gets an end that says what collect
		 * exits with (a file collect created is removed anyway). */
		if (w) {
			struct trace_end end = {.time_ns = clock_ns(CLOCK_MONOTONIC), .wait_status = rc << 8,
						.flags = TRACE_END_EXITED};
			trace_writer_close(w, &end);
		}
		output_abandon(&out);
		return rc;
	}
	forward_start(l.pid);

	if (!w && !(w = output_start_trace(&out, o.zstd_level)))
		fprintf(stderr, "collect: %s runs unprofiled\n", o.argv[0]);
	if (w)
		write_meta(w, &o, l.pid, start_real, start_mono);
	/* Even without a trace, the rings are emptied and the program's status is returned. */
	struct procs *ps = procs_new(l.pid);
	struct drain *d = drain_new(w, &l.transport, ps);
	int write_failed = !w;
	/* Allocation events fill a ring in milliseconds: drain a busy one sooner. */
	int status = run_until_exit(&o, &l, d, ps, w, &write_failed, o.allocs ? DRAIN_ALLOCS_BUSY_MS : DRAIN_BUSY_MS,
				    start_mono);
	forward_stop();
	char first_path[PATH_MAX];
	int first_attached = atomic_load(&l.transport.header->agent_state) != AGENT_NOT_STARTED;
	procs_finish(ps, write_failed ? NULL : w, clock_ns(CLOCK_MONOTONIC),
		     first_attached ? NULL : launch_program_path(o.argv[0], first_path, sizeof first_path), 0);

	int code = exit_code(status, o.argv[0]);
	struct drain_totals t;
	drain_totals(d, &t);
	if (w) {
		uint32_t taken = atomic_load(&l.transport.header->signal_taken);
		if (taken) {
			char buf[16];
			snprintf(buf, sizeof buf, "%u", taken);
			trace_writer_meta(w, TRACE_META_SIGNAL_TAKEN, buf);
		}
		if (o.wall) {
			char buf[32];
			snprintf(buf, sizeof buf, "%llu", (unsigned long long)atomic_load(&l.transport.header->sampler_cpu_ns));
			trace_writer_meta(w, TRACE_META_SAMPLER_CPU_NS, buf);
		}
		const struct transport_header *h = l.transport.header;
		uint64_t records_lost = atomic_load(&h->records_lost);
		if (records_lost)
			meta_number(w, TRACE_META_RECORDS_LOST, records_lost);
		uint64_t unrecorded = atomic_load(&h->allocs_unrecorded);
		if (unrecorded) {
			meta_number(w, TRACE_META_ALLOCS_UNRECORDED, unrecorded);
			meta_number(w, TRACE_META_ALLOC_BYTES_UNRECORDED, atomic_load(&h->alloc_bytes_unrecorded));
		}
		uint64_t charged = atomic_load(&h->exit_charged);
		if (charged) {
			meta_number(w, TRACE_META_EXIT_CHARGED, charged);
			meta_number(w, TRACE_META_EXIT_CHARGED_THREADS, atomic_load(&h->exit_charged_threads));
		}
		if (atomic_load(&h->sandboxed))
			meta_field(w, TRACE_META_SECCOMP, h->sandbox_text, sizeof h->sandbox_text);
		if (atomic_load(&h->allocator_api))
			meta_field(w, TRACE_META_ALLOCATOR_API, h->allocator_api_text, sizeof h->allocator_api_text);
		uint32_t deepbind = atomic_load(&h->deepbind_rebound);
		if (deepbind) {
			meta_number(w, TRACE_META_DEEPBIND_LIBRARIES, deepbind);
			meta_field(w, TRACE_META_DEEPBIND_LIBRARY, h->deepbind_library, sizeof h->deepbind_library);
		}
		if (!write_failed && copy_jit_maps(w, &l, ps, start_real) < 0)
			write_failed = 1;
		struct trace_end end = { clock_ns(CLOCK_MONOTONIC), status,
					 WIFSIGNALED(status) ? TRACE_END_SIGNALED : TRACE_END_EXITED,
					 t.samples, t.weight, t.lost, t.handler_ns, t.handler_calls,
					 atomic_load(&l.transport.header->exited_unsampled) };
		if (trace_writer_close(w, &end) < 0 && !write_failed) {
			fprintf(stderr, "collect: writing the trace failed: %s\n", strerror(errno));
			write_failed = 1;
		}
		if (write_failed)
			fprintf(stderr, "collect: the trace is incomplete\n");
		warn(&o, &l, &t, status);
		summarize(&o, &l, &t, &out, procs_count(ps));
	} else {
		/* The program ran unprofiled: the rings were emptied, nothing else to say but why. */
		warn(&o, &l, &t, status);
	}
	if (o.output && close(out.fd) < 0)
		fprintf(stderr, "collect: closing %s failed: %s\n", o.output, strerror(errno));
	drain_free(d);
	procs_free(ps);
	return code;
}
