/*
 * launch.c - start the profiled program with the agent preloaded, and own the
 * shared memory the agent writes into.
 *
 * The memory is a memfd sealed against shrinking (the program could
 * otherwise truncate it under collect's mappings), close-on-exec: the
 * program inherits no descriptor of it. The agent opens collect's own
 * through /proc/COLLECT_PID/fd/N, named in the environment: every process of
 * the tree that inherits it attaches (with --no-follow, IPSCOPE_PID names
 * the one process that may, and children stay inert). Following, collect is
 * the tree's subreaper: orphans of it are reparented to collect, which reaps
 * them, so it knows when the whole tree is gone. The file
 * starts with one chunk of rings and collect adds chunks as threads need
 * them (launch_grow). Exec failures come back through a close-on-exec pipe,
 * so collect can answer with the shell's 126/127.
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
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace.h"


/* Size the file for nchunks, unless that passes collect's file-size limit (which would raise SIGXFSZ). */
static int resize(struct launch *l, uint32_t nchunks)
{
	size_t size = transport_size(nchunks, TRANSPORT_RINGS_PER_CHUNK, l->ring_bytes);
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && size > rl.rlim_cur) {
		errno = EFBIG;
		return -1;
	}
	return ftruncate(l->shm_fd, (off_t)size);
}

static int map_chunk(struct launch *l, uint32_t c)
{
	struct transport *t = &l->transport;
	void *m = mmap(NULL, t->chunk_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, l->shm_fd,
		       (off_t)transport_chunk_offset(t, c));
	if (m == MAP_FAILED)
		return -1;
	transport_add_chunk(t, c, m);
	return 0;
}

