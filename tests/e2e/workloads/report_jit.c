/* report_jit - a tiny JIT: copies a busy loop into fresh executable memory,
 * writes the perf map a JIT runtime would (/tmp/perf-PID.map, with garbage
 * lines among the good ones, as a damaged map would have), and spends
 * argv[1] CPU seconds (default 0.5) in the copy. tests/e2e/report_jit.sh
 * checks that the loop is named jit_busy_loop and that the garbage costs
 * one warning. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "workload_util.h"

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	/* loop: dec %rdi; jnz loop; ret */
	static const unsigned char code[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};
	unsigned char *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("report_jit: mmap");
		return 1;
	}
	memcpy(mem + 64, code, sizeof code);
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *map = fopen(path, "w");
	if (!map) {
		perror(path);
		return 1;
	}
	fprintf(map, "this is not a map line\n");
	fprintf(map, "%lx %zx jit_busy_loop\n", (unsigned long)(mem + 64), sizeof code);
	fprintf(map, "zz 10 bad_start\n");
	fprintf(map, "%lx 0 zero_size\n", (unsigned long)(mem + 128));
	fprintf(map, "%lx 10\n", (unsigned long)(mem + 256)); /* no name */
	fclose(map);
	void (*loop)(long) = (void (*)(long))(void *)(mem + 64);
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		loop(1000000);
	return 0;
}
