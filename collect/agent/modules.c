/*
 * modules.c - the map of loaded ELF objects (executable, shared libraries,
 * dlopen'ed plugins) with what analyze needs to symbolize offline: path, load
 * bias, PT_LOAD segments and the GNU build-id, read from the loaded image
 * itself so it describes exactly what ran.
 *
 * It also keeps the unwinder's frame tables (frametab.c) in step with the
 * same objects.
 *
 * modules_rescan() runs at start-up, after every dlopen/dlclose and at exit,
 * with the sampling signal blocked and under the agent's modules lock. It
 * copies what it needs while the loader lists the objects and writes the
 * records only after dl_iterate_phdr has returned: waiting for ring space
 * while holding the loader's lock would stall every thread that unwinds.
 */
#include "unwinding.h"

#include <elf.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "frametab.h"
#include "map_grow.h"
#include "trace.h"

#define MAX_MODULES 4096
#define MAX_SEGMENTS 16

struct known_module {
	uint64_t load_bias;
	uint64_t first_vaddr;
	uint64_t name_hash;
	uint32_t id;
	int seen;
};

/* A module found by the scan, copied out of the loader's data. */
struct new_module {
	uint64_t load_bias;
	uint32_t id;
	uint32_t nsegments;
	struct tr_segment segments[MAX_SEGMENTS];
	uint32_t build_id_len;
	uint8_t build_id[32];
	char path[PATH_MAX]; /* "" when it has none */
};

static struct known_module known[MAX_MODULES];
static uint32_t nknown;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

struct scan {
	int index;
	struct new_module *found;
	uint32_t nfound, capacity;
};

static uint64_t hash_name(const char *name)
{
	uint64_t h = 1469598103934665603ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h;
}

static uint32_t find_build_id(const struct dl_phdr_info *info, uint8_t out[32])
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const uint8_t *name = p + sizeof *nh;
			const uint8_t *desc = name + ((nh->n_namesz + 3) & ~3u);
			const uint8_t *next = desc + ((nh->n_descsz + 3) & ~3u);
			if (next > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
			    nh->n_descsz > 0 && nh->n_descsz <= 32) {
				memcpy(out, desc, nh->n_descsz);
				return nh->n_descsz;
			}
			p = next;
		}
	}
	return 0;
}

static uint64_t first_load_vaddr(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			return info->dlpi_phdr[i].p_vaddr;
	return 0;
}

static void copy_module(struct new_module *m, const struct dl_phdr_info *info, const char *path)
{
	memset(m, 0, sizeof *m);
	m->load_bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum && m->nsegments < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		struct tr_segment *s = &m->segments[m->nsegments++];
		s->vaddr = ph->p_vaddr;
		s->memsz = ph->p_memsz;
		s->file_offset = ph->p_offset;
		s->flags = ((ph->p_flags & PF_X) ? TRACE_SEGMENT_EXEC : 0) |
			   ((ph->p_flags & PF_W) ? TRACE_SEGMENT_WRITE : 0) |
			   ((ph->p_flags & PF_R) ? TRACE_SEGMENT_READ : 0);
	}
	m->build_id_len = find_build_id(info, m->build_id);
	size_t n = strnlen(path, sizeof m->path - 1);
	memcpy(m->path, path, n);
	m->path[n] = 0;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct scan *scan = data;
	char exe[PATH_MAX];
	const char *path = info->dlpi_name;
	if (scan->index++ == 0 && (!path || !*path)) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	if (!path || !*path)
		return 0;

	uint64_t name_hash = hash_name(path), first = first_load_vaddr(info);
	for (uint32_t i = 0; i < nknown; i++) {
		struct known_module *k = &known[i];
		if (k->load_bias == info->dlpi_addr && k->first_vaddr == first && k->name_hash == name_hash) {
			k->seen = 1;
			return 0;
		}
	}
	if (nknown == MAX_MODULES)
		return 0;
	if (scan->nfound == scan->capacity) {
		uint32_t capacity = scan->capacity ? 2 * scan->capacity : 16;
		void *grown = map_grow(scan->found, scan->capacity * sizeof *scan->found, capacity * sizeof *scan->found);
		if (!grown)
			return 0;
		scan->found = grown;
		scan->capacity = capacity;
	}
	struct known_module *k = &known[nknown++];
	k->load_bias = info->dlpi_addr;
	k->first_vaddr = first;
	k->name_hash = name_hash;
	k->id = atomic_fetch_add(&agent_transport.header->next_module_id, 1) + 1;
	k->seen = 1;
	struct new_module *m = &scan->found[scan->nfound++];
	copy_module(m, info, path);
	m->id = k->id;
	return 0;
}

