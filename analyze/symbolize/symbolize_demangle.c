/*
 * symbolize_demangle.c - turn linkage names into the names users wrote.
 *
 * gcc names the copies it makes of a function with suffixes (foo.isra.0,
 * foo.part.1.cold, _ZN1a1bEv.constprop.0), LLVM the functions ThinLTO made
 * global (_RNv...main.llvm.123): a profile should charge them to foo, so the suffixes go before demangling (libiberty would otherwise print
 * "[clone .isra.0]").
 *
 * C++ names read best short, as pprof shows them: no return type, no
 * parameters ("unsigned long alpha::mix<unsigned long, 16>(unsigned long)"
 * is mostly noise in a call tree); the resolver asks for the parameters
 * only where two overloads would otherwise read the same.
 */
#include "symbolize_demangle.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <demangle.h>

/* Words gcc puts after a '.' when it clones or splits a function; each may be
 * followed by a '.N' counter. */
static const char *const clone_words[] = {
	"part", "isra", "constprop", "cold", "lto_priv", "localalias", "clone", "hot",
	"llvm", /* rustc and clang ThinLTO: foo.llvm.5032037696648221740 */
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

char *demangle_function_name(const char *linkage_name, enum demangle_style style, int keep_clones)
{
	/* A PLT stub is named after its function: demangle that, keep "@plt". */
	size_t total = strlen(linkage_name);
	const char *plt = total > 4 && strcmp(linkage_name + total - 4, "@plt") == 0 ? "@plt" : "";
	size_t whole = total - strlen(plt);
	char *stem = strndup(linkage_name, whole);
	if (stem == NULL)
		return NULL;
	size_t len = keep_clones ? whole : demangle_clone_base_length(stem);
	stem[len] = '\0';
	char *pretty = NULL;
	/* Only mangled names are worth a call: C names are most of libc. */
	if (style != DEMANGLE_NONE && stem[0] == '_' && (stem[1] == 'Z' || stem[1] == 'R')) {
		int flags = style == DEMANGLE_SHORT	 ? DMGL_ANSI
			    : style == DEMANGLE_PARAMETERS ? DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP
							   : DMGL_PARAMS | DMGL_ANSI;
		pretty = cplus_demangle(stem, flags);
	}
	const char *shown = pretty != NULL ? pretty : stem;
	size_t n = strlen(shown) + strlen(plt) + 1;
	char *out = malloc(n);
	if (out != NULL)
		snprintf(out, n, "%s%s", shown, plt);
	free(pretty);
	free(stem);
	return out;
}
