/*
 * launch.c - start the profiled program with the agent preloaded.
 *
 * The agent finds its shared memory through two environment variables and
 * only attaches in the process collect started (children that inherit
 * LD_PRELOAD stay inert). Exec failures come back through a close-on-exec
 * pipe, so collect can answer with the shell's 126/127 before it creates any
 * trace file.
 */
#include "collect.h"
#include "agent_version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define AGENT_NAME "libipscope-agent.so"

int launch_prepare(struct launch *l, const struct collect_options *o)
{
	size_t size = transport_size(TRANSPORT_RINGS, TRANSPORT_RING_BYTES);
	/* Inherited by the program on purpose: the agent closes it after mapping. */
	l->shm_fd = memfd_create("ipscope", 0);
	if (l->shm_fd < 0 || ftruncate(l->shm_fd, (off_t)size) < 0) {
		fprintf(stderr, "collect: cannot create shared memory: %s\n", strerror(errno));
		return -1;
	}
	void *mapping = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, l->shm_fd, 0);
	if (mapping == MAP_FAILED) {
		fprintf(stderr, "collect: cannot map shared memory: %s\n", strerror(errno));
		return -1;
	}
	transport_init(&l->transport, mapping, TRANSPORT_RINGS, TRANSPORT_RING_BYTES);
	struct transport_header *h = l->transport.header;
	h->magic = TRANSPORT_MAGIC;
	h->nrings = TRANSPORT_RINGS;
	h->ring_bytes = TRANSPORT_RING_BYTES;
	h->mode = TRANSPORT_MODE_CPU;
	h->interval_ns = o->interval_ns;
	h->max_frames = o->max_frames;
	h->requested_source = o->source;

	/* collect must see its child's end even if it was started with SIGCHLD
	 * ignored (children then vanish unwaited); SIGCHLD stays blocked so the
	 * main loop can sleep in sigtimedwait until the child ends. The program
	 * gets back the disposition and mask collect was given. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl, &l->original_sigchld);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &l->original_mask);
	return 0;
}

/*
 * 0 when the file at path carries this collect's AGENT_VERSION_STRING; else
 * -1 with what is wrong in why. Read as plain bytes: collect must not load
 * the agent itself.
 */
