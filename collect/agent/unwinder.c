/*
 * unwinder.c - libunwind as a guest of the program, the way the agent
 * itself is: no descriptor of its own, no system calls it does not need
 * inside the signal handler, and no lock a signal can deadlock on. Its calls
 * are told from the program's by their return address (libunwind's text).
 *
 * Since the agent walks its own frame tables first (frametab.c, capture.c),
 * libunwind unwinds only what those cannot: a pc outside every table, a
 * frame whose rule is a DWARF expression (PLT stubs, realigned frames), a
 * thread whose stack bounds the agent does not know, the foreign threads
 * (foreign.c) and wall mode's blocked ones (wall.c). What follows still
 * holds for those calls, and for its trace cache's misses.
 *
 * Its descriptors. The program must see exactly the descriptors it was
 * started with, and be free to close, dup2 over or reuse any number: the
 * agent keeps none of its own (rings.c, sampler.c), and libunwind gets
 * none either. libunwind 1.6 checks that an address is readable before it
 * dereferences it on its slower paths (every unw_step is checked,
 * CONSERVATIVE_CHECKS, and the trace cache steps on each miss): it opens a
 * pipe at its first use (mem_validate_pipe in src/x86_64/Ginit.c), read()s
 * it, and has the kernel copy the byte at the address into it with
 * syscall(SYS_write, pipe, address, 1), re-opening the pipe whenever the
 * read fails. Left alone the pipe lands on the lowest free numbers (a closed
 * stdin becomes libunwind's), and once a program closed and reused those
 * numbers, libunwind would read and write the program's files. So when
 * libunwind asks for a pipe it gets none: pipe2 and pipe fail with EMFILE,
 * its read(-1) then fails with EBADF, and its syscall(SYS_write, -1,
 * address, 1) is answered here: the byte is copied with process_vm_readv on
 * our own process, which fails with EFAULT exactly where the pipe write
 * would (unmapped or PROT_NONE memory).
 *
 * Its signal masking. libunwind blocks every signal around its locked
 * sections (two rt_sigprocmask calls each, several per sample on python3,
 * whose interpreter loop gives nearly every sample a new leaf pc, so a
 * cache miss: bench/README.md). Inside the agent's handler every asynchronous signal is
 * already blocked (the handler's sa_mask, sampler.c), so those calls change
 * nothing and are skipped; outside it they go through unchanged, the
 * sampling signal included (signals.c, which keeps it out of the program's
 * own masks).
 *
 * The loader's lock. Debian's libunwind has no per-thread register-state
 * cache (UNW_CACHE_PER_THREAD silently becomes UNW_CACHE_GLOBAL): a miss
 * takes libunwind's global lock and then calls dl_iterate_phdr, which takes
 * the loader's lock. A thread interrupted while it held the loader's lock
 * (inside dl_iterate_phdr, as C++ exception unwinding and backtrace
 * libraries call it) would wait in its handler for libunwind's lock, held
 * by a handler waiting for the loader's: so the program's own calls to
 * dl_iterate_phdr run with the sampling signal blocked, like dlopen and
 * dlclose (loader.c).
 */
#include "unwinding.h"

#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

AGENT_EXPORT int pipe2(int fds[2], int flags)
{
	if (agent_called_from_unwinder(__builtin_return_address(0))) {
		errno = EMFILE;
		return -1;
	}
	return REAL(pipe2)(fds, flags);
}

AGENT_EXPORT int pipe(int fds[2])
{
	if (agent_called_from_unwinder(__builtin_return_address(0))) {
		errno = EMFILE;
		return -1;
	}
	return REAL(pipe2)(fds, 0);
}

/* Whether one byte at address can be read: what a write of it to a pipe would tell. */
static long check_readable(const void *address)
{
	char byte;
	struct iovec local = { &byte, 1 }, remote = { (void *)address, 1 };
	if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1)
		return 1;
	errno = EFAULT;
	return -1;
}

int unwinder_syscall(long number, long a1, long a2, long a3, const void *ret_addr, long *result)
{
	if (number != SYS_write || (int)a1 != -1 || a3 != 1 || !agent_called_from_unwinder(ret_addr))
		return 0;
	*result = check_readable((const void *)a2);
	return 1;
}
