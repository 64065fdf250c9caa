/*
 * collect_fd_limit.c - a program one descriptor short of RLIMIT_NOFILE
 * (issue 32): it lowers the limit to 64, opens descriptors until the next
 * open() fails, closes one, and then, while it starts and joins THREADS
 * short threads one after another (each burns 0.5 ms), opens and closes
 * /dev/null in a loop on another thread. Bare, that open() never fails: the
 * free slot is the program's alone. Prints "emfile=N opens=M"; exits 1 when
 * N is not 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "workload_util.h"

static _Atomic int stop;
static long emfile, opens;

static void *opener(void *arg)
{
	(void)arg;
	while (!stop) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			opens++;
		} else if (errno == EMFILE) {
			emfile++;
		}
	}
	return NULL;
}

static void *short_thread(void *arg)
{
	(void)arg;
	burn_cpu(0.0005);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 300;
	struct rlimit rl = { 64, 64 };
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 64;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 2;
	/* The opener thread first: its own start must not be what uses the slot. */
	pthread_t o;
	stop = 1;
	if (pthread_create(&o, NULL, opener, NULL))
		return 2;
	pthread_join(o, NULL);
	int last = -1;
	for (;;) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			break;
		last = fd;
	}
	if (last < 0)
		return 2;
	close(last); /* one free slot, the program's */
	stop = 0;
	if (pthread_create(&o, NULL, opener, NULL))
		return 3;
	for (int i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_thread, NULL))
			return 3;
		pthread_join(t, NULL);
	}
	stop = 1;
	pthread_join(o, NULL);
	printf("emfile=%ld opens=%ld\n", emfile, opens);
	return emfile ? 1 : 0;
}
