/*
 * symbolize_demangle.c - turn linkage names into the names users wrote.
 *
 * gcc names the copies it makes of a function with suffixes (foo.isra.0,
 * foo.part.1.cold, _ZN1a1bEv.constprop.0): a profile should charge them to
 * foo, so the suffixes go before demangling (libiberty would otherwise print
 * "[clone .isra.0]").
 */
#include "symbolize_demangle.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>

/* Words gcc puts after a '.' when it clones or splits a function; each may be
 * followed by a '.N' counter. */
static const char *const clone_words[] = {
	"part", "isra", "constprop", "cold", "lto_priv", "localalias", "clone", "hot",
};

/* Length of the clone word starting at s (just after a '.'), 0 if none. */
static size_t clone_word_length(const char *s)
{
	for (size_t i = 0; i < sizeof(clone_words) / sizeof(clone_words[0]); i++) {
		size_t n = strlen(clone_words[i]);
		if (strncmp(s, clone_words[i], n) == 0 && (s[n] == '.' || s[n] == '\0'))
			return n;
	}
	return 0;
}

/* 1 when s (starting at a '.') is nothing but clone components:
 * ('.' word ('.' digits)*)+ */
static int is_clone_tail(const char *s)
{
	int words = 0;
	while (*s == '.') {
		size_t n = clone_word_length(s + 1);
		if (n > 0) {
			words++;
			s += 1 + n;
			continue;
		}
		if (words == 0 || !isdigit((unsigned char)s[1]))
			return 0;
		s++;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == '\0' && words > 0;
}

size_t demangle_clone_base_length(const char *name)
{
	/* The first '.' after which only clone components follow; a name never
	 * starts with one ('.' alone is not a function). */
	for (const char *dot = strchr(name, '.'); dot != NULL; dot = strchr(dot + 1, '.'))
		if (dot != name && is_clone_tail(dot))
			return (size_t)(dot - name);
	return strlen(name);
}

char *demangle_function_name(const char *linkage_name, int demangle, int keep_clones)
{
	size_t len = keep_clones ? strlen(linkage_name) : demangle_clone_base_length(linkage_name);
	char *base = strndup(linkage_name, len);
	if (base == NULL || !demangle)
		return base;
	/* Only mangled names are worth a call: C names are most of libc. */
	if (!(base[0] == '_' && (base[1] == 'Z' || base[1] == 'R')))
		return base;
	char *pretty = cplus_demangle(base, DMGL_PARAMS | DMGL_ANSI);
	if (pretty == NULL)
		return base;
	free(base);
	return pretty;
}
