/*
 * alloc_rebind.c - libraries loaded with RTLD_DEEPBIND, and code calling
 * libc's __libc_malloc family, made to allocate through the hooks.
 *
 * Such a library looks its symbols up in its own dependencies before the
 * global scope, where LD_PRELOAD put the agent: its malloc, free... bind to
 * libc's definitions, and every allocation it makes bypasses the hooks (a
 * false leak for each block the program allocated and it freed, a free of
 * nothing for each it allocated and the program frees). As heaptrack does,
 * after such a dlopen the GOT entries of the malloc family that hold libc's
 * definitions are pointed at the hooks (RELRO made writable for the
 * moment), in the objects that dlopen loaded (the library and its new
 * dependencies: they all look symbols up in the library's scope). A lazy PLT
 * entry not bound yet is bound to the hook at once when the loader would
 * bind it to libc's (dlsym in the library's scope says so), never when the
 * library brings a malloc of its own. Objects loaded before keep their
 * bindings, and objects of another namespace (dlmopen) bind to their own
 * libc.
 *
 * libc's other names of the family (__libc_malloc, __libc_free...: the same
 * functions, which code that means to bypass an interposer calls, and
 * memcheck counts) are pointed at the hooks the same way in every object, at
 * the agent's start and in the objects each dlopen loads.
 *
 * What cannot be reached: the loader binds the library's references and runs
 * its constructors inside dlopen, before the wrapper regains control, so what
 * those constructors allocate is not recorded (a later free of it is a free of
 * nothing analyze knows). A rebound object that has constructors is counted
 * (header.deepbind_rebound) and the first named, and collect says so.
 */
#include "allocations.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Both 64-bit: ELF64 relocations. */
#if defined(__x86_64__)
#define RELOC_JUMP_SLOT R_X86_64_JUMP_SLOT
#define RELOC_GLOB_DAT R_X86_64_GLOB_DAT
#define RELOC_ABSOLUTE R_X86_64_64
#elif defined(__aarch64__)
#define RELOC_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define RELOC_GLOB_DAT R_AARCH64_GLOB_DAT
#define RELOC_ABSOLUTE R_AARCH64_ABS64
#endif

#ifdef RELOC_JUMP_SLOT

static const struct member {
	const char *name;
	void *hook;
	void *const *real; /* agent_real's entry */
	int alias; /* libc's other name of the function (__libc_malloc: malloc's address) */
} family[] = {
#define MEMBER(name) { #name, (void *)agent_hook_##name, (void *const *)&agent_real.name, 0 },
#define ALIAS(name) { "__libc_" #name, (void *)agent_hook_##name, (void *const *)&agent_real.name, 1 },
	AGENT_MALLOC_FAMILY(MEMBER)
	ALIAS(malloc) ALIAS(calloc) ALIAS(realloc) ALIAS(free) ALIAS(memalign) ALIAS(valloc) ALIAS(pvalloc)
#undef ALIAS
#undef MEMBER
};

/* One loaded object, as its dynamic section and program headers describe it. */
struct object {
	const struct dl_phdr_info *info;
	void *const *scope_real; /* per member, what a lookup in the library's scope finds */
	int aliases_only; /* only libc's other names are rebound (no RTLD_DEEPBIND) */
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	uintptr_t relro_start, relro_end; /* whole pages the loader made read-only */
	int relro_writable;
	int has_constructors;
	unsigned rebound;
};

static const struct member *member_named(const char *name)
{
	for (size_t i = 0; i < sizeof family / sizeof *family; i++)
		if (!strcmp(family[i].name, name))
			return &family[i];
	return NULL;
}

/* A d_ptr of the dynamic section: glibc relocates them in place, the vDSO's are offsets. */
static uintptr_t dynamic_address(const struct object *o, ElfW(Addr) value)
{
	return value < o->info->dlpi_addr ? o->info->dlpi_addr + value : value;
}

