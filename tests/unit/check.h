/*
 * check.h - the one assertion style of the unit tests: CHECK(cond) and
 * CHECKF(cond, fmt, ...) print "file:line: check failed: cond message" on
 * stderr and count the failure, so one run lists every broken check.
 *
 * A test whose later steps cannot run past a failed check (they would read
 * what the failed step did not build) defines CHECK_STOP_AT_FIRST_FAILURE
 * before including this: the first failure then exits 1.
 */
#ifndef IPSCOPE_TESTS_CHECK_H
#define IPSCOPE_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef CHECK_STOP_AT_FIRST_FAILURE
#define CHECK_STOPS 1
#else
#define CHECK_STOPS 0
#endif

static int check_failures;

/* Report a failed check (ok == 0) with an optional message; see above. */
__attribute__((format(printf, 5, 6))) static inline void
check(int ok, const char *what, const char *file, int line, const char *fmt, ...)
{
	if (ok)
		return;
	fprintf(stderr, "%s:%d: check failed: %s", file, line, what);
	va_list ap;
	va_start(ap, fmt);
	char message[1024];
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (*message)
		fprintf(stderr, ": %s", message);
	fputc('\n', stderr);
	check_failures++;
	if (CHECK_STOPS)
		exit(1);
}

#define CHECK(cond) check(!!(cond), #cond, __FILE__, __LINE__, "%s", "")
#define CHECKF(cond, ...) check(!!(cond), #cond, __FILE__, __LINE__, __VA_ARGS__)

/* main's exit status: 0 when every check passed, else 1 after saying how many failed. */
static inline int check_exit_status(void)
{
	if (check_failures)
		fprintf(stderr, "%d check(s) failed\n", check_failures);
	return check_failures ? 1 : 0;
}

#endif
