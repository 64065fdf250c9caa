// alloc_exact.cpp - a C++ program whose every allocation memcheck counts, for
// e2e_alloc_exact: collect --allocs must report valgrind memcheck's totals
// (allocations, frees, bytes, in use at exit) exactly, from the process's
// first allocation (libstdc++'s exception pool, made by its constructor
// before the agent's) to its last.
//
//   static            a static constructor allocates before main (a vector of
//                     100 ints, kept) and main throws and catches an exception
//   dlopen LIB MODE   dlopen LIB (MODE: plain, or deepbind: RTLD_DEEPBIND),
//                     which allocates in its constructor and frees in its
//                     destructor; the program frees a string the library
//                     made and the library frees a block the program made
//                     (alloc_exact_lib.c)
//   libc              malloc and free under libc's other names, called
//                     directly (__libc_malloc, __libc_free...), as code that
//                     means to bypass an interposer does: 3 blocks, 1 kept
//   threads           four threads, one at a time in a fixed order, each
//                     allocating 100 blocks and freeing the previous thread's
//                     100 (the last thread's are left), and 100 blocks it
//                     frees at once: 400 temporaries
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <vector>

static std::vector<int> *made_before_main = new std::vector<int>(100);

__attribute__((noinline)) static int throw_and_catch()
{
	try {
		throw std::runtime_error("a message long enough to be allocated, not kept inline in the object");
	} catch (const std::exception &e) {
		return (int)strlen(e.what());
	}
}

static int run_dlopen(const char *lib, const char *mode)
{
	int flags = RTLD_NOW | (!strcmp(mode, "deepbind") ? RTLD_DEEPBIND : 0);
	void *handle = dlopen(lib, flags);
	if (!handle) {
		fprintf(stderr, "alloc_exact: %s\n", dlerror());
		return 1;
	}
	char *(*lib_strdup)(const char *) = (char *(*)(const char *))dlsym(handle, "lib_strdup");
	void (*lib_free)(void *) = (void (*)(void *))dlsym(handle, "lib_free");
	if (!lib_strdup || !lib_free)
		return 1;
	char *s = lib_strdup("made by the library, freed by the program"); // 42 bytes
	free(s);
	lib_free(malloc(77)); // made by the program, freed by the library
	dlclose(handle);
	return 0;
}

static void *volatile sink;

extern "C" void *__libc_malloc(size_t);
extern "C" void *__libc_calloc(size_t, size_t);
extern "C" void *__libc_realloc(void *, size_t);
extern "C" void __libc_free(void *);

static int run_libc()
{
	void *a = __libc_malloc(100), *b = __libc_calloc(4, 25);
	a = __libc_realloc(a, 300); // a free of the 100 bytes and an allocation of 300, as memcheck counts
	__libc_free(b);
	sink = a; // kept
	return a ? 0 : 1;
}

static pthread_mutex_t turn_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static void *previous[100];

static void *worker(void *arg)
{
	int me = (int)(long)arg;
	pthread_mutex_lock(&turn_lock);
	while (turn != me)
		pthread_cond_wait(&turn_changed, &turn_lock);
	pthread_mutex_unlock(&turn_lock);
	for (int i = 0; i < 100; i++) {
		free(previous[i]); // the previous thread's (NULL for the first)
		previous[i] = malloc((size_t)(16 * (me + 1) + i));
		sink = calloc(3, 8); // freed at once: a temporary
		free(sink);
	}
	pthread_mutex_lock(&turn_lock);
	turn++;
	pthread_cond_broadcast(&turn_changed);
	pthread_mutex_unlock(&turn_lock);
	return NULL;
}

static int run_threads()
{
	pthread_t t[4];
	for (long i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "static"))
		return throw_and_catch() > 0 && made_before_main->size() == 100 ? 0 : 1;
	if (argc >= 4 && !strcmp(argv[1], "dlopen"))
		return run_dlopen(argv[2], argv[3]);
	if (argc >= 2 && !strcmp(argv[1], "threads"))
		return run_threads();
	if (argc >= 2 && !strcmp(argv[1], "libc"))
		return run_libc();
	fprintf(stderr, "usage: alloc_exact static | dlopen LIB plain|deepbind | threads | libc\n");
	return 2;
}