/* Whether address lies in one of the object's loaded segments (a lazy PLT entry points back into its own). */
static int in_object(const struct object *o, uintptr_t address)
{
	for (int i = 0; i < o->info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &o->info->dlpi_phdr[i];
		uintptr_t start = o->info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && address >= start && address - start < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* Whether slot can be written now (RELRO opened once per object, closed by the caller). */
static int writable(struct object *o, uintptr_t slot)
{
	if (slot < o->relro_start || slot >= o->relro_end || o->relro_writable)
		return 1;
	if (mprotect((void *)o->relro_start, o->relro_end - o->relro_start, PROT_READ | PROT_WRITE) < 0)
		return 0;
	o->relro_writable = 1;
	return 1;
}

static void rebind_relocations(struct object *o, const ElfW(Rela) *rel, size_t bytes)
{
	for (size_t i = 0; i < bytes / sizeof *rel; i++) {
		uint32_t type = (uint32_t)ELF64_R_TYPE(rel[i].r_info), sym = (uint32_t)ELF64_R_SYM(rel[i].r_info);
		if (!sym || (type != RELOC_JUMP_SLOT && type != RELOC_GLOB_DAT && type != RELOC_ABSOLUTE))
			continue;
		const ElfW(Sym) *s = &o->symtab[sym];
		unsigned kind = ELF64_ST_TYPE(s->st_info);
		if (s->st_name >= o->strsz || (kind != STT_FUNC && kind != STT_NOTYPE) || s->st_shndx != SHN_UNDEF)
			continue; /* not a reference to a function defined elsewhere */
		const struct member *m = member_named(o->strtab + s->st_name);
		if (!m || !*m->real || (o->aliases_only && !m->alias))
			continue;
		void **slot = (void **)(o->info->dlpi_addr + rel[i].r_offset);
		void *value = __atomic_load_n(slot, __ATOMIC_RELAXED);
		int bound_to_libc = value == *m->real;
		int lazy_to_libc = type == RELOC_JUMP_SLOT && in_object(o, (uintptr_t)value) &&
				   o->scope_real[m - family] == *m->real;
		if (!(bound_to_libc || lazy_to_libc) || !writable(o, (uintptr_t)slot))
			continue;
		__atomic_store_n(slot, m->hook, __ATOMIC_RELAXED);
		o->rebound += bound_to_libc && !m->alias;
	}
}

/* What alloc_rebind's walk needs: the objects loaded before, and the lookups in the library's scope. */
struct walk {
	const struct alloc_loaded *before; /* NULL: every object */
	int aliases_only;
	void *scope_real[sizeof family / sizeof *family];
};

static int loaded_before(const struct alloc_loaded *before, const struct dl_phdr_info *info)
{
	for (size_t i = 0; before && i < before->n; i++)
		if (before->phdr[i] == info->dlpi_phdr)
			return 1;
	return 0;
}

static int rebind_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct walk *walk = data;
	if (loaded_before(walk->before, info))
		return 0;
	struct object o = { .info = info, .scope_real = walk->scope_real, .aliases_only = walk->aliases_only };
	const ElfW(Dyn) *dynamic = NULL;
	long page = sysconf(_SC_PAGESIZE);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_DYNAMIC)
			dynamic = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO) {
			/* As the loader protects it: whole pages, the last partial one left writable. */
			o.relro_start = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(page - 1);
			o.relro_end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(uintptr_t)(page - 1);
		}
	}
	if (!dynamic)
		return 0;
	ElfW(Addr) rela = 0, jmprel = 0;
	size_t rela_bytes = 0, jmprel_bytes = 0;
	int plt_is_rela = 1;
	for (const ElfW(Dyn) *d = dynamic; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: o.symtab = (const ElfW(Sym) *)dynamic_address(&o, d->d_un.d_ptr); break;
		case DT_STRTAB: o.strtab = (const char *)dynamic_address(&o, d->d_un.d_ptr); break;
		case DT_STRSZ: o.strsz = d->d_un.d_val; break;
		case DT_RELA: rela = d->d_un.d_ptr; break;
		case DT_RELASZ: rela_bytes = d->d_un.d_val; break;
		case DT_JMPREL: jmprel = d->d_un.d_ptr; break;
		case DT_PLTRELSZ: jmprel_bytes = d->d_un.d_val; break;
		case DT_PLTREL: plt_is_rela = d->d_un.d_val == DT_RELA; break;
		case DT_INIT: case DT_PREINIT_ARRAYSZ: case DT_INIT_ARRAYSZ:
			o.has_constructors |= d->d_tag == DT_INIT || d->d_un.d_val > 0;
			break;
		}
	}
	if (!o.symtab || !o.strtab)
		return 0;
	if (rela)
		rebind_relocations(&o, (const ElfW(Rela) *)dynamic_address(&o, rela), rela_bytes);
	if (jmprel && plt_is_rela)
		rebind_relocations(&o, (const ElfW(Rela) *)dynamic_address(&o, jmprel), jmprel_bytes);
	if (o.relro_writable)
		mprotect((void *)o.relro_start, o.relro_end - o.relro_start, PROT_READ);
	struct transport_header *h = agent_transport.header;
	if (o.rebound && o.has_constructors && h) {
		if (atomic_fetch_add(&h->deepbind_rebound, 1) == 0) {
			const char *name = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "?";
			size_t len = strlen(name), room = sizeof h->deepbind_library - 1;
			memcpy(h->deepbind_library, len > room ? name + len - room : name, len > room ? room : len);
		}
	}
	return 0;
}

static int note_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct alloc_loaded *before = data;
	if (before->n == sizeof before->phdr / sizeof *before->phdr) {
		before->overflow = 1;
		return 1;
	}
	before->phdr[before->n++] = info->dlpi_phdr;
	return 0;
}

void alloc_rebind_note(struct alloc_loaded *before)
{
	before->n = 0;
	before->overflow = 0;
	REAL(dl_iterate_phdr)(note_object, before);
}

void alloc_rebind(void *handle, const struct alloc_loaded *before)
{
	if (before->overflow)
		return; /* which objects are new is not known: none is touched */
	struct walk walk = { before, 0, { 0 } };
	sigset_t old;
	agent_internal_begin(&old); /* dlsym allocates (a name not found: its error), for the agent */
	for (size_t i = 0; i < sizeof family / sizeof *family; i++)
		walk.scope_real[i] = dlsym(handle, family[i].name);
	REAL(dl_iterate_phdr)(rebind_object, &walk);
	agent_internal_end(&old);
}

void alloc_rebind_aliases(const struct alloc_loaded *before)
{
	if (before && before->overflow)
		return;
	struct walk walk = { before, 1, { 0 } };
	sigset_t old;
	agent_internal_begin(&old); /* as in alloc_rebind */
	for (size_t i = 0; i < sizeof family / sizeof *family; i++)
		if (family[i].alias)
			walk.scope_real[i] = dlsym(RTLD_DEFAULT, family[i].name);
	REAL(dl_iterate_phdr)(rebind_object, &walk);
	agent_internal_end(&old);
}

#else

void alloc_rebind_note(struct alloc_loaded *before)
{
	before->n = 0;
}

void alloc_rebind(void *handle, const struct alloc_loaded *before)
{
	(void)handle;
	(void)before;
}

void alloc_rebind_aliases(const struct alloc_loaded *before)
{
	(void)before;
}

#endif
