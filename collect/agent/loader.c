/*
 * loader.c - the loader's functions the agent wraps: dlopen, dlmopen and
 * dlclose, so the module map follows them (modules.c) and a library loaded
 * with RTLD_DEEPBIND allocates through the hooks (alloc_rebind.c), and all three and
 * dl_iterate_phdr so that no thread unwinds while it holds the loader's
 * lock.
 */
#include "unwinding.h"

#include "allocations.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>

/*
 * The loader lock: a thread interrupted inside dlopen/dlclose must not unwind
 * (libunwind would walk a half-updated object list, and another thread's
 * handler could wait on the lock it holds). So the sampling signal is blocked
 * for the whole call; the sample is delivered right after.
 */
AGENT_EXPORT void *dlopen(const char *file, int mode)
{
	sigset_t old;
	agent_block_signal(&old);
	struct alloc_loaded before;
	int allocs = alloc_enabled();
	if (allocs)
		alloc_rebind_note(&before);
	void *handle = REAL(dlopen)(file, mode);
	if (handle && allocs && (mode & RTLD_DEEPBIND))
		alloc_rebind(handle, &before); /* its malloc family bound to libc's, past the hooks */
	else if (handle && allocs)
		alloc_rebind_aliases(&before); /* __libc_malloc and the like */
	if (handle && allocs)
		alloc_check_apis(handle);
	if (handle)
		modules_rescan();
	agent_restore_signal(&old);
	return handle;
}

AGENT_EXPORT void *dlmopen(Lmid_t namespace, const char *file, int mode)
{
	sigset_t old;
	agent_block_signal(&old);
	void *handle = REAL(dlmopen)(namespace, file, mode);
	if (handle)
		modules_rescan();
	agent_restore_signal(&old);
	return handle;
}

AGENT_EXPORT int dlclose(void *handle)
{
	sigset_t old;
	agent_block_signal(&old);
	int rc = REAL(dlclose)(handle);
	modules_rescan();
	agent_restore_signal(&old);
	return rc;
}

/*
 * dl_iterate_phdr holds the loader's lock while the program's callback runs:
 * no sampling unwind in there (unwinder.c says why), and the allocation
 * hooks must not unwind either: a callback that allocates would wait for
 * libunwind's lock, held by another thread's unwind waiting for the
 * loader's. Allocations in there are charged to the caller of
 * dl_iterate_phdr (in_loader, alloc_record.c).
 */
AGENT_EXPORT int dl_iterate_phdr(int (*callback)(struct dl_phdr_info *, size_t, void *), void *data)
{
	if (!agent_flags->enabled || agent_called_from_unwinder(__builtin_return_address(0)))
		return REAL(dl_iterate_phdr)(callback, data);
	sigset_t old;
	agent_block_signal(&old);
	sig_atomic_t was_in = agent_self.in_loader;
	uint64_t was_caller = agent_self.loader_caller;
	if (!was_in)
		agent_self.loader_caller = (uint64_t)__builtin_return_address(0);
	agent_self.in_loader = 1;
	int rc = REAL(dl_iterate_phdr)(callback, data);
	agent_self.in_loader = was_in;
	agent_self.loader_caller = was_caller;
	agent_restore_signal(&old);
	return rc;
}
