/* collect_dlopen - loads the plugin named by argv[1] with dlopen and spends
 * about 0.3 s of CPU in its function, then closes it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	void *handle = dlopen(argv[1], RTLD_NOW);
	if (!handle) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	void (*work)(double) = (void (*)(double))dlsym(handle, "plugin_work");
	if (!work)
		return 1;
	work(0.3);
	dlclose(handle);
	return 0;
}
