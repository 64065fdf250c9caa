/*
 * options.c - collect's command line: --help's text (the man page is made
 * from it), the option table and the parsing of durations, sizes, rates and
 * counts, each refused with a one-line message naming the option (exit 2).
 */
#include "collect.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipscope_revision.h"

static const char usage_text[] =
	"usage: collect [options] [--] PROGRAM [ARGS...]\n"
	"       collect -p PID [-m wall] [--duration TIME] [options]\n"
	"\n"
	"Profile PROGRAM and every process it starts into a trace for analyze. The\n"
	"ipscope agent samples backtraces of every thread on its CPU-time clock (or,\n"
	"with -m wall, at every interval of wall-clock time, running or blocked), and\n"
	"collect writes them as a zstd-compressed trace for `analyze`.\n"
	"\n"
	"  -p, --pid PID            profile the running process PID instead (every thread,\n"
	"                           those it starts later too) until --duration, SIGINT\n"
	"                           or SIGTERM to collect, or the process's end; nothing\n"
	"                           runs in it: perf events and /proc from outside. Needs\n"
	"                           the process's user (kernel.perf_event_paranoid <= 2)\n"
	"                           or root/CAP_PERFMON; -m wall reads blocked threads'\n"
	"                           stacks, which kernel.yama.ptrace_scope >= 2 forbids\n"
	"                           but to root. Allocations need the program launched\n"
	"                           under collect --allocs\n"
	"  -o, --output FILE        write the trace to FILE (mode 0600; a device or FIFO\n"
	"                           such as /dev/stdout is written as a stream, never\n"
	"                           truncated or chmod'ed); default: stdout, which must\n"
	"                           not be a terminal\n"
	"  -i, --interval TIME      sampling interval of each thread's CPU time (wall\n"
	"                           time with -m wall): 250us, 1ms (default), 10ms;\n"
	"                           units ns, us, ms, s\n"
	"  -m, --mode MODE          cpu (default): where CPU time goes; wall: every\n"
	"                           thread at every interval, on or off CPU, and the\n"
	"                           system call a blocked thread waits in\n"
	"      --no-follow          profile only PROGRAM's own process (and programs it\n"
	"                           execs in place), not the processes it forks or\n"
	"                           spawns; by default the whole tree is followed and\n"
	"                           collect waits until all of it has ended\n"
	"      --delay TIME         start sampling TIME after PROGRAM starts\n"
	"      --duration TIME      stop sampling TIME after it started (PROGRAM runs on)\n"
	"      --paused             start with sampling off: PROGRAM turns it on and off\n"
	"                           with ipscope_start() and ipscope_stop() (ipscope.h),\n"
	"                           and SIGUSR2 sent to collect toggles it\n"
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
	"SIGUSR2 sent to collect turns sampling off, and on again (from outside the\n"
	"profiled tree: PROGRAM's own signals to its group or its parent are not for\n"
	"collect, which survives them). PROGRAM's stdin and stderr are untouched, and\n"
	"it inherits no descriptor of collect's. SIGINT, SIGQUIT, SIGTERM and SIGHUP\n"
	"sent to collect alone are passed on to PROGRAM (sent to the process group,\n"
	"PROGRAM has them already).\n"
	"Threads: any number up to 16384 at once (the shared memory grows with them);\n"
	"samples of threads beyond that, or beyond what memory allows, are counted lost.\n"
	"collect exits with PROGRAM's exit status, or 128+N when it died from signal N;\n"
	"126/127 when it cannot be run; 1, PROGRAM not run, when -o takes no trace\n"
	"(/dev/full, a socket, a pipe with no reader, a full disk for a new file).\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "collect: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'collect --help'.\n");
	return 2;
}

