/*
 * collect.c - `collect [options] PROGRAM [ARGS...]`: run a program under the
 * ipscope agent and write its trace.
 *
 * collect itself does the costly work the agent must not: it drains the
 * shared rings every few milliseconds, merges stacks, compresses, and flushes
 * the trace at least every 100 ms so a cut-off file is still readable.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_INTERVAL_MS 10
#define FLUSH_INTERVAL_NS 100000000ull

static const char usage_text[] =
	"usage: collect [options] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM under the ipscope agent, sampling backtraces of every thread on\n"
	"its CPU-time clock, and write a zstd-compressed trace for `analyze`.\n"
	"\n"
	"  -o, --output FILE        write the trace to FILE (mode 0600); default: stdout,\n"
	"                           which must not be a terminal\n"
	"  -i, --interval TIME      sampling interval of each thread's CPU time: 250us,\n"
	"                           1ms (default), 10ms; units ns, us, ms, s\n"
	"  -m, --mode MODE          cpu (default); wall is not available yet\n"
	"      --source SOURCE      what times the samples: auto (default: perf when the\n"
	"                           kernel allows it, else timer), perf (a task-clock\n"
	"                           perf event per thread, at the requested rate) or timer\n"
	"                           (CPU-time timers: fire on the scheduler tick only,\n"
	"                           each sample weighted by 1 + overruns)\n"
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
	"PROGRAM's stdin and stderr are untouched. collect exits with PROGRAM's exit\n"
	"status, or 128+N when it died from signal N; 126/127 when it cannot be run.\n";

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

/* Returns -1 to go on, or the exit status for --help, --version and usage errors. */
static int parse_options(int argc, char **argv, struct collect_options *o)
{
	enum { OPT_MAX_FRAMES = 256, OPT_ZSTD_LEVEL, OPT_PROGRAM_STDOUT, OPT_SOURCE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
		{ "source", required_argument, NULL, OPT_SOURCE },
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
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:i:m:qhV", longopts, NULL)) != -1) {
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
		default:
			if (optopt && optopt < 256)
				return usage_error("unknown or incomplete option '-%c'",
						   (char[]){ (char)optopt, 0 });
			return usage_error("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
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
	trace_writer_meta(w, TRACE_META_MODE, "cpu");
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)o->interval_ns);
	trace_writer_meta(w, TRACE_META_INTERVAL_NS, buf);
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

/*
 * Open the trace file before the program runs, so an unwritable path fails
 * fast. It is truncated only once the program has started: on exec failure a
 * file collect created is removed and an existing one is left as it was.
 */
static int open_output(const char *path, int *created)
{
	*created = 0;
	if (!path)
		return STDOUT_FILENO;
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		*created = 1;
	else if (errno == EEXIST)
		fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, "collect: cannot write %s: %s\n", path, strerror(errno));
	return fd;
}

