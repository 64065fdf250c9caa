/*
 * futex.h - system calls without errno: futex waits and wakes, and a raw
 * gettid. errno lives in TLS, and a thread whose TLS is another thread's (a
 * raw clone(): foreign.c) must not write it; the doorbell of the agent's
 * background thread (core.c) is rung from such a thread's handler.
 */
#ifndef IPSCOPE_FUTEX_H
#define IPSCOPE_FUTEX_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

/* The system call nr (x86-64), its result as the kernel gives it (-errno on failure); errno untouched. */
static inline long raw_syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d, r8 __asm__("r8") = e, r9 __asm__("r9") = f;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Wake one waiter of word. */
static inline void futex_wake(_Atomic uint32_t *word)
{
	raw_syscall6(SYS_futex, (long)word, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* Wait while *word == value, until the CLOCK_MONOTONIC deadline (absolute ns). */
static inline void futex_wait_until(_Atomic uint32_t *word, uint32_t value, uint64_t deadline)
{
	struct timespec ts = { (time_t)(deadline / 1000000000u), (long)(deadline % 1000000000u) };
	raw_syscall6(SYS_futex, (long)word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, (long)value, (long)&ts, 0,
		     (long)FUTEX_BITSET_MATCH_ANY);
}

#endif
