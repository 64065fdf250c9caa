/*
 * modules.c - the map of loaded ELF objects (executable, shared libraries,
 * dlopen'ed plugins) with what analyze needs to symbolize offline: path, load
 * bias, PT_LOAD segments and the GNU build-id, read from the loaded image
 * itself so it describes exactly what ran.
 *
 * modules_scan() runs at start-up and after every dlopen/dlclose, with the
 * sampling signal blocked and under the agent's modules lock.
 */
#include "agent.h"

#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define MAX_MODULES 4096
#define MAX_SEGMENTS 16

struct known_module {
	uint64_t load_bias;
	uint64_t first_vaddr;
	uint32_t id;
	int seen;
	char name_hash[8];
};

static struct known_module known[MAX_MODULES];
static uint32_t nknown;
static uint32_t next_module_id = 1;

static void name_key(const char *name, char key[8])
{
	uint64_t h = 1469598103934665603ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	memcpy(key, &h, 8);
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

/* Module records must not be lost: wait (up to 10 s, should collect be gone) for room. */
static void *reserve_waiting(uint32_t ring, uint32_t type, uint32_t size)
{
	for (int tries = 0; tries < 10000; tries++) {
		void *p = transport_reserve(agent_shm, ring, type, size);
		if (p)
			return p;
		usleep(1000);
	}
	return NULL;
}

static void emit_module(const struct dl_phdr_info *info, const char *path, uint32_t id)
{
	struct tr_segment segs[MAX_SEGMENTS];
	uint32_t nsegs = 0;
	for (int i = 0; i < info->dlpi_phnum && nsegs < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		segs[nsegs].vaddr = ph->p_vaddr;
		segs[nsegs].memsz = ph->p_memsz;
		segs[nsegs].file_offset = ph->p_offset;
		segs[nsegs].flags = ((ph->p_flags & PF_X) ? TRACE_SEGMENT_EXEC : 0) |
				    ((ph->p_flags & PF_W) ? TRACE_SEGMENT_WRITE : 0) |
				    ((ph->p_flags & PF_R) ? TRACE_SEGMENT_READ : 0);
		nsegs++;
	}
	uint32_t path_len = (uint32_t)strlen(path);
	uint32_t ring = agent_thread_ring();
	if (ring == AGENT_NO_RING)
		return;
	uint32_t size = (uint32_t)(sizeof(struct tr_module) + nsegs * sizeof(struct tr_segment) + path_len);
	struct tr_module *m = reserve_waiting(ring, TR_MODULE, size);
	if (!m)
		return;
	memset(m, 0, sizeof *m);
	m->time_ns = agent_now_ns();
	m->load_bias = info->dlpi_addr;
	m->id = id;
	m->build_id_len = find_build_id(info, m->build_id);
	m->nsegments = nsegs;
	m->path_len = path_len;
	memcpy(m + 1, segs, nsegs * sizeof *segs);
	memcpy((char *)(m + 1) + nsegs * sizeof *segs, path, path_len);
	transport_commit(agent_shm, ring);
}

static uint64_t first_load_vaddr(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			return info->dlpi_phdr[i].p_vaddr;
	return 0;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	int *index = data;
	char exe[4096];
	const char *path = info->dlpi_name;
	if (*index == 0 && (!path || !*path)) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = 0;
		path = exe;
	}
	(*index)++;
	if (!path || !*path)
		return 0;

	char key[8];
	name_key(path, key);
	uint64_t first = first_load_vaddr(info);
	for (uint32_t i = 0; i < nknown; i++) {
		struct known_module *k = &known[i];
		if (k->load_bias == info->dlpi_addr && k->first_vaddr == first && !memcmp(k->name_hash, key, 8)) {
			k->seen = 1;
			return 0;
		}
	}
	if (nknown == MAX_MODULES)
		return 0;
	struct known_module *k = &known[nknown++];
	k->load_bias = info->dlpi_addr;
	k->first_vaddr = first;
	k->id = next_module_id++;
	k->seen = 1;
	memcpy(k->name_hash, key, 8);
	emit_module(info, path, k->id);
	return 0;
}

void modules_scan(void)
{
	for (uint32_t i = 0; i < nknown; i++)
		known[i].seen = 0;
	int index = 0;
	dl_iterate_phdr(on_object, &index);

	uint32_t ring = agent_thread_ring();
	uint32_t kept = 0;
	for (uint32_t i = 0; i < nknown; i++) {
		if (known[i].seen) {
			known[kept++] = known[i];
			continue;
		}
		struct tr_module_unload *u;
		if (ring == AGENT_NO_RING || !(u = reserve_waiting(ring, TR_MODULE_UNLOAD, sizeof *u)))
			continue;
		u->time_ns = agent_now_ns();
		u->id = known[i].id;
		u->reserved = 0;
		transport_commit(agent_shm, ring);
	}
	nknown = kept;
}
