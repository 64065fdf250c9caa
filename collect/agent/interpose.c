/*
 * interpose.c - the interposition itself: the table of next definitions
 * behind the agent's own (interpose.h: the list, and REAL), and whose code
 * a caller is in. A wrapper answers libunwind (unwinder.c, signals.c) and the
 * program differently, and tells them apart by its return address, in
 * libunwind's text or not; a stack's leading frames in the agent's own text
 * are the hooks' (capture.c).
 */
#include "agent.h"

#include <link.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

struct agent_real agent_real;

static uintptr_t unwinder_text_start, unwinder_text_end;
static uintptr_t agent_text_start, agent_text_end;

struct text_range {
	uintptr_t target, start, end;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct text_range *r = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && r->target >= start &&
		    r->target < start + ph->p_memsz) {
			r->start = start;
			r->end = start + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static void find_texts(void)
{
	struct text_range r = { (uintptr_t)&unw_backtrace, 0, 0 };
	REAL(dl_iterate_phdr)(find_text, &r);
	unwinder_text_start = r.start;
	unwinder_text_end = r.end;
	r = (struct text_range){ (uintptr_t)&interpose_init, 0, 0 };
	REAL(dl_iterate_phdr)(find_text, &r);
	agent_text_start = r.start;
	agent_text_end = r.end;
}

int agent_own_text(uint64_t pc)
{
	return pc >= agent_text_start && pc < agent_text_end;
}

int agent_called_from_unwinder(const void *ret_addr)
{
	uintptr_t a = (uintptr_t)ret_addr;
	return a >= unwinder_text_start && a < unwinder_text_end;
}

void interpose_init(void)
{
#define LOOK_UP(name) (void)REAL(name);
	AGENT_INTERPOSED(LOOK_UP, AGENT_REAL_NONE)
#undef LOOK_UP
	if (!unwinder_text_end)
		find_texts();
}
