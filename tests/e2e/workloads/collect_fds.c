/*
 * collect_fds - a program that cares about its file descriptors, for
 * tests/e2e/collect_fds.sh. The profiler must not show up among them, close
 * them, or stop sampling when the program closes or replaces every number.
 *
 *   list OUT     writes to OUT the descriptors it sees (number -> target)
 *                at start, after two threads came and went, and in a
 *                forked child, and whether 0, 1 and 2 can be used. Run with
 *                and without collect, the two outputs must be identical.
 *   hostile OUT  burns 0.2 s of CPU in each of four phases: before and after
 *                closing every descriptor from 3 to 1023, after
 *                close_range(6, ~0) and closefrom(6), and after dup2'ing
 *                /dev/null over every number from 6 to 255; between them a
 *                thread starts and ends and a child forks, each writing to
 *                OUT (which then sits on the low numbers the profiler used
 *                to have). Prints "ok" when OUT holds exactly what was
 *                written, else what went wrong.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workload_util.h"

/* "fd -> target" lines of every open descriptor but the directory's own, into buf. */
static void list_fds(char *buf, size_t size)
{
	DIR *dir = opendir("/proc/self/fd");
	int self = dir ? dirfd(dir) : -1;
	struct dirent *e;
	int fds[1024], n = 0;
	while (dir && (e = readdir(dir)) && n < 1024) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd != self)
			fds[n++] = fd;
	}
	if (dir)
		closedir(dir);
	size_t used = 0;
	buf[0] = 0;
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				int t = fds[i];
				fds[i] = fds[j];
				fds[j] = t;
			}
	for (int i = 0; i < n && used + 300 < size; i++) {
		char path[64], target[256];
		snprintf(path, sizeof path, "/proc/self/fd/%d", fds[i]);
		ssize_t len = readlink(path, target, sizeof target - 1);
		target[len > 0 ? len : 0] = 0;
		/* Pipes and sockets get a new inode number each run: keep the kind only. */
		char *bracket = strchr(target, '[');
		if (bracket)
			*bracket = 0;
		used += (size_t)snprintf(buf + used, size - used, "  %d -> %s\n", fds[i], target);
	}
}

static const char *usable(int fd)
{
	return fcntl(fd, F_GETFD) < 0 && errno == EBADF ? "closed" : "open";
}

static void *short_thread(void *arg)
{
	burn_cpu(*(double *)arg);
	return NULL;
}

static void run_thread(double seconds)
{
	pthread_t t;
	if (pthread_create(&t, NULL, short_thread, &seconds) == 0)
		pthread_join(t, NULL);
}

static int list(const char *out)
{
	static char start[16384], after[16384], child[16384], std[64];
	snprintf(std, sizeof std, "fd 0 %s, fd 1 %s, fd 2 %s", usable(0), usable(1), usable(2));
	list_fds(start, sizeof start);
	run_thread(0.05);
	run_thread(0.05);
	burn_cpu(0.1);
	int p[2];
	if (pipe(p) < 0)
		return 1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		list_fds(child, sizeof child);
		ssize_t unused = write(p[1], child, strlen(child));
		(void)unused;
		_exit(0);
	}
	close(p[1]);
	ssize_t n = read(p[0], child, sizeof child - 1);
	child[n > 0 ? n : 0] = 0;
	close(p[0]);
	waitpid(pid, NULL, 0);
	list_fds(after, sizeof after);
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%s\nat start:\n%safter threads and a fork:\n%sin the child:\n%s", std, start, after, child);
	return fclose(f) != 0;
}

__attribute__((noipa)) static void phase_a(void)
{
	burn_cpu(0.2); /* @phase-a */
}

__attribute__((noipa)) static void phase_b(void)
{
	burn_cpu(0.2); /* @phase-b */
}

__attribute__((noipa)) static void phase_c(void)
{
	burn_cpu(0.2); /* @phase-c */
}

__attribute__((noipa)) static void phase_d(void)
{
	burn_cpu(0.2); /* @phase-d */
}

static int failures;

static void put(int fd, const char *what)
{
	if (write(fd, what, strlen(what)) != (ssize_t)strlen(what)) {
		fprintf(stderr, "writing '%s' to fd %d failed: %s\n", what, fd, strerror(errno));
		failures++;
	}
}

static int hostile(const char *out)
{
	phase_a();
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	/* Now the lowest numbers are the program's again. */
	int file = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int p[2];
	if (file < 0 || pipe(p) < 0)
		return 1;
	put(file, "a");
	run_thread(0.02);
	put(file, "b");
	phase_b();
	syscall(SYS_close_range, 6u, ~0u, 0);
	closefrom(6);
	phase_c();
	int null = open("/dev/null", O_RDWR);
	for (int fd = 6; fd < 256; fd++)
		if (fd != null)
			dup2(null, fd);
	pid_t pid = fork();
	if (pid == 0) {
		put(file, "c");
		_exit(failures ? 1 : 0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || status != 0)
		failures++;
	put(file, "d");
	put(p[1], "x");
	phase_d();
	char got[16] = "";
	int check = open(out, O_RDONLY);
	ssize_t n = check >= 0 ? read(check, got, sizeof got - 1) : -1;
	got[n > 0 ? n : 0] = 0;
	char piped = 0;
	if (read(p[0], &piped, 1) != 1 || piped != 'x') {
		fprintf(stderr, "the program's pipe lost its byte\n");
		failures++;
	}
	if (strcmp(got, "abcd")) {
		fprintf(stderr, "%s holds '%s', not 'abcd'\n", out, got);
		failures++;
	}
	fprintf(stderr, "%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "list"))
		return list(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "hostile"))
		return hostile(argv[2]);
	fprintf(stderr, "usage: collect_fds list|hostile OUT\n");
	return 2;
}
