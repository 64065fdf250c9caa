/*
 * collect_execle - execle() with an environment of its own: the exec'd shell
 * prints IPSCOPE_EXECLE from it. Known answer: "IPSCOPE_EXECLE=ok" (the
 * agent's execle wrapper must pass the envp that follows the list's NULL).
 */
#include <unistd.h>

int main(void)
{
	char *const envp[] = { "IPSCOPE_EXECLE=ok", NULL };
	execle("/bin/sh", "sh", "-c", "echo IPSCOPE_EXECLE=$IPSCOPE_EXECLE", (char *)NULL, envp);
	return 127;
}