static int agent_check_version(const char *path, char *why, size_t whylen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
		snprintf(why, whylen, "%s", fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (data == MAP_FAILED) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	static const char prefix[] = AGENT_VERSION_PREFIX, want[] = AGENT_VERSION_STRING;
	const char *found = memmem(data, (size_t)st.st_size, prefix, sizeof prefix - 1);
	size_t left = found ? (size_t)st.st_size - (size_t)(found - (const char *)data) : 0;
	int ok = found && left >= sizeof want && memcmp(found, want, sizeof want) == 0;
	if (!found) {
		snprintf(why, whylen, "not an ipscope agent (no version mark)");
	} else if (!ok) {
		char theirs[64] = "";
		size_t n = left - (sizeof prefix - 1);
		memcpy(theirs, found + sizeof prefix - 1, n < sizeof theirs - 1 ? n : sizeof theirs - 1);
		snprintf(why, whylen, "it comes from ipscope %s, this collect is %s", theirs,
			 want + sizeof prefix - 1);
	}
	munmap(data, (size_t)st.st_size);
	return ok ? 0 : -1;
}

/* The agent beside this executable, or where IPSCOPE_AGENT says. */
static int agent_path(char *out, size_t size)
{
	const char *env = getenv("IPSCOPE_AGENT");
	if (env && *env) {
		snprintf(out, size, "%s", env);
		return access(out, R_OK);
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *slash = strrchr(exe, '/');
	*slash = 0;
	static const char *const places[] = { "/" AGENT_NAME, "/../lib/ipscope/" AGENT_NAME };
	for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
		if (strlen(exe) + strlen(places[i]) >= size)
			continue;
		strcpy(stpcpy(out, exe), places[i]);
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -1;
}

static void child_fail(int report_fd, int err)
{
	ssize_t unused = write(report_fd, &err, sizeof err);
	(void)unused;
	_exit(127);
}

/* In the child: environment, stdout, then exec. Only returns by _exit. */
static void child_exec(const struct launch *l, const struct collect_options *o, int trace_on_stdout,
		       const char *agent, int report_fd)
{
	/* The program starts with the signal state it would have had without collect. */
	sigaction(SIGCHLD, &l->original_sigchld, NULL);
	sigprocmask(SIG_SETMASK, &l->original_mask, NULL);

	char value[PATH_MAX + 4096];
	const char *old = getenv("LD_PRELOAD");
	if (old && *old)
		snprintf(value, sizeof value, "%s:%s", agent, old);
	else
		snprintf(value, sizeof value, "%s", agent);
	setenv("LD_PRELOAD", value, 1);
	snprintf(value, sizeof value, "%d", l->shm_fd);
	setenv(TRANSPORT_ENV_FD, value, 1);
	snprintf(value, sizeof value, "%d", (int)getpid());
	setenv(TRANSPORT_ENV_PID, value, 1);

	if (o->program_stdout) {
		int fd = open(o->program_stdout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			child_fail(report_fd, -errno);
	} else if (trace_on_stdout) {
		if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
			child_fail(report_fd, -errno);
	}
	execvp(o->argv[0], o->argv);
	child_fail(report_fd, errno);
}

int launch_start(struct launch *l, const struct collect_options *o, int trace_on_stdout)
{
	char agent[PATH_MAX], why[256];
	if (agent_path(agent, sizeof agent) < 0) {
		fprintf(stderr, "collect: cannot find the agent %s beside collect or in ../lib/ipscope/ "
				"(reinstall ipscope, or set IPSCOPE_AGENT)\n", AGENT_NAME);
		return 1;
	}
	if (agent_check_version(agent, why, sizeof why) < 0) {
		fprintf(stderr, "collect: cannot use the agent %s: %s (reinstall ipscope, or set IPSCOPE_AGENT)\n",
			agent, why);
		return 1;
	}
	/* LD_PRELOAD splits its list at colons and spaces. */
	if (strpbrk(agent, ": \t")) {
		fprintf(stderr, "collect: the agent's path %s holds a colon or a space, which LD_PRELOAD "
				"cannot carry: install ipscope elsewhere, or set IPSCOPE_AGENT\n", agent);
		return 1;
	}
	int report[2];
	if (pipe2(report, O_CLOEXEC) < 0) {
		fprintf(stderr, "collect: pipe: %s\n", strerror(errno));
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "collect: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		close(report[0]);
		l->transport.header->pid = (uint32_t)getpid();
		child_exec(l, o, trace_on_stdout, agent, report[1]);
	}
	close(report[1]);
	l->pid = pid;
	int err = 0;
	ssize_t n;
	do
		n = read(report[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(report[0]);
	close(l->shm_fd); /* the program keeps its own copy, for images it execs */
	if (n <= 0)
		return 0; /* exec succeeded: the pipe closed */
	waitpid(pid, NULL, 0);
	if (err < 0) {
		fprintf(stderr, "collect: %s: %s\n", o->program_stdout, strerror(-err));
		return 1;
	}
	fprintf(stderr, "collect: %s: %s\n", o->argv[0],
		err == ENOENT ? "command not found" : strerror(err));
	return err == ENOENT ? 127 : 126;
}

int launch_wait(struct launch *l, int timeout_ms, int *status)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	for (;;) {
		pid_t r = waitpid(l->pid, status, WNOHANG);
		if (r == l->pid)
			return 1;
		if (r < 0 && errno != EINTR)
			return 1;
		/* SIGCHLD is blocked in collect, so this wakes exactly when the program ends. */
		if (sigtimedwait(&chld, NULL, &ts) < 0)
			return waitpid(l->pid, status, WNOHANG) == l->pid;
	}
}
