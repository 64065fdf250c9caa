/*
 * pager.c - long reports through a pager on a terminal, as git and perf do
 * (pager.h). The pager is the program IPSCOPE_PAGER names, else PAGER's,
 * else less; an empty one or "cat" means none. less gets LESS=FRX when LESS
 * is unset (quit at once when the text fits the screen, pass colors, leave
 * the screen as it was) and lv gets LV=-c, as git sets them.
 *
 * A name without shell metacharacters is run directly, so a pager that is
 * not installed (less is not in a minimal Debian) is noticed before any
 * output is committed to it: the report then goes to the terminal as it
 * would without a pager. A command line with metacharacters goes to sh -c,
 * whose failures cannot be told apart from the pager's own exit.
 */
#include "pager.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t pager_pid = -1; /* one pager per process: the state of an atexit handler */

/* The pager's command line, or NULL for none. */
static const char *pager_program(void)
{
	const char *pager = getenv("IPSCOPE_PAGER");
	if (!pager)
		pager = getenv("PAGER");
	if (!pager)
		pager = "less";
	if (!*pager || !strcmp(pager, "cat"))
		return NULL;
	return pager;
}

int pager_wanted(int no_pager)
{
	return !no_pager && isatty(STDOUT_FILENO) && pager_program() != NULL;
}

/* Close what the pager reads from, then wait for the reader to finish. */
static void pager_wait(void)
{
	if (pager_pid < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	pager_pid = -1;
}

/* A signal that ends analyze lets the pager finish first (async-signal-safe: close, waitpid). */
static void pager_wait_signal(int sig)
{
	if (pager_pid >= 0) {
		close(STDOUT_FILENO);
		close(STDERR_FILENO);
		while (waitpid(pager_pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

void pager_start(void)
{
	const char *pager = pager_program();
	if (!pager || pager_pid >= 0 || !isatty(STDOUT_FILENO))
		return;
	int direct = !pager[strcspn(pager, "|&;<>()$`\\\"' \t\n*?[#~=%")];
	int out[2], status[2];
	if (pipe(out) < 0)
		return;
	if (pipe2(status, O_CLOEXEC) < 0) {
		close(out[0]);
		close(out[1]);
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		close(status[0]);
		close(status[1]);
		return;
	}
	if (pid == 0) {
		close(status[0]);
		dup2(out[0], STDIN_FILENO);
		close(out[0]);
		close(out[1]);
		setenv("LESS", "FRX", 0);
		setenv("LV", "-c", 0);
		if (direct)
			execlp(pager, pager, (char *)NULL);
		else
			execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		int e = errno;
		ssize_t unused = write(status[1], &e, sizeof(e));
		(void)unused;
		_exit(127);
	}
	close(out[0]);
	close(status[1]);
	int e;
	ssize_t n;
	while ((n = read(status[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(status[0]);
	if (n > 0) { /* it could not run: the report goes to the terminal */
		close(out[1]);
		waitpid(pid, NULL, 0);
		return;
	}
	dup2(out[1], STDOUT_FILENO);
	if (isatty(STDERR_FILENO))
		dup2(out[1], STDERR_FILENO);
	close(out[1]);
	pager_pid = pid;
	atexit(pager_wait);
	signal(SIGINT, pager_wait_signal);
	signal(SIGHUP, pager_wait_signal);
	signal(SIGTERM, pager_wait_signal);
	signal(SIGQUIT, pager_wait_signal);
	signal(SIGPIPE, pager_wait_signal);
}