/* "1.5s" -> 1500000000; 0 when malformed (a unit is required). */
static uint64_t parse_duration(const char *text)
{
	char *end;
	errno = 0;
	double value = strtod(text, &end);
	if (errno || end == text || value <= 0)
		return 0;
	double scale = !strcmp(end, "ns") ? 1 : !strcmp(end, "us") ? 1e3 : !strcmp(end, "ms") ? 1e6
		       : !strcmp(end, "s") ? 1e9 : !strcmp(end, "m") ? 60e9 : !strcmp(end, "h") ? 3600e9 : 0;
	double ns = value * scale;
	return ns >= 1 && ns < 1e18 ? (uint64_t)ns : 0;
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
int collect_parse_options(int argc, char **argv, struct collect_options *o)
{
	enum { OPT_MAX_FRAMES = 256, OPT_ZSTD_LEVEL, OPT_PROGRAM_STDOUT, OPT_SOURCE, OPT_SIGNAL, OPT_NO_FOLLOW,
	       OPT_DELAY, OPT_DURATION, OPT_PAUSED, OPT_ALLOCS, OPT_ALLOC_BYTES, OPT_NO_CPU };
	/* What a launched program's options that attaching cannot honour are refused with (bit per option). */
	const char *not_attached = NULL;
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "interval", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },
		{ "allocs", optional_argument, NULL, OPT_ALLOCS },
		{ "alloc-bytes", required_argument, NULL, OPT_ALLOC_BYTES },
		{ "no-cpu", no_argument, NULL, OPT_NO_CPU },
		{ "max-frames", required_argument, NULL, OPT_MAX_FRAMES },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "signal", required_argument, NULL, OPT_SIGNAL },
		{ "no-follow", no_argument, NULL, OPT_NO_FOLLOW },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "paused", no_argument, NULL, OPT_PAUSED },
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
	o->follow = 1;
	o->cpu = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:o:i:m:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_int(optarg, 1, INT32_MAX, &v) < 0)
				return usage_error("bad -p '%s': a process id", optarg);
			o->pid = (pid_t)v;
			break;
		case 'o':
			o->output = strcmp(optarg, "-") ? optarg : NULL;
			break;
		case 'i':
			if (!(o->interval_ns = parse_interval(optarg)))
				return usage_error("bad interval '%s': use e.g. 250us, 1ms or 10ms (100us..10s)",
						   optarg);
			break;
		case 'm':
			if (strcmp(optarg, "cpu") && strcmp(optarg, "wall"))
				return usage_error("unknown mode '%s' (cpu, wall)", optarg);
			o->wall = !strcmp(optarg, "wall");
			break;
		case OPT_NO_FOLLOW:
			not_attached = "--no-follow";
			o->follow = 0;
			break;
		case OPT_DELAY:
			if (!(o->delay_ns = parse_duration(optarg)))
				return usage_error("bad --delay '%s': use e.g. 500ms, 2s or 1m", optarg);
			break;
		case OPT_DURATION:
			if (!(o->duration_ns = parse_duration(optarg)))
				return usage_error("bad --duration '%s': use e.g. 500ms, 10s or 1m", optarg);
			break;
		case OPT_PAUSED:
			not_attached = "--paused";
			o->paused = 1;
			break;
		case OPT_ALLOCS:
			not_attached = "--allocs";
			o->allocs = 1;
			o->alloc_rate = 1;
			o->alloc_rate_text = optarg ? optarg : "1";
			if (optarg && (o->alloc_rate = parse_rate(optarg)) < 0)
				return usage_error("bad --allocs '%s': RATE is the fraction of allocations recorded, "
						   "in (0, 1], e.g. --allocs=0.01", optarg);
			o->alloc_scheme = o->alloc_rate < 1 ? TRANSPORT_ALLOC_RATE : TRANSPORT_ALLOC_ALL;
			break;
		case OPT_ALLOC_BYTES:
			not_attached = "--alloc-bytes";
			o->allocs = 1;
			o->alloc_scheme = TRANSPORT_ALLOC_BYTES;
			if (!(o->alloc_mean_bytes = parse_bytes(optarg)))
				return usage_error("bad --alloc-bytes '%s': N is the mean bytes between recorded "
						   "bytes, 1..1TiB, e.g. 512KiB", optarg);
			break;
		case OPT_NO_CPU:
			not_attached = "--no-cpu";
			o->cpu = 0;
			break;
		case OPT_MAX_FRAMES:
			if (parse_int(optarg, 1, 1024, &v) < 0)
				return usage_error("bad --max-frames '%s' (1..1024)", optarg);
			o->max_frames = (uint32_t)v;
			break;
		case OPT_SOURCE:
			not_attached = "--source";
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
			not_attached = "--signal";
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
			not_attached = "--program-stdout";
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
	if (o->pid) {
		if (optind < argc)
			return usage_error("-p profiles a running process: no PROGRAM to run with it (got '%s')", argv[optind]);
		if (o->allocs)
			return usage_error("%s", "-p cannot record allocations: they need the agent in the program from "
					   "its first allocation; run the program under collect --allocs");
		if (not_attached)
			return usage_error("%s is for a program collect runs, not with -p", not_attached);
		return -1;
	}
	if (!o->cpu && !o->allocs)
		return usage_error("%s", "--no-cpu leaves nothing to record: add --allocs or --alloc-bytes");
	if (!o->cpu && o->wall)
		return usage_error("%s", "-m wall takes samples: not with --no-cpu");
	if (optind >= argc)
		return usage_error("%s", "no program to run");
	o->argv = argv + optind;
	return -1;
}

