/*
 * peak_rss - runs a command and writes its peak resident set size in KiB
 * (getrusage's ru_maxrss of the child) to a file: what e2e_report_memory
 * compares, without depending on GNU time being installed.
 * usage: peak_rss OUTFILE COMMAND [ARGS...]; exits with the command's status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: peak_rss OUTFILE COMMAND [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("peak_rss: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("peak_rss: exec");
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("peak_rss: wait4");
		return 2;
	}
	FILE *f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) {
		perror(argv[1]);
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