int launch_prepare(struct launch *l, const struct collect_options *o)
{
	l->ring_bytes = o->allocs ? TRANSPORT_ALLOC_RING_BYTES : TRANSPORT_RING_BYTES;
	l->shm_fd = memfd_create("ipscope", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (l->shm_fd < 0 || resize(l, 1) < 0 ||
	    fcntl(l->shm_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) < 0) {
		fprintf(stderr, "collect: cannot create shared memory: %s\n", strerror(errno));
		return -1;
	}
	struct transport_header *h = mmap(NULL, TRANSPORT_HEADER_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED,
					  l->shm_fd, 0);
	if (h == MAP_FAILED ||
	    transport_init(&l->transport, h, l->ring_bytes, TRANSPORT_RINGS_PER_CHUNK, TRANSPORT_MAX_CHUNKS) < 0 ||
	    map_chunk(l, 0) < 0) {
		fprintf(stderr, "collect: cannot map shared memory: %s\n", strerror(errno));
		return -1;
	}
	h->magic = TRANSPORT_MAGIC;
	h->ring_bytes = l->ring_bytes;
	h->rings_per_chunk = TRANSPORT_RINGS_PER_CHUNK;
	h->max_chunks = TRANSPORT_MAX_CHUNKS;
	h->mode = (o->cpu ? (o->wall ? TRANSPORT_MODE_WALL : TRANSPORT_MODE_CPU) : 0) | (o->allocs ? TRANSPORT_MODE_ALLOCS : 0);
	h->follow = (uint32_t)o->follow;
	atomic_store(&h->paused, (uint32_t)(o->paused || o->delay_ns));
	atomic_store(&h->ever_paused, (uint32_t)(o->paused || o->delay_ns || o->duration_ns));
	h->alloc_scheme = o->alloc_scheme;
	/* RATE as a threshold on a uniform 64-bit number (RATE 1 never gets here: ALL). */
	h->alloc_threshold = o->alloc_scheme == TRANSPORT_ALLOC_RATE ? (uint64_t)(o->alloc_rate * 18446744073709551616.0) : 0;
	h->alloc_mean_bytes = o->alloc_mean_bytes;
	h->interval_ns = o->interval_ns;
	h->max_frames = o->max_frames;
	h->requested_source = o->source;
	h->requested_signal = (uint32_t)o->signal;
	atomic_store(&h->nchunks, 1);

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
	sigaddset(&chld, TRANSPORT_WAKE_SIGNAL);
	sigaddset(&chld, SIGUSR2);
	sigprocmask(SIG_BLOCK, &chld, &l->original_mask);
	/* Following the tree: orphans of it become collect's children, so it sees every end. */
	if (o->follow && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		fprintf(stderr, "collect: cannot become the tree's subreaper: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

void launch_grow(struct launch *l)
{
	struct transport *t = &l->transport;
	uint32_t want = l->grow_errno ? 0 : transport_chunks_wanted(t);
	for (uint32_t i = 0; i < want; i++) {
		uint32_t n = atomic_load(&t->nmapped);
		if (resize(l, n + 1) < 0 || map_chunk(l, n) < 0) {
			l->grow_errno = errno;
			atomic_store(&t->header->cannot_grow, 1); /* agents then wait for a ring only briefly */
			break;
		}
		atomic_store_explicit(&t->header->nchunks, n + 1, memory_order_release);
		if (n + 1 == t->max_chunks)
			atomic_store(&t->header->cannot_grow, 1);
	}
	if (want)
		transport_rings_changed(t->header); /* threads waiting for a ring map the new chunks, or give up */
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
	static const char *const places[] = { "/" TRACE_AGENT_FILE_NAME, "/../lib/ipscope/" TRACE_AGENT_FILE_NAME };
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
	snprintf(value, sizeof value, "%d:%d%s", (int)getppid(), l->shm_fd, o->allocs ? TRANSPORT_ENV_ALLOCS : "");
	setenv(TRANSPORT_ENV, value, 1);
	snprintf(value, sizeof value, "%d", (int)getpid());
	if (o->follow)
		unsetenv(TRANSPORT_ENV_PID);
	else
		setenv(TRANSPORT_ENV_PID, value, 1);

	if (o->program_stdout) {
		int fd = open(o->program_stdout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
			child_fail(report_fd, -errno);
	} else if (trace_on_stdout) {
		/* stdout is the trace: the program's goes to stderr, or stays closed with it. */
		if (o->closed_std & (1 << STDERR_FILENO))
			close(STDOUT_FILENO);
		else if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
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
				"(reinstall ipscope, or set IPSCOPE_AGENT)\n", TRACE_AGENT_FILE_NAME);
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
		close(report[0]);
		close(report[1]);
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

/* Reap every child that ended: the program's status is kept, the others go to fn. */
static void reap(struct launch *l, launch_reaped_fn fn, void *ctx)
{
	for (;;) {
		int status;
		pid_t r = waitpid(-1, &status, WNOHANG);
		if (r <= 0)
			return;
		if (r == l->pid) {
			l->ended = 1;
			l->status = status;
			fn(ctx, r, status);
		} else if (!forward_reaped(r)) {
			fn(ctx, r, status);
		}
	}
}

ssize_t read_proc_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

/* Whether pid is a process of the profiled tree: collect is its ancestor (orphans of the tree are
 * collect's children: it is their subreaper). */
static int in_tree(pid_t pid)
{
	pid_t self = getpid();
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (pid == self)
			return depth > 0;
		char path[64], buf[512];
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
		if (read_proc_file(path, buf, sizeof buf) <= 0)
			return 0;
		/* "pid (comm) state ppid ...": the command may hold spaces and parentheses. */
		const char *close_paren = strrchr(buf, ')');
		int ppid;
		if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
			return 0;
		pid = ppid;
	}
	return 0;
}

int launch_wait(struct launch *l, int timeout_ms, launch_reaped_fn fn, void *ctx)
{
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	/* An agent that needs rings now wakes collect too (the caller frees and grows). */
	sigaddset(&chld, TRANSPORT_WAKE_SIGNAL);
	sigaddset(&chld, SIGUSR2);
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
	int toggles = 0;
	reap(l, fn, ctx);
	/* All three are blocked in collect, so this wakes exactly when a child ends, rings are needed or
	 * sampling is toggled. */
	siginfo_t si;
	int sig = sigtimedwait(&chld, &si, &ts);
	if (sig == TRANSPORT_WAKE_SIGNAL) {
		atomic_store(&l->transport.header->wake_pending, 0);
		l->rings_wanted = 1;
	}
	else if (sig == SIGUSR2 && !in_tree(si.si_pid))
		toggles++; /* the program's own (kill(0, SIGUSR2) to its group) is not for collect */
	reap(l, fn, ctx);
	return toggles;
}

const char *launch_program_path(const char *argv0, char *buf, size_t size)
{
	if (strchr(argv0, '/')) {
		snprintf(buf, size, "%s", argv0);
		return buf;
	}
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, size, "%.*s%s%s", (int)n, p, n ? "/" : "", argv0);
		if (access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return NULL;
}

int launch_children_left(void)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
	if (read_proc_file(path, buf, sizeof buf) <= 0)
		return 0;
	int left = 0;
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		left += !forward_is_witness((pid_t)pid);
	}
	return left;
}
