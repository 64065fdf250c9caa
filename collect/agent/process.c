/*
 * process.c - the process tree as the agent sees it: what it tells collect
 * (TR_PROCESS records) and the libc functions it wraps to know.
 *
 * A new image says it attached, with its path and command line; a fork
 * child that goes on profiled says it was forked (lifecycle.c attaches it
 * anew). Neither is enough when a process exec's a program the agent cannot
 * enter (statically linked, setuid, or an environment without LD_PRELOAD):
 * no agent ever speaks for it. So the exec family says "about to exec PATH"
 * before calling the real one, and "it failed" when that returns;
 * posix_spawn (whose exec happens inside libc) says it after the fact, with
 * the child's pid and the time it was called. collect then knows which
 * execs no image followed. An exec from a vfork child (shared memory, the
 * parent thread suspended) is said through the parent thread's ring, with
 * the child's pid in the record.
 *
 * The wait family reports the children it reaps with their status, so
 * collect can write every process's exit status even when a parent of the
 * tree, not collect, reaped it. These wrappers may run inside a program's
 * SIGCHLD handler that interrupted another record of the same thread: the
 * record is then skipped (agent_write_begin), and the end is written with
 * its status unknown.
 */
#include "process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lifecycle.h"
#include "trace.h"

#define MAX_COMMAND 4096

extern char **environ;

/* ---- records ---- */

static void record_at(uint64_t time_ns, uint32_t kind, uint32_t pid, uint32_t parent, int status, const char *path,
		      const char *command)
{
	if (kind == TR_PROCESS_ATTACHED || kind == TR_PROCESS_FORKED) {
		/* The recording thread's CPU time with the record's time: collect's wall mode counts its time off CPU
		 * from there (transport.h). */
		uint64_t us = agent_thread_cpu_ns(0) / 1000;
		status = us < INT32_MAX ? (int)us : INT32_MAX;
	}
	sigset_t old;
	uint32_t ring = agent_write_begin(&old);
	if (ring != AGENT_NO_RING) {
		uint32_t path_len = path ? (uint32_t)strnlen(path, PATH_MAX) : 0;
		uint32_t command_len = command ? (uint32_t)strnlen(command, MAX_COMMAND) : 0;
		struct tr_process *r = agent_reserve_waiting(ring, TR_PROCESS, (uint32_t)sizeof *r + path_len + command_len);
		if (r) {
			r->time_ns = time_ns;
			r->kind = kind;
			r->pid = pid;
			r->parent = parent;
			r->status = status;
			r->path_len = path_len;
			r->command_len = command_len;
			memcpy(r + 1, path, path_len);
			memcpy((char *)(r + 1) + path_len, command, command_len);
			transport_commit(&agent_transport, ring);
		}
	}
	agent_write_end(&old);
}

void process_record(uint32_t kind, uint32_t pid, uint32_t parent, int status, const char *path, const char *command)
{
	record_at(agent_now_ns(), kind, pid, parent, status, path, command);
}

/* argv as one line: words a shell reads as they are stay bare, others in single quotes. */
static void join_command(const char *args, size_t n, char *out, size_t size)
{
	size_t at = 0;
	for (size_t i = 0; i < n && at + 8 < size;) {
		const char *arg = args + i;
		size_t len = strnlen(arg, n - i);
		int plain = len && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == len;
		if (at)
			out[at++] = ' ';
		if (!plain)
			out[at++] = '\'';
		for (size_t k = 0; k < len && at + 6 < size; k++) {
			if (arg[k] == '\'' && !plain) {
				memcpy(out + at, "'\\''", 4);
				at += 4;
			} else {
				out[at++] = arg[k];
			}
		}
		if (!plain)
			out[at++] = '\'';
		i += len + 1;
	}
	out[at] = 0;
}

void process_attached(void)
{
	char path[PATH_MAX], args[MAX_COMMAND], command[MAX_COMMAND];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	path[n > 0 ? n : 0] = 0;
	command[0] = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat st;
		ssize_t got = fstat(fd, &st) == 0 ? read(fd, args, sizeof args) : -1;
		agent_close_own(fd, &st);
		if (got > 0)
			join_command(args, (size_t)got, command, sizeof command);
	}
	process_record(TR_PROCESS_ATTACHED, (uint32_t)getpid(), (uint32_t)getppid(), 0, path, command);
}

/* ---- fork ---- */

