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
#include "jitmap.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
 * every 10 ms while one fills faster. Each wake-up costs collect ~30 us. */
#define DRAIN_BUSY_MS 10
#define DRAIN_ALLOCS_BUSY_MS 2
#define DRAIN_IDLE_MS 50
#define FLUSH_INTERVAL_NS 100000000ull

static const char usage_text[] =
	"usage: collect [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM under the ipscope agent, sampling backtraces of every thread on\n"
	"its CPU-time clock, and write a zstd-compressed trace for `analyze`.\n"
	"\n"
	"  -o, --output FILE        write the trace to FILE (mode 0600; a device or FIFO\n"
	"                           such as /dev/stdout is written as a stream, never\n"
	"                           truncated or chmod'ed); default: stdout, which must\n"
	"                           not be a terminal\n"
	"  -i, --interval TIME      sampling interval of each thread's CPU time: 250us,\n"
	"                           1ms (default), 10ms; units ns, us, ms, s\n"
	"  -m, --mode MODE          cpu (default); wall is not available yet\n"
	"      --allocs[=RATE]      record allocations too: every call of malloc, calloc,\n"
	"                           realloc, reallocarray, free, posix_memalign,\n"
	"                           aligned_alloc, memalign, valloc, pvalloc (and C++ new\n"
	"                           and delete through them) with its stack. RATE, a\n"
	"                           fraction in (0, 1] (default 1: every allocation,\n"
	"                           exact), records each allocation with that probability\n"
	"                           (uniform over allocations, not sizes)\n"
	"      --alloc-bytes=N      record allocations by bytes instead: each byte with\n"
	"                           probability 1/N (as tcmalloc and Go), so analyze can\n"
	"                           weigh each recorded allocation without size bias;\n"
	"                           N in bytes, or with KiB, MiB, GiB (e.g. 512KiB)\n"
	"      --no-cpu             no CPU samples (with --allocs or --alloc-bytes)\n"
	"      --source SOURCE      what times the samples: auto (default: perf when the\n"
	"                           kernel allows it, else timer), perf (user mode: a\n"
	"                           task-clock perf event per thread at the requested\n"
	"                           rate; system calls: CPU-time timer ticks) or timer\n"
	"                           (CPU-time timers only: fire on the scheduler tick,\n"
	"                           each sample weighted by 1 + overruns)\n"
	"      --signal N           the signal the agent samples with (default: the\n"
	"                           highest real-time signal PROGRAM leaves at its\n"
	"                           default). SIGPROF and ITIMER_PROF stay PROGRAM's.\n"
	"                           If PROGRAM installs a handler for it, sampling stops\n"
	"                           and collect says so: pick another with --signal\n"
	"      --max-frames N       deepest backtrace kept, 1..1024 (default 256)\n"
	"      --zstd-level N       compression level 1..19 (default 1)\n"
	"      --program-stdout FILE\n"
	"                           where PROGRAM's stdout goes. Default: unchanged with\n"
	"                           -o; when the trace goes to stdout, PROGRAM's stdout\n"
	"                           goes to collect's stderr so it cannot corrupt the trace\n"
	"  -q, --quiet              no summary on stderr\n"
	"  -h, --help               this text\n"
	"  -V, --version            print the version\n"
	"\n"
	"PROGRAM's stdin and stderr are untouched, and it inherits no descriptor of\n"
	"collect's. SIGINT, SIGQUIT, SIGTERM and SIGHUP sent to collect alone are\n"
	"passed on to PROGRAM (sent to the process group, PROGRAM has them already).\n"
	"Threads: any number up to 16384 at once (the shared memory grows with them);\n"
	"samples of threads beyond that, or beyond what memory allows, are counted lost.\n"
	"collect exits with PROGRAM's exit status, or 128+N when it died from signal N;\n"
	"126/127 when it cannot be run.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "collect: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'collect --help'.\n");
	return 2;
}

