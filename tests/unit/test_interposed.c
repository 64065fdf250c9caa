/*
 * test_interposed.c - the functions collect/agent/interpose.h lists, one a
 * line (unit_interposed_list), for tests/unit/interposed.sh, which compares them with what the
 * agent exports.
 */
#include <stdio.h>

#include "interpose.h"

#define PRINT(name) puts(#name);

int main(void)
{
	AGENT_MALLOC_FAMILY(PRINT)
	AGENT_INTERPOSED(PRINT, PRINT)
	return 0;
}