/*
 * A fork by a thread under the program's seccomp filter: the child stays
 * unprofiled (lifecycle.c: attaching would make system calls the filter may
 * forbid). The parent says so, and why, so collect lists the child with the
 * reason instead of as a process it knows nothing of. The record is written
 * as an allocation hook writes (agent_enter, nothing blocked, no getpid):
 * the filter may forbid any system call the program did not make itself.
 */
AGENT_EXPORT pid_t fork(void)
{
	pid_t pid = REAL(fork)();
	if (pid <= 0 || !agent_flags->enabled || !sandbox_covers_me())
		return pid;
	int saved_errno = errno;
	char why[sizeof agent_transport.header->sandbox_text + 96];
	snprintf(why, sizeof why, "forked by a thread under a seccomp filter (%.*s): not followed",
		 (int)sizeof agent_transport.header->sandbox_text, agent_transport.header->sandbox_text);
	agent_enter();
	if (agent_self.depth == 1 && agent_self.ring != AGENT_NO_RING) {
		uint32_t len = (uint32_t)strlen(why);
		struct tr_process *r = transport_reserve(&agent_transport, agent_self.ring, TR_PROCESS, (uint32_t)sizeof *r + len);
		if (r) {
			memset(r, 0, sizeof *r);
			r->time_ns = agent_now_ns();
			r->kind = TR_PROCESS_FORK_UNFOLLOWED;
			r->pid = (uint32_t)pid;
			r->parent = (uint32_t)agent_config.pid;
			r->path_len = len;
			memcpy(r + 1, why, len);
			transport_commit(&agent_transport, agent_self.ring);
		} else {
			agent_count_record_lost();
		}
	}
	agent_leave();
	errno = saved_errno;
	return pid;
}

/* ---- exec ---- */

/* Whether this process may write records: it attached, or is a vfork child sharing the parent's memory. */
static int may_announce(void)
{
	if (!agent_flags->enabled || !agent_config.follow)
		return 0;
	unsigned char resident;
	return agent_config.pid == getpid() || mincore(agent_transport.header, 4096, &resident) == 0;
}

static void announce(uint32_t kind, uint32_t pid, uint64_t time_ns, const char *path)
{
	if (!may_announce())
		return;
	record_at(time_ns, kind, pid, kind == TR_PROCESS_EXECING && pid != (uint32_t)getpid() ? (uint32_t)getpid()
											     : (uint32_t)getppid(),
		  0, path, NULL);
}

/* The file execvp would run for file (PATH searched), into buf. */
static const char *search_path(const char *file, char *buf, size_t size)
{
	if (!file || strchr(file, '/'))
		return file;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/bin:/usr/bin"; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, size, "%.*s%s%s", (int)n, p, n ? "/" : "", file);
		if (access(buf, X_OK) == 0)
			return buf;
		p += n + (p[n] == ':');
	}
	return file;
}

#define EXEC_WRAPPED(call, path)                                                      \
	do {                                                                           \
		announce(TR_PROCESS_EXECING, (uint32_t)getpid(), agent_now_ns(), path); \
		int rc_ = (call);                                                      \
		int err_ = errno;                                                      \
		announce(TR_PROCESS_EXEC_FAILED, (uint32_t)getpid(), agent_now_ns(), path); \
		errno = err_;                                                          \
		return rc_;                                                            \
	} while (0)

AGENT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	EXEC_WRAPPED(REAL(execve)(path, argv, envp), path);
}

AGENT_EXPORT int execv(const char *path, char *const argv[])
{
	EXEC_WRAPPED(REAL(execv)(path, argv), path);
}

AGENT_EXPORT int execvp(const char *file, char *const argv[])
{
	char buf[PATH_MAX];
	EXEC_WRAPPED(REAL(execvp)(file, argv), search_path(file, buf, sizeof buf));
}

AGENT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	EXEC_WRAPPED(REAL(execvpe)(file, argv, envp), search_path(file, buf, sizeof buf));
}

AGENT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char link[64], path[PATH_MAX];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	path[n > 0 ? n : 0] = 0;
	EXEC_WRAPPED(REAL(fexecve)(fd, argv, envp), path);
}

AGENT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	EXEC_WRAPPED(REAL(execveat)(dirfd, path, argv, envp, flags), path);
}

/* execl, execle, execlp: how many arguments the list holds, arg included
 * (ap points after arg; the caller's ap is left as it was). */