/* "250us" -> 250000; 0 when malformed or out of range. */
static uint64_t parse_interval(const char *text)
{
	char *end;
	errno = 0;
	double value = strtod(text, &end);
	if (errno || end == text || value <= 0)
		return 0;
	double scale;
	if (!strcmp(end, "ns"))
		scale = 1;
	else if (!strcmp(end, "us"))
		scale = 1e3;
	else if (!strcmp(end, "ms"))
		scale = 1e6;
	else if (!strcmp(end, "s"))
		scale = 1e9;
	else
		return 0;
	double ns = value * scale;
	/* Below ~100 us the signal and unwind cost per sample is the whole period. */
	if (ns < 100000 || ns > 10e9)
		return 0;
	return (uint64_t)ns;
}

/* "512KiB" -> 524288; 0 when malformed, 0 or above 2^40. */
static uint64_t parse_bytes(const char *text)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text || *text == '-')
		return 0;
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = { { "", 0 }, { "B", 0 }, { "k", 10 }, { "K", 10 }, { "KiB", 10 }, { "KB", 10 }, { "M", 20 },
		      { "MiB", 20 }, { "MB", 20 }, { "G", 30 }, { "GiB", 30 }, { "GB", 30 } };
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (!strcmp(end, units[i].suffix))
			return v && v <= (1ull << 40) >> units[i].shift ? (uint64_t)v << units[i].shift : 0;
	return 0;
}

/* A fraction in (0, 1]; -1 when malformed or out of range. */
static double parse_rate(const char *text)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || *end || !(v > 0) || v > 1)
		return -1;
	return v;
}

