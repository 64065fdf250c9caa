/*
 * symbolize_links.c - the other files a debug file's DWARF points to, found
 * and checked before anything is read from them:
 *
 * - the dwz supplementary file (.gnu_debugaltlink, or DWARF 5 .debug_sup):
 *   by the name it records (absolute, or relative to the debug file), then
 *   by its build-id under each debug directory and /usr/lib/debug, then
 *   through debuginfod; it is used only if its build-id is the one recorded;
 * - split DWARF: a .dwp package beside the module (or in a debug
 *   directory), else each unit's .dwo by DW_AT_dwo_name and the compile
 *   directory (or its base name in a debug directory); a split unit is used
 *   only if its DWO id is its skeleton's.
 *
 * What cannot be used is said once (the first problem, and how many more),
 * naming the file: the caller then names that code from the symbol table.
 */
#include "symbolize_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

void sym_problem(struct sym_links *l, const char *fmt, ...)
{
	va_list ap;
	if (l->nproblems++ > 0)
		return;
	va_start(ap, fmt);
	vsnprintf(l->problem, sizeof(l->problem), fmt, ap);
	va_end(ap);
	/* The names in it come from the debug file (.gnu_debugaltlink,
	 * DW_AT_dwo_name, the compile directory) and the warning reaches a
	 * terminal: no control character may drive it. */
	for (char *c = l->problem; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
}

/* Directory part of path into out ("." when none). */
static void dir_of(const char *path, char *out, size_t len)
{
	snprintf(out, len, "%s", path);
	char *slash = strrchr(out, '/');
	if (slash == NULL)
		snprintf(out, len, ".");
	else if (slash == out)
		out[1] = '\0';
	else
		*slash = '\0';
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash != NULL ? slash + 1 : path;
}

/* What the supplementary link says: file name and build-id. 0 when there is
 * no link, 1 when there is one. */
static int read_sup_link(struct sym_dwarf *d, char *name, size_t name_len, uint8_t *id,
			 size_t *id_len)
{
	struct sym_slice alt = sym_section_slice(&d->sections, ".gnu_debugaltlink");
	struct sym_slice sup = sym_section_slice(&d->sections, ".debug_sup");
	*id_len = 0;
	name[0] = '\0';
	if (alt.data != NULL) {
		const uint8_t *nul = memchr(alt.data, 0, (size_t)alt.size);
		if (nul == NULL)
			return 1; /* a link, but unreadable: nothing will match */
		size_t n = (size_t)(nul - alt.data);
		snprintf(name, name_len, "%.*s", (int)n, (const char *)alt.data);
		size_t left = (size_t)alt.size - n - 1;
		if (left > 0 && left <= 64) {
			memcpy(id, nul + 1, left);
			*id_len = left;
		}
		return 1;
	}
	/* version (2), is_supplementary (1), file name, checksum length, checksum */
	if (sup.data == NULL || sup.size < 4 || sup.data[2] != 0)
		return 0; /* absent, or this is itself a supplementary file */
	const uint8_t *nul = memchr(sup.data + 3, 0, (size_t)sup.size - 3);
	if (nul == NULL)
		return 1;
	size_t n = (size_t)(nul - sup.data - 3);
	snprintf(name, name_len, "%.*s", (int)n, (const char *)sup.data + 3);
	const uint8_t *p = nul + 1, *end = sup.data + sup.size;
	uint64_t len = 0;
	for (unsigned shift = 0; p < end && shift < 63; shift += 7) {
		len |= (uint64_t)(*p & 0x7f) << shift;
		if (!(*p++ & 0x80))
			break;
	}
	if (len > 0 && len <= 64 && len <= (uint64_t)(end - p)) {
		memcpy(id, p, (size_t)len);
		*id_len = (size_t)len;
	}
	return 1;
}

/* The checksum a supplementary file names itself by in its own DWARF 5
 * .debug_sup (dwz -5 gives it no build-id note): its length, 0 if none. */
static size_t own_checksum(struct sym_dwarf *sup, uint8_t *out)
{
	struct sym_slice s = sym_section_slice(&sup->sections, ".debug_sup");
	if (s.data == NULL || s.size < 5 || s.data[2] != 1)
		return 0;
	const uint8_t *nul = memchr(s.data + 3, 0, (size_t)s.size - 3);
	if (nul == NULL || nul + 1 >= s.data + s.size)
		return 0;
	size_t len = nul[1]; /* a one-byte LEB128: checksums are short */
	if (len == 0 || len > 64 || (nul[1] & 0x80) || len > (size_t)(s.data + s.size - nul - 2))
		return 0;
	memcpy(out, nul + 2, len);
	return len;
}

/* 0: candidate is the supplementary file wanted (opened into *out);
 * -1: not there; -2: there but not usable (problem said). */
static int try_sup(struct sym_links *l, const char *candidate, const uint8_t *id, size_t id_len,
		   struct sym_dwarf **out)
{
	if (access(candidate, F_OK) != 0)
		return -1;
	struct sym_elf_info info;
	sym_elf_inspect(candidate, &info);
	struct sym_dwarf *sup = info.readable ? sym_dwarf_open(candidate, 0) : NULL;
	if (sup == NULL) {
		sym_problem(l, "dwz supplementary file %s: not a readable ELF file", candidate);
		return -2;
	}
	uint8_t own[64];
	size_t own_len = info.build_id_len;
	memcpy(own, info.build_id, own_len);
	if (own_len == 0)
		own_len = own_checksum(sup, own);
	if (id_len > 0 && (own_len != id_len || memcmp(own, id, id_len) != 0)) {
		sym_problem(l, "dwz supplementary file %s: another build (build-id differs)",
			    candidate);
		sym_dwarf_close(sup);
		return -2;
	}
	if (sup->info.data == NULL || sup->str.data == NULL) {
		sym_problem(l, "dwz supplementary file %s: damaged or truncated", candidate);
		sym_dwarf_close(sup);
		return -2;
	}
	*out = sup;
	return 0;
}

int sym_links_find_sup(struct sym_links *l, struct sym_dwarf *d, const char *debug_path)
{
	char name[PATH_MAX], candidate[2 * PATH_MAX + 64], dir[PATH_MAX];
	uint8_t id[64];
	size_t id_len;
	if (!read_sup_link(d, name, sizeof(name), id, &id_len))
		return 0;
	struct sym_dwarf *sup = NULL;
	int res = -1;
	if (name[0] == '/') {
		res = try_sup(l, name, id, id_len, &sup);
	} else if (name[0] != '\0') {
		dir_of(debug_path, dir, sizeof(dir));
		snprintf(candidate, sizeof(candidate), "%s/%s", dir, name);
		res = try_sup(l, candidate, id, id_len, &sup);
	}
	/* By build-id: the debug directories, then the system's. */
	for (int i = -1; res != 0 && id_len >= 2 && i < l->search->ndebug_dirs; i++) {
		const char *base = i < 0 ? SYSTEM_DEBUG_DIR : l->search->debug_dirs[i];
		if (sym_elf_build_id_path(base, id, id_len, ".debug", candidate, sizeof(candidate)))
			if (try_sup(l, candidate, id, id_len, &sup) == 0)
				res = 0;
	}
	if (res != 0 && id_len >= 2 && l->search->fetch != NULL &&
	    l->search->fetch(l->search->fetch_ctx, id, id_len, name, candidate,
			     sizeof(candidate)) == 0)
		res = try_sup(l, candidate, id, id_len, &sup);
	if (res != 0) {
		sym_problem(l, "dwz supplementary file %s: not found", name[0] ? name : "(unnamed)");
		return -1;
	}
	sym_dwarf_set_sup(d, sup);
	l->sup = sup;
	memcpy(l->sup_id, id, id_len);
	l->sup_id_len = id_len;
	return 1;
}

/* ---- split DWARF ---- */

/* Open the .dwp of the module, if there is one: beside the module or its
 * debug file, or by base name or build-id in a debug directory. */
static void open_dwp(struct sym_links *l)
{
	l->dwp_tried = 1;
	const struct sym_search *s = l->search;
	char candidate[2 * PATH_MAX + 64];
	const char *paths[2] = {s->module_path, l->debug_path};
	for (int i = 0; i < 2 && l->dwp == NULL; i++) {
		if (paths[i] == NULL || (i == 1 && s->module_path != NULL &&
					 strcmp(paths[0], paths[1]) == 0))
			continue;
		snprintf(candidate, sizeof(candidate), "%s.dwp", paths[i]);
		if (access(candidate, F_OK) == 0)
			l->dwp = sym_dwarf_open(candidate, 1);
	}
	for (int i = 0; i < s->ndebug_dirs && l->dwp == NULL; i++) {
		if (s->module_path != NULL) {
			snprintf(candidate, sizeof(candidate), "%s/%s.dwp", s->debug_dirs[i],
				 base_of(s->module_path));
			if (access(candidate, F_OK) == 0)
				l->dwp = sym_dwarf_open(candidate, 1);
		}
		if (l->dwp == NULL && s->build_id_len >= 2 &&
		    sym_elf_build_id_path(s->debug_dirs[i], s->build_id, s->build_id_len, ".dwp",
					  candidate, sizeof(candidate)) &&
		    access(candidate, F_OK) == 0)
			l->dwp = sym_dwarf_open(candidate, 1);
	}
	if (l->dwp != NULL && l->dwp->dwp == NULL) {
		sym_problem(l, "split DWARF package %s: no readable unit index", l->dwp->path);
		sym_dwarf_close(l->dwp);
		l->dwp = NULL;
	}
}

/* An already opened .dwo, or a newly opened one; NULL when unreadable. */
static struct sym_dwarf *open_dwo(struct sym_links *l, const char *path)
{
	for (size_t i = 0; i < l->ndwos; i++)
		if (strcmp(l->dwos[i]->path, path) == 0)
			return l->dwos[i];
	struct sym_dwarf *d = sym_dwarf_open(path, 1);
	if (d == NULL)
		return NULL;
	ALLOC_GROW(l->dwos, l->ndwos + 1, l->dwos_cap);
	l->dwos[l->ndwos++] = d;
	return d;
}

/* The DWO id of split unit u (DWARF 5: its header; GNU DWARF 4: its root). */
static int split_id(struct sym_unit *u, struct sym_strings *st, uint64_t *id)
{
	if (u->unit_type != DW_UT_split_compile && u->version >= 5)
		return 0;
	if (u->version >= 5) {
		*id = u->dwo_id;
		return 1;
	}
	struct sym_die root;
	struct sym_value v[SYM_AT_COUNT];
	uint64_t pos = u->first_die;
	if (sym_unit_open(u, st) != 0 || sym_die_read(u, &pos, &root) != 0 ||
	    sym_die_values(u, &root, v) != 0 || v[SYM_AT_DWO_ID].form == 0)
		return 0;
	*id = v[SYM_AT_DWO_ID].u;
	return 1;
}

/* The split unit of file d whose id is want (the first, when several
 * have it), NULL if none; *other: d has split units, of other ids. The ids
 * are read once per file: skeletons x units would be quadratic. */
static struct sym_unit *unit_with_id(struct sym_dwarf *d, uint64_t want, struct sym_strings *st,
				     int *other)
{
	if (d->split_ids_state == 0) {
		d->split_ids_state = 1;
		hashmap_init(&d->split_ids, d->nunits);
		for (size_t i = 0; i < d->nunits; i++) {
			uint64_t id;
			if (!split_id(&d->units[i], st, &id))
				continue;
			d->split_ids_state = 2;
			uint32_t *slot = hashmap_slot(&d->split_ids, id);
			if (*slot == HASHMAP_NONE)
				*slot = (uint32_t)i;
		}
	}
	uint32_t i = hashmap_get(&d->split_ids, want);
	if (i == HASHMAP_NONE) {
		*other = d->split_ids_state == 2;
		return NULL;
	}
	return &d->units[i];
}

struct sym_unit *sym_links_split_unit(struct sym_links *l, const struct sym_unit *skeleton,
				      const struct sym_value *values, struct sym_strings *st)
{
	uint64_t id = skeleton->dwo_id;
	if (skeleton->version < 5) {
		if (values[SYM_AT_DWO_ID].form == 0)
			return NULL;
		id = values[SYM_AT_DWO_ID].u;
	}
	if (!l->dwp_tried)
		open_dwp(l);
	if (l->dwp != NULL) {
		struct sym_unit *u = sym_dwarf_find_dwo_unit(l->dwp, id);
		if (u != NULL)
			return u;
	}
	const char *name = sym_value_string(skeleton, &values[SYM_AT_DWO_NAME]);
	if (name == NULL || name[0] == '\0') {
		if (l->dwp == NULL)
			sym_problem(l, "split DWARF unit %016llx: no .dwo name and no .dwp",
				    (unsigned long long)id);
		else
			sym_problem(l, "split DWARF package %s: no unit %016llx", l->dwp->path,
				    (unsigned long long)id);
		return NULL;
	}
	char path[2 * PATH_MAX + 64];
	if (name[0] == '/' || skeleton->comp_dir == NULL)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", skeleton->comp_dir, name);
	const char *tried = path;
	int found = access(path, F_OK) == 0;
	char alt[4 * PATH_MAX + 64];
	/* By base name in a debug directory, else by the whole path below it:
	 * the second try must not overwrite a name the first one found. */
	for (int i = 0; i < l->search->ndebug_dirs && !found; i++) {
		snprintf(alt, sizeof(alt), "%s/%s", l->search->debug_dirs[i], base_of(name));
		found = access(alt, F_OK) == 0;
		if (!found && path[0] == '/') {
			snprintf(alt, sizeof(alt), "%s%s", l->search->debug_dirs[i], path);
			found = access(alt, F_OK) == 0;
		}
		if (found)
			tried = alt;
	}
	if (!found) {
		sym_problem(l, "split DWARF file %s: not found", path);
		return NULL;
	}
	struct sym_dwarf *d = open_dwo(l, tried);
	if (d == NULL || d->nunits == 0) {
		sym_problem(l, "split DWARF file %s: damaged or truncated", tried);
		return NULL;
	}
	int other = 0;
	struct sym_unit *u = unit_with_id(d, id, st, &other);
	if (u == NULL)
		sym_problem(l, "split DWARF file %s: %s", tried,
			    other ? "another build (its DWO id differs)" : "damaged or truncated");
	return u;
}

void sym_links_free(struct sym_links *l)
{
	const struct sym_search *s = l->search;
	if (s != NULL && s->used != NULL) {
		if (l->sup != NULL)
			s->used(s->used_ctx, "sup", l->sup->path, l->sup_id, l->sup_id_len);
		if (l->dwp != NULL)
			s->used(s->used_ctx, "dwp", l->dwp->path, s->build_id, s->build_id_len);
		for (size_t i = 0; i < l->ndwos; i++)
			if (l->dwos[i]->nunits > 0)
				s->used(s->used_ctx, "dwo", l->dwos[i]->path, NULL, 0);
	}
	for (size_t i = 0; i < l->ndwos; i++)
		sym_dwarf_close(l->dwos[i]);
	free(l->dwos);
	sym_dwarf_close(l->dwp);
	sym_dwarf_close(l->sup);
	l->dwos = NULL;
	l->ndwos = 0;
	l->dwp = l->sup = NULL;
}
