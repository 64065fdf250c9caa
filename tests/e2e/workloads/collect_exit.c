/* collect_exit - ends the way argv[1] says: "status N" exits with N after
 * writing every byte value to stdout; "segv" dies from SIGSEGV; "selfkill"
 * burns 0.5 s of CPU and SIGKILLs itself. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "workload_util.h"

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "status")) {
		for (int i = 0; i < 256; i++)
			putchar(i);
		printf("\nend of output\n");
		fflush(stdout);
		return atoi(argv[2]);
	}
	if (argc > 1 && !strcmp(argv[1], "segv")) {
		burn_cpu(0.1);
		raise(SIGSEGV);
	}
	if (argc > 1 && !strcmp(argv[1], "selfkill")) {
		burn_cpu(0.5);
		kill(getpid(), SIGKILL);
	}
	return 2;
}
