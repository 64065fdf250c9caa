/* frametab_shared.h - what the parts of unit_frametab (test_frametab.c, frametab_o0.c, frametab_cxx.cc)
 * call in one another. */
#ifndef IPSCOPE_FRAMETAB_SHARED_H
#define IPSCOPE_FRAMETAB_SHARED_H
#ifdef __cplusplus
extern "C" {
#endif
/* Compare the table walk with libunwind from the caller's frame (test_frametab.c). */
void compare_here(const char *what);
/* -O0 recursion (frame pointers, CFA in rbp) down depth frames, then compare_here (frametab_o0.c). */
int o0_recurse(int depth);
/* Busy -O0 work, for the sampling part. */
long o0_spin(long n);
/* A C++ std::sort whose comparator calls compare_here once (frametab_cxx.cc). */
int cxx_sort_and_compare(void);
/* Busy C++ work, for the sampling part. */
long cxx_spin(long n);
#ifdef __cplusplus
}
#endif
#endif
