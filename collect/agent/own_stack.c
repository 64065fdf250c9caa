/*
 * own_stack.c - a stack of the agent's own for the sampling handler, when
 * the interrupted code runs on a small one: a coroutine's (makecontext, 8
 * KiB is common), or an alternate signal stack a Go-like runtime installs.
 * The handler's unwinding takes several KiB (libunwind's cursor and context,
 * the frame buffer), more than such stacks leave: under collect their
 * programs died of SIGSEGV where they ran bare. Of the interrupted stack
 * the handler then uses the kernel's signal frame (which any signal costs:
 * AT_MINSIGSTKSZ, 3.4 KiB with AVX-512) and a few hundred bytes more, the
 * bound e2e_collect_small_stack measures.
 *
 * On the thread's own stack with room (the bounds capture_warm_up found, at
 * least ROOM above the low end: nearly always) the handler runs where it
 * is: no cost. Elsewhere it switches to a stack mapped on the thread's first
 * such sample (two system calls, in the handler: mmap is async-signal-safe;
 * a guard page below) and unmapped at the thread's end. The switch is a
 * call through agent_call_on_stack, whose unwind information says where
 * the interrupted stack is (its CFA in rbx), so an unwinder walking from the
 * handler's own frames (a debugger's) crosses it; the agent's own walks
 * start at the interrupted registers.
 */
#include "unwinding.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define OWN_STACK_BYTES (64u << 10)
#define GUARD_BYTES 4096u
#define ROOM (32u << 10)

/* Call fn(arg) with the stack pointer at top (16-byte aligned); rbx keeps the caller's. */
void agent_call_on_stack(void (*fn)(void *), void *arg, void *top);
__asm__(".text\n"
	".globl agent_call_on_stack\n"
	".hidden agent_call_on_stack\n"
	".type agent_call_on_stack, @function\n"
	"agent_call_on_stack:\n"
	"	.cfi_startproc\n"
#ifdef __CET__
	"	endbr64\n"
#endif
	"	push %rbx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rbx, 0\n"
	"	mov %rsp, %rbx\n"
	"	.cfi_def_cfa_register %rbx\n"
	"	mov %rdx, %rsp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	call *%rax\n"
	"	mov %rbx, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_restore %rbx\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size agent_call_on_stack, .-agent_call_on_stack\n");

static AGENT_TLS __thread struct own_stack {
	unsigned char *base; /* the mapping, its guard page first; NULL until needed */
	int in_use; /* a nested call runs where it is: on this stack already */
} own_self;

/* The top of the thread's own stack, mapped now if need be; NULL when it cannot be. */
static void *own_top(void)
{
	if (!own_self.base) {
		/* Raw system calls: errno is the interrupted code's (the handler restores it anyway). */
		void *p = (void *)syscall(SYS_mmap, NULL, (size_t)(GUARD_BYTES + OWN_STACK_BYTES), PROT_NONE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		if (syscall(SYS_mprotect, (unsigned char *)p + GUARD_BYTES, (size_t)OWN_STACK_BYTES,
			    PROT_READ | PROT_WRITE) < 0) {
			syscall(SYS_munmap, p, (size_t)(GUARD_BYTES + OWN_STACK_BYTES));
			return NULL;
		}
		own_self.base = p;
	}
	return own_self.base + GUARD_BYTES + OWN_STACK_BYTES;
}

void unwind_on_own_stack(void (*fn)(void *), void *arg)
{
	if (own_self.in_use || capture_stack_has_room(ROOM)) {
		fn(arg);
		return;
	}
	void *top = own_top();
	if (!top) {
		fn(arg);
		return;
	}
	own_self.in_use = 1;
	agent_call_on_stack(fn, arg, top);
	own_self.in_use = 0;
}

void own_stack_thread_end(void)
{
	unsigned char *base = own_self.base;
	own_self.base = NULL;
	if (base)
		munmap(base, GUARD_BYTES + OWN_STACK_BYTES);
}
