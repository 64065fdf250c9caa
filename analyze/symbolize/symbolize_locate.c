/*
 * symbolize_locate.c - which file holds a traced module: the path the trace
 * recorded, or, when it is missing or holds another build (a trace analysed
 * on another machine, after an upgrade, from an archive), the same module
 * under each --search-dir: by build-id (DIR/.build-id/xx/yyyy, the layout
 * analyze archive writes), by the recorded path below DIR, by base name.
 *
 * The build-id check is the point: a file with another build-id would give
 * plausible wrong names, so it is never used, and the message says which
 * file had which build-id.
 */
#include "symbolize_internal.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

static void hex_of(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len && i < 64; i++)
		snprintf(out + 2 * i, 3, "%02x", id[i]);
	out[2 * (len < 64 ? len : 64)] = '\0';
}

struct verdicts {
	int existed, unreadable;
	int first_errno; /* why the first unreadable one was (file.h), 0: not ELF */
	char first_unreadable[PATH_MAX];
	char others[2][PATH_MAX + 160]; /* candidates with another build-id */
	int nothers;
};

/* 1 when candidate is the module wanted (info filled), 0 otherwise. */
static int try_candidate(const char *candidate, const uint8_t *id, size_t len,
			 struct sym_elf_info *info, struct verdicts *v)
{
	if (access(candidate, F_OK) != 0)
		return 0;
	v->existed++;
	sym_elf_inspect(candidate, info);
	if (!info->readable) {
		if (v->unreadable++ == 0) {
			snprintf(v->first_unreadable, sizeof(v->first_unreadable), "%s", candidate);
			v->first_errno = info->open_errno;
		}
		return 0;
	}
	/* A trace without a build-id cannot be checked: the path is trusted. */
	if (len == 0 || (info->build_id_len == len && memcmp(info->build_id, id, len) == 0))
		return 1;
	if (v->nothers < 2) {
		char hex[129];
		hex_of(info->build_id, info->build_id_len, hex);
		snprintf(v->others[v->nothers++], sizeof(v->others[0]), "%s has build-id %s",
			 candidate, info->build_id_len ? hex : "(none)");
	}
	return 0;
}

int sym_locate_module(const char *recorded, const uint8_t *id, size_t len,
		      const char *const *dirs, int ndirs, char *out, size_t out_len,
		      struct sym_elf_info *info, char *why, size_t why_len)
{
	struct verdicts v = {0};
	why[0] = '\0';
	if (try_candidate(recorded, id, len, info, &v)) {
		snprintf(out, out_len, "%s", recorded);
		return SYM_LOCATE_FOUND;
	}
	int recorded_mismatch = v.nothers > 0, recorded_unreadable = v.unreadable > 0;
	const char *base = strrchr(recorded, '/');
	base = base != NULL ? base + 1 : recorded;
	char candidate[2 * PATH_MAX];
	for (int i = 0; i < ndirs; i++) {
		if (sym_elf_build_id_path(dirs[i], id, len, "", candidate, sizeof(candidate)) &&
		    try_candidate(candidate, id, len, info, &v))
			goto found;
		snprintf(candidate, sizeof(candidate), "%s/%s", dirs[i],
			 recorded[0] == '/' ? recorded + 1 : recorded);
		if (try_candidate(candidate, id, len, info, &v))
			goto found;
		snprintf(candidate, sizeof(candidate), "%s/%s", dirs[i], base);
		if (try_candidate(candidate, id, len, info, &v))
			goto found;
	}
	char want[129];
	hex_of(id, len, want);
	const char *where = ndirs > 0 ? " (nor in the --search-dir directories)" : "";
	if (v.nothers > 0)
		snprintf(why, why_len, "%s: %s%s%s, the trace wants %s",
			 recorded_mismatch ? "build-id differs from the traced one (rebuilt after "
					     "collection?)"
					   : "no file with the traced build-id",
			 v.others[0], v.nothers > 1 ? "; " : "", v.nothers > 1 ? v.others[1] : "", want);
	else if (recorded_unreadable || v.unreadable > 0)
		snprintf(why, why_len, "%s%s%s",
			 v.first_errno ? open_error_text(v.first_errno) : "not a readable ELF file",
			 recorded_unreadable ? "" : ": ", recorded_unreadable ? "" : v.first_unreadable);
	else
		snprintf(why, why_len, "file not found%s", where);
	info->open_errno = v.unreadable > 0 ? v.first_errno : 0;
	return v.nothers > 0 ? SYM_LOCATE_MISMATCH : SYM_LOCATE_MISSING;
found:
	snprintf(out, out_len, "%s", candidate);
	return SYM_LOCATE_FOUND;
}