/* The program runs: empty the file and make it private (it holds the command line and addresses). */
static int claim_output(int fd, const char *path)
{
	if (!path)
		return 0;
	if (ftruncate(fd, 0) < 0 || fchmod(fd, 0600) < 0) {
		fprintf(stderr, "collect: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t program_pid;

/*
 * Termination requests for collect are meant for the program; collect then
 * finishes the trace. Ctrl-C and Ctrl-\ from the terminal already reach the
 * program (same process group), so only a SIGINT/SIGQUIT someone sent with
 * kill() is passed on.
 */
static void forward_signal(int sig, siginfo_t *si, void *unused)
{
	(void)unused;
	int from_terminal = (sig == SIGINT || sig == SIGQUIT) && si->si_code == SI_KERNEL;
	if (program_pid > 0 && !from_terminal)
		kill((pid_t)program_pid, sig);
}

static void forward_signals(void)
{
	static const int forwarded[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
		sigaction(forwarded[i], &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGPIPE, &sa, NULL);
}

/* Once the program is gone, collect can be interrupted like any program while it finishes. */
static void stop_forwarding(void)
{
	program_pid = 0;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

static const char *source_name(uint32_t source)
{
	return source == TRANSPORT_SOURCE_PERF	? "perf-task-clock"
	       : source == TRANSPORT_SOURCE_TIMER ? "posix-cpu-timer"
						  : "none";
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

/* Drain until the program ends; returns its wait status. *write_failed says whether the trace is whole. */
static int run_until_exit(struct launch *l, struct drain *d, struct trace_writer *w, int *write_failed)
{
	struct transport_header *h = l->transport.header;
	int status = 0, source_written = 0;
	uint64_t last_flush = clock_ns(CLOCK_MONOTONIC);
	for (;;) {
		int done = launch_wait(l, DRAIN_INTERVAL_MS, &status);
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		atomic_store(&h->consumer_heartbeat_ns, now);
		if (!*write_failed && !source_written && atomic_load(&h->agent_state) == AGENT_RUNNING) {
			trace_writer_meta(w, TRACE_META_SOURCE, source_name(h->source));
			source_written = 1;
		}
		/* After a write error the rings are still emptied: the program must never wait on them. */
		int failed = drain_all(d) < 0;
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

static void summarize(const struct collect_options *o, const struct launch *l, const struct drain *d,
		      int fd, int status)
{
	const char *program = o->argv[0];
	const struct transport_header *h = l->transport.header;
	uint64_t samples, weight, lost;
	uint32_t threads;
	drain_totals(d, &samples, &weight, &lost, &threads);
	uint32_t state = atomic_load(&l->transport.header->agent_state);
	if (state == AGENT_NOT_STARTED)
		fprintf(stderr, "collect: the agent did not start in %s (statically linked or setuid?): "
				"no samples\n", program);
	else if (state == AGENT_FAILED)
		fprintf(stderr, "collect: the agent failed in %s: %.*s\n", program, (int)sizeof h->agent_error,
			h->agent_error);
	else if (!samples && !WIFSIGNALED(status))
		fprintf(stderr, "collect: no samples: %s used (almost) no CPU time, or its threads block SIGPROF\n",
			program);
	if (o->quiet)
		return;
	struct stat st;
	char where[64] = "on stdout";
	if (o->output && fstat(fd, &st) == 0)
		snprintf(where, sizeof where, "%lld bytes in ", (long long)st.st_size);
	fprintf(stderr, "collect: %llu samples (%.3f s CPU) from %u threads, %llu lost, %s sampling; trace %s%s\n",
		(unsigned long long)samples, (double)weight * (double)o->interval_ns / 1e9, threads,
		(unsigned long long)lost, source_name(h->source), where, o->output ? o->output : "");
}

int main(int argc, char **argv)
{
	struct collect_options o;
	memset(&o, 0, sizeof o);
	int rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (!o.output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "collect: refusing to write a binary trace to a terminal: "
				"use -o FILE or redirect stdout\n");
		return 2;
	}
	int created;
	int fd = open_output(o.output, &created);
	if (fd < 0)
		return 1;

	struct launch l;
	memset(&l, 0, sizeof l);
	if (launch_prepare(&l, &o) < 0)
		return 1;
	uint64_t start_real = clock_ns(CLOCK_REALTIME), start_mono = clock_ns(CLOCK_MONOTONIC);
	atomic_store(&l.transport.header->consumer_heartbeat_ns, start_mono);
	rc = launch_start(&l, &o, o.output == NULL);
	if (rc) {
		if (created)
			unlink(o.output);
		return rc;
	}
	program_pid = l.pid;
	forward_signals();

	struct trace_writer *w = claim_output(fd, o.output) < 0 ? NULL : trace_writer_open(fd, o.zstd_level);
	if (!w)
		fprintf(stderr, "collect: cannot start the trace: %s; %s runs unprofiled\n", strerror(errno),
			o.argv[0]);
	else
		write_meta(w, &o, l.pid, start_real, start_mono);
	/* Even without a trace, the rings are emptied and the program's status is returned. */
	struct drain *d = drain_new(w, &l.transport, (uint32_t)l.pid);
	int write_failed = !w;
	int status = run_until_exit(&l, d, w, &write_failed);
	stop_forwarding();

	int code = exit_code(status, o.argv[0]);
	if (w) {
		uint64_t samples, weight, lost;
		uint32_t threads;
		drain_totals(d, &samples, &weight, &lost, &threads);
		char jit_message[256];
		if (!write_failed &&
		    jitmap_copy(w, l.pid, getuid(), start_real, clock_ns(CLOCK_MONOTONIC), jit_message,
				sizeof jit_message) < 0)
			write_failed = 1;
		else if (jit_message[0])
			fprintf(stderr, "collect: warning: %s\n", jit_message);
		struct trace_end end = { clock_ns(CLOCK_MONOTONIC), status,
					 WIFSIGNALED(status) ? TRACE_END_SIGNALED : TRACE_END_EXITED,
					 samples, weight, lost };
		if (trace_writer_close(w, &end) < 0 && !write_failed) {
			fprintf(stderr, "collect: writing the trace failed: %s\n", strerror(errno));
			write_failed = 1;
		}
		if (write_failed)
			fprintf(stderr, "collect: the trace is incomplete\n");
		summarize(&o, &l, d, fd, status);
	}
	if (o.output && close(fd) < 0)
		fprintf(stderr, "collect: closing %s failed: %s\n", o.output, strerror(errno));
	drain_free(d);
	return code;
}
