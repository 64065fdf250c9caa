/* collect_dlopen - loads the plugin named by argv[1] with dlopen and spends
 * about 0.3 s of CPU in its function, then closes it. With a second plugin
 * (argv[2]), does the same with it afterwards and prints whether the two
 * were mapped at the same address ("same base: 1"). Prints the CPU time the
 * process used in all, its plugins' threads included (cpu_seconds=). */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

#include "workload_util.h"

/* Run the plugin's function for 0.3 s; returns its load address, 0 on failure. */
static void *run_plugin(const char *path, const char *function)
{
	void *handle = dlopen(path, RTLD_NOW);
	if (!handle) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return NULL;
	}
	void (*work)(double) = (void (*)(double))dlsym(handle, function);
	Dl_info info;
	if (!work || !dladdr((void *)work, &info))
		return NULL;
	work(0.3);
	dlclose(handle);
	return info.dli_fbase;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *a = run_plugin(argv[1], "plugin_work");
	if (!a)
		return 1;
	if (argc > 2) {
		void *b = run_plugin(argv[2], "plugin_b_work");
		if (!b)
			return 1;
		fprintf(stderr, "same base: %d\n", a == b);
	}
	struct timespec process;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &process);
	fprintf(stderr, "cpu_seconds=%.6f\n", (double)process.tv_sec + (double)process.tv_nsec / 1e9);
	return 0;
}