static int parse_int(const char *text, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || end == text || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* How the user spelled the option getopt stopped at: "-o", "--max-frames". */
static const char *option_name(const struct option *longopts, int opt, const char *arg)
{
	static char name[64];
	if (arg && !strncmp(arg, "--", 2)) /* as typed, without "=value" */
		snprintf(name, sizeof name, "%.*s", (int)strcspn(arg, "="), arg);
	else if (opt > 0 && opt < 256)
		snprintf(name, sizeof name, "-%c", opt);
	else
		snprintf(name, sizeof name, "%s", "?");
	for (const struct option *lo = longopts; !strcmp(name, "?") && lo->name; lo++)
		if (lo->val == opt)
			snprintf(name, sizeof name, "--%s", lo->name);
	return name;
}

/* Returns -1 to go on, or the exit status for --help, --version and usage errors. */
static int parse_options(int argc, char **argv, struct collect_options *o)
{
	enum { OPT_MAX_FRAMES = 256, OPT_ZSTD_LEVEL, OPT_PROGRAM_STDOUT, OPT_SOURCE, OPT_SIGNAL, OPT_ALLOCS,
	       OPT_ALLOC_BYTES, OPT_NO_CPU };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "allocs", optional_argument, NULL, OPT_ALLOCS },
		{ "alloc-bytes", required_argument, NULL, OPT_ALLOC_BYTES },
		{ "no-cpu", no_argument, NULL, OPT_NO_CPU },
		{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "signal", required_argument, NULL, OPT_SIGNAL },
		{ "zstd-level", required_argument, NULL, OPT_ZSTD_LEVEL },
		{ "program-stdout", required_argument, NULL, OPT_PROGRAM_STDOUT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c;
	o->interval_ns = 1000000;
	o->max_frames = 256;
	o->zstd_level = 1;
	o->cpu = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:i:m:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->output = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'i':
			if (!(o->interval_ns = parse_interval(optarg)))
				return usage_error("bad interval '%s': use e.g. 250us, 1ms or 10ms (100us..10s)",
						   optarg);
			break;
		case 'm':
			if (!strcmp(optarg, "wall"))
				return usage_error("--mode %s is not supported yet; only cpu is", optarg);
			if (strcmp(optarg, "cpu"))
				return usage_error("unknown mode '%s' (cpu)", optarg);
			break;
		case OPT_ALLOCS:
			o->allocs = 1;
			o->alloc_rate = 1;
			o->alloc_rate_text = optarg ? optarg : "1";
			if (optarg && (o->alloc_rate = parse_rate(optarg)) < 0)
				return usage_error("bad --allocs '%s': RATE is the fraction of allocations recorded, "
						   "in (0, 1], e.g. --allocs=0.01", optarg);
			o->alloc_scheme = o->alloc_rate < 1 ? TRANSPORT_ALLOC_RATE : TRANSPORT_ALLOC_ALL;
			break;
		case OPT_ALLOC_BYTES:
			o->allocs = 1;
			o->alloc_scheme = TRANSPORT_ALLOC_BYTES;
			if (!(o->alloc_mean_bytes = parse_bytes(optarg)))
				return usage_error("bad --alloc-bytes '%s': N is the mean bytes between recorded "
						   "bytes, 1..1TiB, e.g. 512KiB", optarg);
			break;
		case OPT_NO_CPU:
			o->cpu = 0;
			break;
		case OPT_MAX_FRAMES:
			if (parse_int(optarg, 1, 1024, &v) < 0)
				return usage_error("bad --max-frames '%s' (1..1024)", optarg);
			o->max_frames = (uint32_t)v;
			break;
		case OPT_SOURCE:
			if (!strcmp(optarg, "auto"))
				o->source = TRANSPORT_SOURCE_NONE;
			else if (!strcmp(optarg, "perf"))
				o->source = TRANSPORT_SOURCE_PERF;
			else if (!strcmp(optarg, "timer"))
				o->source = TRANSPORT_SOURCE_TIMER;
			else
				return usage_error("unknown --source '%s' (auto, perf, timer)", optarg);
			break;
		case OPT_SIGNAL:
			if (parse_int(optarg, 1, SIGRTMAX, &v) < 0 || v == SIGKILL || v == SIGSTOP)
				return usage_error("bad --signal '%s' (a signal number, e.g. SIGRTMIN..SIGRTMAX)",
						   optarg);
			o->signal = (int)v;
			break;
		case OPT_ZSTD_LEVEL:
			if (parse_int(optarg, 1, 19, &v) < 0)
				return usage_error("bad --zstd-level '%s' (1..19)", optarg);
			o->zstd_level = (int)v;
			break;
		case OPT_PROGRAM_STDOUT:
			o->program_stdout = optarg;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("collect (ipscope) %s, revision %s\n", IPSCOPE_VERSION, IPSCOPE_REVISION);
			return 0;
		case ':':
			return usage_error("option '%s' needs an argument", option_name(longopts, optopt, argv[optind - 1]));
		default:
			return usage_error("unknown option '%s'", option_name(longopts, optopt, argv[optind - 1]));
		}
	}
	if (!o->cpu && !o->allocs)
		return usage_error("%s", "--no-cpu leaves nothing to record: add --allocs or --alloc-bytes");
	if (optind >= argc)
		return usage_error("%s", "no program to run");
	o->argv = argv + optind;
	return -1;
}

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

