/*
 * collect_ctor_thread - a shared library collect_hidden is linked with
 * (DT_NEEDED), whose constructor starts a pthread burning 0.3 s of CPU in
 * ctor_work. The loader runs the constructors of the program's libraries
 * before those of the preloaded agent (the agent does not depend on them,
 * and constructors run dependencies first, in reverse load order), so the
 * thread exists before the agent starts: the agent must find it and adopt
 * it. As evidence of that order the constructor counts the threads it sees
 * (the agent starts a thread of its own when it samples): ctor_threads()
 * returns that count, ctor_thread_join() joins the thread and gives its
 * kernel id and the CPU time its own clock measured.
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workload_util.h"

static pthread_t thread;
static int threads_at_start, started, ctor_tid;
static double ctor_cpu;

__attribute__((noinline)) static void ctor_work(void)
{
	burn_cpu(0.3);
	__asm__ volatile("" ::: "memory");
}

static void *ctor_main(void *arg)
{
	(void)arg;
	ctor_tid = (int)syscall(SYS_gettid);
	double start = thread_cpu_seconds();
	ctor_work();
	ctor_cpu = thread_cpu_seconds() - start;
	return NULL;
}

__attribute__((constructor)) static void ctor_start(void)
{
	DIR *d = opendir("/proc/self/task");
	for (struct dirent *e; d && (e = readdir(d));)
		threads_at_start += e->d_name[0] != '.';
	if (d)
		closedir(d);
	started = pthread_create(&thread, NULL, ctor_main, NULL) == 0;
}

/* Called by the test program through dlsym. */
int ctor_threads(void);
int ctor_thread_join(double *cpu);

int ctor_threads(void)
{
	return threads_at_start;
}

int ctor_thread_join(double *cpu)
{
	if (!started || pthread_join(thread, NULL))
		return -1;
	*cpu = ctor_cpu;
	return ctor_tid;
}
