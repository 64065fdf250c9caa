/*
 * collect_wall - threads that run and block in known ways, for
 * tests/e2e/collect_wall.sh. Each thread measures its own time off CPU (the
 * wall time inside its blocking calls) and prints, at the end:
 *   thread TID ROLE wall=SECONDS blocked=SECONDS
 *
 *   four SECONDS   main burns CPU the whole time (and writes a byte to a
 *                  pipe every 100 ms), then joins the others (blocked); "sleeper" burns 30 ms then sleeps in
 *                  nanosleep for 70 ms; "waiter" burns 50 ms then waits 50 ms
 *                  in pthread_cond_timedwait; "reader" burns 20 ms then blocks
 *                  in read() on the pipe until main's next byte
 *   idle N SECONDS N threads blocked in pthread_cond_wait for SECONDS while
 *                  main sleeps (bench/wall-overhead: the agent's cost)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workload_util.h"

static double seconds;
static int pipe_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static volatile int done;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct role {
	const char *name;
	double wall, blocked;
	int tid;
};

static void report(const struct role *r)
{
	printf("thread %d %s wall=%.4f blocked=%.4f\n", r->tid, r->name, r->wall, r->blocked);
}

__attribute__((noinline)) static void sleeper_burn(void)
{
	burn_cpu(0.030);
}

static void *sleeper(void *arg)
{
	struct role *r = arg;
	r->tid = gettid();
	double start = now();
	while (now() - start < seconds) {
		sleeper_burn();
		double t = now();
		struct timespec ts = { 0, 70000000 };
		nanosleep(&ts, NULL); /* @blocked-nanosleep */
		r->blocked += now() - t;
	}
	r->wall = now() - start;
	return NULL;
}

__attribute__((noinline)) static void waiter_burn(void)
{
	burn_cpu(0.050);
}

static void *waiter(void *arg)
{
	struct role *r = arg;
	r->tid = gettid();
	double start = now();
	while (now() - start < seconds) {
		waiter_burn();
		double t = now();
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 50000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&lock);
		pthread_cond_timedwait(&cond, &lock, &until); /* @blocked-cond */
		pthread_mutex_unlock(&lock);
		r->blocked += now() - t;
	}
	r->wall = now() - start;
	return NULL;
}

__attribute__((noinline)) static void reader_burn(void)
{
	burn_cpu(0.020);
}

static void *reader(void *arg)
{
	struct role *r = arg;
	r->tid = gettid();
	double start = now();
	char byte;
	for (;;) {
		double t = now();
		ssize_t n = read(pipe_fds[0], &byte, 1); /* @blocked-read */
		r->blocked += now() - t;
		if (n <= 0 || byte == 'q')
			break;
		reader_burn();
	}
	r->wall = now() - start;
	return NULL;
}

__attribute__((noinline)) static void main_burn(double until)
{
	double next = now() + 0.1;
	while (now() < until) {
		for (unsigned long i = 0; i < 20000; i++)
			workload_sink += i ^ (i >> 3);
		if (now() >= next) {
			if (write(pipe_fds[1], "b", 1) != 1)
				exit(1);
			next += 0.1;
		}
	}
}

static int four(void)
{
	if (pipe(pipe_fds) < 0)
		return 1;
	struct role roles[3] = { { "sleeper", 0, 0, 0 }, { "waiter", 0, 0, 0 }, { "reader", 0, 0, 0 } };
	void *(*fns[3])(void *) = { sleeper, waiter, reader };
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, fns[i], &roles[i]);
	struct role me = { "busy", 0, 0, gettid() };
	double start = now();
	main_burn(start + seconds);
	if (write(pipe_fds[1], "q", 1) != 1)
		return 1;
	double t = now();
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL); /* @blocked-join: main's time off CPU */
	me.blocked = now() - t;
	me.wall = now() - start;
	report(&me);
	for (int i = 0; i < 3; i++)
		report(&roles[i]);
	return 0;
}

static void *idler(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	while (!done)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static int idle(int n)
{
	pthread_t *th = calloc((size_t)n, sizeof *th);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, idler, NULL);
	struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&lock);
	done = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "four")) {
		seconds = atof(argv[2]);
		return four();
	}
	if (argc == 4 && !strcmp(argv[1], "idle")) {
		seconds = atof(argv[3]);
		return idle(atoi(argv[2]));
	}
	fprintf(stderr, "usage: collect_wall four SECONDS | idle N SECONDS\n");
	return 2;
}
