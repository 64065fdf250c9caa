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

/* Display name of a linkage name: clone suffixes dropped unless keep_clones,
 * then demangled when demangle and it is a C++ or Rust name. malloc'd; NULL
 * only on out of memory. */
char *demangle_function_name(const char *linkage_name, int demangle, int keep_clones);

#endif