static void write_module(uint32_t ring, const struct new_module *m)
{
	uint32_t path_len = (uint32_t)strlen(m->path);
	uint32_t size = (uint32_t)(sizeof(struct tr_module) + m->nsegments * sizeof(struct tr_segment) + path_len);
	struct tr_module *r = ring == AGENT_NO_RING ? NULL : agent_reserve_waiting(ring, TR_MODULE, size);
	if (!r) {
		agent_count_record_lost();
		return;
	}
	memset(r, 0, sizeof *r);
	r->time_ns = agent_now_ns();
	r->load_bias = m->load_bias;
	r->id = m->id;
	r->build_id_len = m->build_id_len;
	memcpy(r->build_id, m->build_id, sizeof r->build_id);
	r->nsegments = m->nsegments;
	r->path_len = path_len;
	memcpy(r + 1, m->segments, m->nsegments * sizeof(struct tr_segment));
	if (path_len)
		memcpy((char *)(r + 1) + m->nsegments * sizeof(struct tr_segment), m->path, path_len);
	transport_commit(&agent_transport, ring);
}

static void write_unload(uint32_t ring, uint32_t id)
{
	struct tr_module_unload *u = ring == AGENT_NO_RING ? NULL : agent_reserve_waiting(ring, TR_MODULE_UNLOAD, sizeof *u);
	if (!u) {
		agent_count_record_lost();
		return;
	}
	u->time_ns = agent_now_ns();
	u->id = id;
	u->reserved = 0;
	transport_commit(&agent_transport, ring);
}

static void scan_objects(void)
{
	struct scan scan = { 0, NULL, 0, 0 };
	for (uint32_t i = 0; i < nknown; i++)
		known[i].seen = 0;
	REAL(dl_iterate_phdr)(on_object, &scan); /* the signal is blocked already */

	uint32_t unloaded = 0;
	for (uint32_t i = 0; i < nknown; i++)
		unloaded += !known[i].seen;
	uint32_t ring = scan.nfound || unloaded ? agent_ring_waiting() : AGENT_NO_RING;
	for (uint32_t i = 0; i < scan.nfound; i++)
		write_module(ring, &scan.found[i]);
	if (scan.found)
		munmap(scan.found, scan.capacity * sizeof *scan.found);

	uint32_t kept = 0;
	for (uint32_t i = 0; i < nknown; i++) {
		if (known[i].seen)
			known[kept++] = known[i];
		else
			write_unload(ring, known[i].id);
	}
	nknown = kept;
}

void modules_rescan(void)
{
	if (!agent_flags->enabled)
		return;
	/* Not counted internal: it allocates nothing (its scratch is mapped), so a program's signal handler
	 * that allocates while this thread rescans (at every dlopen and dlclose, tables built then too) is
	 * recorded, nested (depth is held). Counted internal, as before, 600-660 of 880-920 such handler
	 * allocations were lost over 300 dlopen/dlclose pairs under a 100 us SIGALRM (e2e_alloc_cases). */
	/* Inside the fork gate, as unwinds are (unwind_gate.c): a fork while this thread is in dl_iterate_phdr
	 * leaves the lock it takes held in the child (glibc 2.36 resets the loader's main lock in a child,
	 * not that one), and the child's own rescan waits for it forever. A program's thread waits for a
	 * fork to end (unwind_gate_wait enters at once when none is under way). */
	int gated = unwind_gate_wait() == 0;
	pthread_mutex_lock(&modules_lock);
	agent_enter();
	scan_objects();
	/* The unwinder's tables. When only CPU samples are taken their rows are built as walks first need
	 * them, 16 KiB of text at a time, by the agent's thread (modules_build_tables, woken): a process pays
	 * for what it runs (whole tables against blocks: bench/README.md). Allocations, which unwind tens
	 * of thousands of times before a build could catch up, and --no-cpu, which has no agent's thread,
	 * build them whole now. */
	frametab_rescan(REAL(dl_iterate_phdr), !agent_config.signal || agent_config.allocs);
	agent_leave();
	pthread_mutex_unlock(&modules_lock);
	if (gated)
		unwind_gate_leave();
}

static void build_tables(int wait)
{
	if (!agent_flags->enabled || !frametab_wanted())
		return;
	/* In the fork gate (modules_rescan says why: a bash subshell's child hung so, 1 in 4 runs of
	 * e2e_collect_fds under ASan); during a fork the agent's thread builds them next time round. */
	if (unwind_gate_enter() < 0)
		return;
	sigset_t old;
	agent_block_signal(&old);
	if (wait ? pthread_mutex_lock(&modules_lock) == 0 : pthread_mutex_trylock(&modules_lock) == 0) {
		agent_self.internal++;
		frametab_build_wanted(REAL(dl_iterate_phdr));
		agent_self.internal--;
		pthread_mutex_unlock(&modules_lock);
	}
	agent_restore_signal(&old);
	unwind_gate_leave();
}

void modules_build_tables(void)
{
	build_tables(1);
}

/*
 * From the handler (background.c: a process with one thread has no agent's
 * thread to do it). Building maps memory and parses, which a handler may do;
 * what it must not is wait: for the modules' lock, held by the interrupted
 * rescan, or for the loader's, which dl_iterate_phdr takes. The program takes
 * the loader's only in dlopen, dlclose and dl_iterate_phdr, each run with the
 * sampling signal blocked (loader.c), so no handler interrupts its holder.
 */
void modules_build_tables_if_free(void)
{
	build_tables(0);
}

void modules_forget(void)
{
	/* In a fork child the lock may have been held by a thread that no longer exists. */
	pthread_mutex_init(&modules_lock, NULL);
	nknown = 0;
	frametab_forget();
}