static void write_meta(struct trace_writer *w, const struct collect_options *o, pid_t pid,
		       uint64_t start_real, uint64_t start_mono)
{
	char buf[64];
	char *cmd = command_line(o->argv);
	trace_writer_meta(w, TRACE_META_COMMAND, cmd);
	free(cmd);
	trace_writer_meta(w, TRACE_META_MODE, o->cpu && o->allocs ? "cpu,allocs" : o->allocs ? "allocs" : "cpu");
	if (o->cpu) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->interval_ns);
		trace_writer_meta(w, TRACE_META_INTERVAL_NS, buf);
	}
	if (o->allocs) {
		trace_writer_meta(w, TRACE_META_ALLOC_SCHEME, o->alloc_scheme == TRANSPORT_ALLOC_BYTES ? "bytes"
							     : o->alloc_scheme == TRANSPORT_ALLOC_RATE ? "rate"
												     : "all");
		if (o->alloc_scheme == TRANSPORT_ALLOC_RATE)
			snprintf(buf, sizeof buf, "%.17g", o->alloc_rate);
		else
			snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->alloc_mean_bytes);
		if (o->alloc_scheme != TRANSPORT_ALLOC_ALL)
			trace_writer_meta(w, o->alloc_scheme == TRANSPORT_ALLOC_RATE ? TRACE_META_ALLOC_RATE
										  : TRACE_META_ALLOC_MEAN_BYTES,
					  buf);
	}
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)start_real);
	trace_writer_meta(w, TRACE_META_START_REALTIME_NS, buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)start_mono);
	trace_writer_meta(w, TRACE_META_START_MONOTONIC_NS, buf);
	snprintf(buf, sizeof buf, "%d", (int)pid);
	trace_writer_meta(w, TRACE_META_PID, buf);
	snprintf(buf, sizeof buf, "%u", o->max_frames);
	trace_writer_meta(w, TRACE_META_MAX_FRAMES, buf);
	if (gethostname(buf, sizeof buf) == 0) {
		buf[sizeof buf - 1] = 0;
		trace_writer_meta(w, TRACE_META_HOSTNAME, buf);
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
	trace_writer_meta(w, TRACE_META_SOURCE, source_name(h->source));
	snprintf(buf, sizeof buf, "%u", h->signal);
	trace_writer_meta(w, TRACE_META_SIGNAL, buf);
}

/* Drain until the program ends; returns its wait status. *write_failed says whether the trace is whole. */
static int run_until_exit(struct launch *l, struct drain *d, struct trace_writer *w, int *write_failed,
			  int busy_ms)
{
	struct transport_header *h = l->transport.header;
	int status = 0, agent_meta_written = 0;
	uint64_t last_flush = clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		int done = launch_wait(l, drain_busy(d) ? busy_ms : DRAIN_IDLE_MS, &status);
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		atomic_store(&h->consumer_heartbeat_ns, now);
		if (!*write_failed && !agent_meta_written && atomic_load(&h->agent_state) == AGENT_RUNNING) {
			write_agent_meta(w, h);
			agent_meta_written = 1;
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
		if (done)
			return status;
	}
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
	else if (state == AGENT_FAILED)
		fprintf(stderr, "collect: the agent failed in %s: %.*s\n", program, (int)sizeof h->agent_error,
			h->agent_error);
	if (state == AGENT_RUNNING && o->allocs && atomic_load(&h->allocator_elsewhere) && t->heap.allocs < 100)
		fprintf(stderr, "collect: %s allocates with a malloc of its own (%.*s), which the profiler cannot "
				"interpose (a statically linked allocator such as jemalloc or mimalloc): %llu "
				"allocations were recorded, only those of libc's own\n",
			program, (int)sizeof h->agent_error, h->agent_error, (unsigned long long)t->heap.allocs);
	else if (state == AGENT_RUNNING && o->allocs && !t->heap.allocs)
		fprintf(stderr, "collect: no allocations were seen in %s: it allocates without the C library's "
				"malloc (a statically linked allocator such as jemalloc or mimalloc, as many Rust "
				"programs have, or its own), which the profiler cannot interpose\n", program);
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
	uint32_t ringless = atomic_load(&h->threads_without_ring);
	if (ringless)
		fprintf(stderr, "collect: %u threads ended without a buffer to write to (every ring was taken): "
				"they and their samples are missing\n", ringless);
	if (l->grow_errno)
		fprintf(stderr, "collect: the shared memory could not grow past %u threads (%s): samples of "
				"threads beyond that are counted lost\n", transport_nrings(&l->transport),
			strerror(l->grow_errno));
	/* Short threads end between samples: say how much of their time the samples miss. */
	uint64_t sampled = t->measured_weight * o->interval_ns;
	if (o->cpu && t->measured_cpu_ns && sampled < t->measured_cpu_ns &&
	    t->measured_cpu_ns - sampled > t->measured_cpu_ns / 10 &&
	    t->measured_cpu_ns - sampled > 20 * o->interval_ns)
		fprintf(stderr, "collect: the samples cover %.0f%% of the %.3f s of CPU time the threads used "
				"(short threads end between samples; a shorter -i covers more)\n",
			100.0 * (double)sampled / (double)t->measured_cpu_ns, (double)t->measured_cpu_ns / 1e9);
}

