/*
 * alloc_tree.c - a process tree whose every process allocates a known set
 * (e2e_alloc_tree: collect --allocs follows the tree, analyze --pid tells
 * the processes apart). Single-threaded, no stdio: each process allocates
 * exactly what is listed here, nothing else.
 *
 *   tree        the parent (parent_work): 2000 x malloc(100) each freed at
 *               once (temporaries), 20 x malloc(200) kept across the fork,
 *               10 x malloc(1000) leaked: 2030 allocations, 214000 B, 10
 *               blocks (10000 B) leaked, 2000 temporaries (200000 B).
 *               Then it forks a child that goes on without exec
 *               (child_work): it frees 10 of the 20 blocks it inherited
 *               (the parent's, not its own: they count nowhere), 500 x
 *               malloc(48) each freed at once, 5 x malloc(3000) leaked: 505
 *               allocations, 39000 B, 5 blocks (15000 B) leaked, 500
 *               temporaries. Once the child is gone the parent frees its 20
 *               blocks (so they are not leaks of the parent), then runs
 *               "leaf 300" by posix_spawn and "leaf 700" by fork and exec
 *               (the fork child allocates nothing before its exec).
 *   leaf N      leaf_work: N x malloc(32) each freed at once, 7 x calloc(1,
 *               256) leaked: N + 7 allocations, 32 N + 1792 B, 7 blocks
 *               (1792 B) leaked, N temporaries. (leaf 300: 307, 11392 B;
 *               leaf 700: 707, 24192 B.)
 *   exec        execer_work: 100 x malloc(64) each freed at once, 3 x
 *               malloc(500) live when it execs "leaf 200" in place (same
 *               pid): its leaks, not blocks the new program frees. The pid:
 *               103 + 207 = 310 allocations, 7900 + 8192 = 16092 B, 3 + 7 =
 *               10 blocks (1500 + 1792 = 3292 B) leaked, 300 temporaries.
 *
 * The whole tree: 2030 + 505 + 307 + 707 = 3549 allocations, 214000 +
 * 39000 + 11392 + 24192 = 288584 B, 10 + 5 + 7 + 7 = 29 blocks (28584 B)
 * leaked, 2000 + 500 + 300 + 700 = 3500 temporaries.
 */
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
void *volatile sink;
static void *kept[20];

__attribute__((noinline)) static void parent_work(void)
{
	for (int i = 0; i < 2000; i++) {
		void *p = malloc(100);
		sink = p;
		free(p);
	}
	for (int i = 0; i < 20; i++)
		kept[i] = malloc(200);
	for (int i = 0; i < 10; i++)
		sink = malloc(1000);
}

__attribute__((noinline)) static void child_work(void)
{
	for (int i = 0; i < 10; i++)
		free(kept[i]);
	for (int i = 0; i < 500; i++) {
		void *p = malloc(48);
		sink = p;
		free(p);
	}
	for (int i = 0; i < 5; i++)
		sink = malloc(3000);
}

__attribute__((noinline)) static void leaf_work(int n)
{
	for (int i = 0; i < n; i++) {
		void *p = malloc(32);
		sink = p;
		free(p);
	}
	for (int i = 0; i < 7; i++)
		sink = calloc(1, 256);
}

__attribute__((noinline)) static void execer_work(void)
{
	for (int i = 0; i < 100; i++) {
		void *p = malloc(64);
		sink = p;
		free(p);
	}
	for (int i = 0; i < 3; i++)
		sink = malloc(500);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (!strcmp(mode, "leaf") && argc > 2) {
		leaf_work(atoi(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "exec")) {
		char *leaf[] = { argv[0], "leaf", "200", NULL };
		execer_work();
		execv("/proc/self/exe", leaf);
		return 127;
	}
	if (strcmp(mode, "tree"))
		return 2;
	parent_work();
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		child_work();
		_exit(0);
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	for (int i = 0; i < 20; i++)
		free(kept[i]);
	char *spawned[] = { argv[0], "leaf", "300", NULL }, *execd[] = { argv[0], "leaf", "700", NULL };
	pid_t a;
	if (posix_spawn(&a, "/proc/self/exe", NULL, NULL, spawned, environ))
		return 1;
	pid_t b = fork();
	if (b < 0)
		return 1;
	if (b == 0) {
		execv("/proc/self/exe", execd);
		_exit(127);
	}
	if (waitpid(a, &status, 0) != a || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	if (waitpid(b, &status, 0) != b || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
