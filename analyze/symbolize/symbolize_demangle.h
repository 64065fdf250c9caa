/*
 * symbolize_demangle.h - display names for functions: gcc clone suffixes merged into
 * their function, C++ and Rust names demangled (libiberty).
 */
#ifndef IPSCOPE_SYMBOLIZE_DEMANGLE_H
#define IPSCOPE_SYMBOLIZE_DEMANGLE_H

#include <stddef.h>

/* Length of name once its trailing gcc clone suffixes (.part.N, .isra.N,
 * .constprop.N, .cold, .lto_priv.N, in any combination) are dropped. */
size_t demangle_clone_base_length(const char *name);

/* How much of a C++ name to show; Rust names read alike in every style but
 * NONE (their hash suffix hidden). */
enum demangle_style {
	DEMANGLE_NONE,       /* the linkage name as in the binary */
	DEMANGLE_SHORT,      /* alpha::detail::mix_kernel<unsigned long, 16> */
	DEMANGLE_PARAMETERS, /* ...mix_kernel<unsigned long, 16>(unsigned long) */
	DEMANGLE_FULL,       /* unsigned long ...mix_kernel<...>(unsigned long) */
};

/* Display name of a linkage name: clone suffixes dropped unless keep_clones,
 * then demangled in style when it is a C++ or Rust name ("name@plt" as
 * "demangled@plt"). malloc'd; NULL only on out of memory. */
char *demangle_function_name(const char *linkage_name, enum demangle_style style, int keep_clones);

#endif