static void summarize(const struct collect_options *o, const struct launch *l, const struct drain_totals *t,
		      const struct output *out)
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
	fprintf(stderr, "collect: %llu samples (%.3f s CPU) from %u threads, %llu lost, %s sampling; trace %s%s; "
			"collect itself used %.3f s CPU\n",
		(unsigned long long)t->samples, (double)t->weight * (double)o->interval_ns / 1e9, t->threads,
		(unsigned long long)t->lost, source_name(l->transport.header->source), where,
		o->output ? o->output : "", own);
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
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	struct output out;
	rc = output_open(&out, o.output);
	if (rc)
		return rc < 0 ? 1 : rc;
	forward_prepare();

	struct launch l;
	memset(&l, 0, sizeof l);
	if (launch_prepare(&l, &o) < 0 || probe_writer(o.zstd_level) < 0) {
		output_abandon(&out);
		return 1;
	}
	uint64_t start_real = clock_ns(CLOCK_REALTIME), start_mono = clock_ns(CLOCK_MONOTONIC);
	atomic_store(&l.transport.header->consumer_heartbeat_ns, start_mono);
	rc = launch_start(&l, &o, out.is_stdout);
	if (rc) {
		output_abandon(&out);
		return rc;
	}
	forward_start(l.pid);

	struct trace_writer *w = output_claim(&out) < 0 ? NULL : trace_writer_open(out.fd, o.zstd_level);
	if (!w)
		fprintf(stderr, "collect: cannot start the trace: %s; %s runs unprofiled\n", strerror(errno),
			o.argv[0]);
	else
		write_meta(w, &o, l.pid, start_real, start_mono);
	/* Even without a trace, the rings are emptied and the program's status is returned. */
	struct drain *d = drain_new(w, &l.transport, (uint32_t)l.pid);
	int write_failed = !w;
	/* Allocation events fill a ring in milliseconds: drain a busy one sooner. */
	int status = run_until_exit(&l, d, w, &write_failed, o.allocs ? DRAIN_ALLOCS_BUSY_MS : DRAIN_BUSY_MS);
	forward_stop();

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
		char jit_message[256];
		if (!write_failed &&
		    jitmap_copy(w, l.pid, getuid(), start_real, clock_ns(CLOCK_MONOTONIC), jit_message,
				sizeof jit_message) < 0)
			write_failed = 1;
		else if (jit_message[0])
			fprintf(stderr, "collect: warning: %s\n", jit_message);
		struct trace_end end = { clock_ns(CLOCK_MONOTONIC), status,
					 WIFSIGNALED(status) ? TRACE_END_SIGNALED : TRACE_END_EXITED,
					 t.samples, t.weight, t.lost, t.handler_ns, t.handler_calls };
		if (trace_writer_close(w, &end) < 0 && !write_failed) {
			fprintf(stderr, "collect: writing the trace failed: %s\n", strerror(errno));
			write_failed = 1;
		}
		if (write_failed)
			fprintf(stderr, "collect: the trace is incomplete\n");
		warn(&o, &l, &t, status);
		summarize(&o, &l, &t, &out);
	} else {
		/* The program ran unprofiled: the rings were emptied, nothing else to say but why. */
		warn(&o, &l, &t, status);
	}
	if (o.output && close(out.fd) < 0)
		fprintf(stderr, "collect: closing %s failed: %s\n", o.output, strerror(errno));
	drain_free(d);
	return code;
}
