/*
 * jitmap_parse.c - parse perf maps (see jitmap_parse.h). Every line is untrusted: START
 * and SIZE must be hex and fit 64 bits, the range must not wrap, the name
 * must be there; anything else is skipped and counted, never guessed at.
 * Names may hold anything the runtime wrote: control characters become '?'
 * so that no name can drive a terminal.
 *
 * V8 (node --perf-basic-prof) writes "JS:*hotAlpha /tmp/app.js:2:18" (the
 * tier: ~ interpreted, ^ baseline, + maglev, * optimized): one function in
 * up to four copies. They read as one function, hotAlpha, defined at
 * app.js:2, so a profile does not split its time across tiers.
 */
#include "jitmap_parse.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static const char *keep(struct jit_symbols *js, const char *s, size_t n)
{
	char *copy = realloc_or_abort(NULL, n + 1);
	for (size_t i = 0; i < n; i++)
		copy[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	copy[n] = '\0';
	ALLOC_GROW(js->strings, js->nstrings + 1, js->strings_cap);
	js->strings[js->nstrings++] = copy;
	return copy;
}

/* Hex number at *p (at most 16 digits, optional 0x): 1, or 0 when none. */
static int hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	uint64_t v = 0;
	int digits = 0;
	for (; s < end; s++, digits++) {
		int d = *s >= '0' && *s <= '9'   ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
			: *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
						 : -1;
		if (d < 0)
			break;
		if (digits == 16)
			return 0;
		v = v << 4 | (uint64_t)d;
	}
	*p = s;
	*out = v;
	return digits > 0;
}

/* V8's "PREFIX:[tier]name file:line:column" into function, file and line. */
static void split_v8(struct jit_symbols *js, struct jit_symbol *sym)
{
	static const char *const prefixes[] = {"JS:", "LazyCompile:", "Function:", "Script:", "Eval:"};
	const char *s = sym->name;
	size_t plen = 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !plen; i++)
		if (!strncmp(s, prefixes[i], strlen(prefixes[i])))
			plen = strlen(prefixes[i]);
	if (!plen)
		return;
	s += plen;
	if (*s && strchr("~^*+-", *s))
		s++;
	const char *space = strrchr(s, ' ');
	const char *where = space ? space + 1 : NULL;
	/* file:line or file:line:column at the end */
	const char *colon = where ? strrchr(where, ':') : NULL;
	char *stop;
	unsigned long line = colon ? strtoul(colon + 1, &stop, 10) : 0;
	if (colon && *stop == '\0' && colon > where) {
		const char *c2 = colon - 1;
		while (c2 > where && *c2 != ':')
			c2--;
		unsigned long first = *c2 == ':' ? strtoul(c2 + 1, &stop, 10) : 0;
		if (*c2 == ':' && stop == colon) { /* file:line:column */
			line = first;
			colon = c2;
		}
		sym->file = keep(js, where, (size_t)(colon - where));
		sym->line = line > UINT32_MAX ? 0 : (uint32_t)line;
	} else {
		space = NULL;
	}
	size_t n = space ? (size_t)(space - s) : strlen(s);
	sym->function = n ? keep(js, s, n) : "(anonymous)";
}

size_t jit_symbols_add(struct jit_symbols *js, const uint8_t *text, size_t len, uint64_t line_base,
		       uint64_t *first_bad)
{
	size_t bad = 0;
	const char *p = (const char *)text, *end = p + len;
	for (uint64_t number = line_base + 1; p < end; number++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (nl == NULL)
			break; /* a partial line: the caller hands it again */
		const char *s = p;
		p = nl + 1;
		uint64_t start, size;
		int ok = hex(&s, nl, &start) && s < nl && *s == ' ' && (s++, hex(&s, nl, &size)) &&
			 s < nl && *s == ' ' && s + 1 < nl && size > 0 && start + size > start &&
			 memchr(s, '\0', (size_t)(nl - s)) == NULL;
		if (!ok) {
			if (bad++ == 0)
				*first_bad = number;
			continue;
		}
		s++;
		size_t cap = js->cap;
		ALLOC_GROW(js->symbols, js->n + 1, js->cap);
		ALLOC_GROW(js->orders, js->n + 1, cap);
		struct jit_symbol *sym = &js->symbols[js->n];
		size_t n = (size_t)(nl - s);
		if (n > 0 && s[n - 1] == '\r')
			n--;
		*sym = (struct jit_symbol){.start = start, .end = start + size, .name = keep(js, s, n)};
		sym->function = sym->name;
		split_v8(js, sym);
		js->orders[js->n++] = js->order++;
	}
	return bad;
}

static int by_start(const void *a, const void *b, void *symbols)
{
	const struct jit_symbols *sorting = symbols;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct jit_symbol *x = &sorting->symbols[i], *y = &sorting->symbols[j];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return sorting->orders[i] < sorting->orders[j] ? 1 : -1; /* the later line first */
}

void jit_symbols_finish(struct jit_symbols *js)
{
	size_t *index = calloc_or_abort(js->n ? js->n : 1, sizeof(*index));
	for (size_t i = 0; i < js->n; i++)
		index[i] = i;
	if (js->n > 1)
		qsort_r(index, js->n, sizeof(*index), by_start, js);
	struct jit_symbol *sorted = calloc_or_abort(js->n ? js->n : 1, sizeof(*sorted));
	size_t kept = 0;
	for (size_t i = 0; i < js->n; i++) /* one per start: the latest */
		if (kept == 0 || sorted[kept - 1].start != js->symbols[index[i]].start)
			sorted[kept++] = js->symbols[index[i]];
	free(js->symbols);
	free(index);
	js->symbols = sorted;
	js->n = js->cap = kept;
}

const struct jit_symbol *jit_symbols_find(const struct jit_symbols *js, uint64_t addr)
{
	size_t lo = 0, hi = js->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (js->symbols[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= js->symbols[lo - 1].end)
		return NULL;
	return &js->symbols[lo - 1];
}

void jit_symbols_free(struct jit_symbols *js)
{
	for (size_t i = 0; i < js->nstrings; i++)
		free(js->strings[i]);
	free(js->strings);
	free(js->symbols);
	free(js->orders);
	memset(js, 0, sizeof(*js));
}