static size_t list_args(va_list ap)
{
	va_list count;
	va_copy(count, ap);
	size_t n = 1;
	while (va_arg(count, char *))
		n++;
	va_end(count);
	return n;
}

/* The list as argv[0..n] (argv[n] NULL), reading its terminating NULL too,
 * so that execle's envp comes next in ap. */
static void take_args(char **argv, size_t n, const char *arg, va_list *ap)
{
	argv[0] = (char *)arg;
	for (size_t i = 1; i <= n; i++)
		argv[i] = va_arg(*ap, char *);
}

/* execl, execle, execlp: their arguments (list_args, take_args) as an argv on the stack, then the v variant. */
AGENT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = list_args(ap);
	char *argv[n + 1];
	take_args(argv, n, arg, &ap);
	va_end(ap);
	EXEC_WRAPPED(REAL(execv)(path, argv), path);
}

AGENT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char buf[PATH_MAX];
	va_list ap;
	va_start(ap, arg);
	size_t n = list_args(ap);
	char *argv[n + 1];
	take_args(argv, n, arg, &ap);
	va_end(ap);
	EXEC_WRAPPED(REAL(execvp)(file, argv), search_path(file, buf, sizeof buf));
}

AGENT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = list_args(ap);
	char *argv[n + 1];
	take_args(argv, n, arg, &ap);
	char **envp = va_arg(ap, char **);
	va_end(ap);
	EXEC_WRAPPED(REAL(execve)(path, argv, envp), path);
}

/* posix_spawn execs inside libc: the child's pid and path are said once it returns. */
AGENT_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	pid_t child = 0;
	uint64_t t = agent_now_ns();
	int rc = REAL(posix_spawn)(&child, path, actions, attr, argv, envp);
	if (rc == 0)
		announce(TR_PROCESS_EXECING, (uint32_t)child, t, path);
	if (pid)
		*pid = child;
	return rc;
}

AGENT_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char buf[PATH_MAX];
	pid_t child = 0;
	uint64_t t = agent_now_ns();
	int rc = REAL(posix_spawnp)(&child, file, actions, attr, argv, envp);
	if (rc == 0)
		announce(TR_PROCESS_EXECING, (uint32_t)child, t, search_path(file, buf, sizeof buf));
	if (pid)
		*pid = child;
	return rc;
}

/* ---- wait ---- */

static void reaped(pid_t pid, int status)
{
	if (pid <= 0 || !(WIFEXITED(status) || WIFSIGNALED(status)) || !may_announce() ||
	    agent_config.pid != getpid())
		return;
	int err = errno;
	process_record(TR_PROCESS_REAPED, (uint32_t)pid, (uint32_t)getpid(), status, NULL, NULL);
	errno = err;
}

AGENT_EXPORT pid_t waitpid(pid_t pid, int *status, int options)
{
	int st = 0;
	pid_t r = REAL(waitpid)(pid, &st, options);
	if (r > 0)
		reaped(r, st);
	if (status && r > 0)
		*status = st;
	return r;
}

AGENT_EXPORT pid_t wait(int *status)
{
	int st = 0;
	pid_t r = REAL(wait)(&st);
	if (r > 0)
		reaped(r, st);
	if (status && r > 0)
		*status = st;
	return r;
}

AGENT_EXPORT pid_t wait3(int *status, int options, struct rusage *ru)
{
	int st = 0;
	pid_t r = REAL(wait3)(&st, options, ru);
	if (r > 0)
		reaped(r, st);
	if (status && r > 0)
		*status = st;
	return r;
}

AGENT_EXPORT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	int st = 0;
	pid_t r = REAL(wait4)(pid, &st, options, ru);
	if (r > 0)
		reaped(r, st);
	if (status && r > 0)
		*status = st;
	return r;
}

AGENT_EXPORT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
	int rc = REAL(waitid)(idtype, id, info, options);
	if (rc == 0 && info && info->si_pid > 0 && (options & WEXITED) && !(options & WNOWAIT)) {
		int code = info->si_code, status = -1;
		if (code == CLD_EXITED)
			status = (info->si_status & 0xff) << 8;
		else if (code == CLD_KILLED)
			status = info->si_status & 0x7f;
		else if (code == CLD_DUMPED)
			status = (info->si_status & 0x7f) | 0x80;
		if (status >= 0)
			reaped(info->si_pid, status);
	}
	return rc;
}
