/*
 * filter_select.c - the selections of a trace of many programs (see
 * filter.h): --comm by thread, --module, --focus and --ignore by stack.
 *
 * A stack is judged once, whatever number of samples it has, and a function
 * or module once, whatever number of stacks it is in: regexec per frame of
 * every sample would cost more than the rest of the filter.
 */
#include "filter.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define UNKNOWN 0
#define NO 1
#define YES 2

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

int filter_comm_selected(const struct profile *p, uint32_t t, const struct filter_options *f)
{
	if (f->ncomms == 0)
		return 1;
	const char *program = profile_string(p, p->threads[t].command);
	for (int i = 0; i < f->ncomms; i++)
		if (!strcmp(basename_of(f->comms[i]), program))
			return 1;
	return 0;
}

static int any_match(const regex_t *re, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (regexec(&re[i], s, 0, NULL, 0) == 0)
			return 1;
	return 0;
}

/* What is known of a function: matches of --focus (bit 0), of --ignore (bit 1). */
struct select_state {
	const struct profile *p;
	const struct filter_options *f;
	uint8_t *function; /* per function: UNKNOWN, or 1 + its match bits */
	uint8_t *module;   /* per module: UNKNOWN, NO or YES (--module) */
};

static unsigned function_matches(struct select_state *st, uint32_t fn)
{
	if (st->function[fn] == UNKNOWN) {
		const char *name = profile_string(st->p, st->p->functions[fn].name);
		st->function[fn] = (uint8_t)(1 + (any_match(st->f->focus, st->f->nfocus, name) ? 1u : 0u) +
					     (any_match(st->f->ignore, st->f->nignore, name) ? 2u : 0u));
	}
	return st->function[fn] - 1u;
}

static int module_selected(struct select_state *st, uint32_t m)
{
	if (st->module[m] == UNKNOWN) {
		const char *name = basename_of(profile_string(st->p, st->p->modules[m].path));
		st->module[m] = NO;
		for (int i = 0; i < st->f->nmodules; i++)
			if (!strcmp(basename_of(st->f->modules[i]), name))
				st->module[m] = YES;
	}
	return st->module[m] == YES;
}

static int stack_selected(struct select_state *st, uint32_t stack)
{
	const struct profile *p = st->p;
	const struct profile_stack *s = &p->stacks[stack];
	int in_module = st->f->nmodules == 0, focused = st->f->nfocus == 0;
	for (uint32_t i = 0; i < s->depth; i++) {
		const struct profile_location *l = &p->locations[p->stack_locations[s->first + i]];
		if (!in_module && l->module < p->nmodules)
			in_module = module_selected(st, l->module);
		for (uint32_t k = 0; k < l->nlines && (st->f->nfocus || st->f->nignore); k++) {
			unsigned m = function_matches(st, p->lines[l->first_line + k].function);
			if (m & 2u)
				return 0;
			focused |= (m & 1u) != 0;
		}
	}
	return in_module && focused;
}

uint8_t *filter_select_stacks(const struct profile *p, const struct filter_options *f)
{
	if (!f->nmodules && !f->nfocus && !f->nignore)
		return NULL;
	struct select_state st = {.p = p, .f = f};
	st.function = calloc_or_abort(p->nfunctions ? p->nfunctions : 1, 1);
	st.module = calloc_or_abort(p->nmodules ? p->nmodules : 1, 1);
	uint8_t *keep = calloc_or_abort(p->nstacks ? p->nstacks : 1, 1);
	for (uint32_t s = 0; s < p->nstacks; s++)
		keep[s] = (uint8_t)stack_selected(&st, s);
	free(st.function);
	free(st.module);
	return keep;
}
