/*
 * blocking.c - blocking calls the sampling signal must not cut short.
 *
 * In wall mode the background thread signals a thread only when it saw it
 * running (wall.c), but a thread can enter a blocking call in the
 * microseconds before the signal lands. The kernel then restarts what it
 * can (read, write, futex waits: SA_RESTART) and makes the rest fail with
 * EINTR or, for sleep(), return early: nanosleep, clock_nanosleep, usleep,
 * sleep, poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
 * epoll_pwait2, sigtimedwait, sigwaitinfo, pause, sigsuspend, and socket
 * calls on sockets with SO_RCVTIMEO/SO_SNDTIMEO (recv*, send*, accept,
 * connect, and read/write on such a socket). These wrappers retry when the
 * EINTR was the profiler's: the handler saw it interrupt a system call that
 * returned -EINTR (agent_self.eintr_ours, cleared before each call). Calls
 * with a timeout retry against the absolute CLOCK_MONOTONIC deadline taken
 * when they were called (doc/ARCHITECTURE.md: retrying with the remaining
 * time drifts, retrying against a deadline does not); select() leaves the
 * time remaining in its timeval as Linux does. connect() interrupted goes on in
 * the background: it is waited for with poll and its result read back.
 *
 * In cpu mode nothing is ever interrupted (the signal comes on the way back
 * to user space), and each wrapper only passes the call on. What is not
 * covered: calls made inside libc with no wrapper in between, and raw
 * syscall() (a program that busy-waits with syscall(SYS_nanosleep) can see
 * one EINTR, rarely). If the program's own signal arrives in the same
 * moment as the profiler's, its EINTR is retried too.
 */
#include "signals.h"

#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* agent_self.signals_taken when this thread's current blocking call began. */
static AGENT_TLS __thread uint32_t signals_armed;

/* Whether wrappers do anything: only wall mode ever interrupts a call. */
static int guarded(void)
{
	return agent_flags->enabled && agent_config.wall;
}

/*
 * Before a call: forget an earlier interruption. After an EINTR: was it the profiler's?
 * Not inside the sampling handler: libunwind read()s there (its memory validation,
 * unwinder.c), and that read's arm() cleared the very eintr_ours and signals_armed the
 * interrupted call was about to look at (the wall-mode EINTRs seen under load, mostly in
 * the ASan build, where the agent's own -O0 frames send libunwind down its slow path).
 */
static void arm(void)
{
	if (agent_self.in_handler)
		return;
	agent_self.eintr_ours = 0;
	signals_armed = agent_self.signals_taken;
}

/* The handler saw it interrupt a call, or a profiler's signal came while the call ran: the
 * handler cannot always tell (an epoll_wait failed with EINTR after 0.07 ms once in 48 under
 * load, unseen by it). The profiler signals a thread only in the moment it blocks, so a program's
 * own signal is retried only if it comes in that same moment, as before. pause(), sigsuspend()
 * and sigwaitinfo() use ours_strict: ending on a handler is what they are for. */
static int ours_strict(long rc)
{
	if (agent_self.in_handler || !(rc == -1 && errno == EINTR && agent_self.eintr_ours))
		return 0;
	agent_self.eintr_ours = 0;
	return 1;
}

static int ours(long rc)
{
	if (agent_self.in_handler || !(rc == -1 && errno == EINTR && (agent_self.eintr_ours || agent_self.signals_taken != signals_armed)))
		return 0;
	agent_self.eintr_ours = 0;
	return 1;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static struct timespec ns_ts(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	return ts;
}

/* Time left until deadline (CLOCK_MONOTONIC ns), 0 once it has passed. */
static uint64_t left(uint64_t deadline)
{
	uint64_t now = agent_now_ns();
	return now < deadline ? deadline - now : 0;
}

/* A relative timeout in ms (negative: none) as a deadline; UINT64_MAX for none. */
static uint64_t ms_deadline(int ms)
{
	return ms < 0 ? UINT64_MAX : agent_now_ns() + (uint64_t)ms * 1000000u;
}

static int ms_left(uint64_t deadline)
{
	if (deadline == UINT64_MAX)
		return -1;
	uint64_t ns = left(deadline);
	return (int)((ns + 999999u) / 1000000u);
}

/* ---- sleeps ---- */

static int sleep_until(uint64_t deadline, const struct timespec *req, struct timespec *rem)
{
	struct timespec t = *req;
	for (;;) {
		arm();
		int rc = REAL(nanosleep)(&t, rem);
		if (!ours(rc))
			return rc;
		uint64_t ns = left(deadline);
		if (!ns)
			return 0;
		t = ns_ts(ns);
	}
}

AGENT_EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	if (!guarded() || !req || req->tv_nsec < 0 || req->tv_nsec >= 1000000000L || req->tv_sec < 0)
		return REAL(nanosleep)(req, rem);
	return sleep_until(agent_now_ns() + ts_ns(req), req, rem);
}

AGENT_EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *req, struct timespec *rem)
{
	if (!guarded() || !req)
		return REAL(clock_nanosleep)(clock, flags, req, rem);
	struct timespec start, t = *req;
	int relative = !(flags & TIMER_ABSTIME);
	if (relative && clock_gettime(clock, &start) < 0)
		return REAL(clock_nanosleep)(clock, flags, req, rem);
	for (;;) {
		arm();
		int rc = REAL(clock_nanosleep)(clock, flags, &t, rem);
		if (rc != EINTR || !agent_self.eintr_ours)
			return rc;
		agent_self.eintr_ours = 0;
		if (!relative)
			continue; /* an absolute deadline needs nothing recomputed */
		struct timespec now;
		clock_gettime(clock, &now);
		uint64_t end = ts_ns(&start) + ts_ns(req), at = ts_ns(&now);
		if (at >= end)
			return 0;
		t = ns_ts(end - at);
	}
}

AGENT_EXPORT int usleep(useconds_t usec)
{
	struct timespec req = ns_ts((uint64_t)usec * 1000u);
	if (!guarded())
		return REAL(nanosleep)(&req, NULL);
	return sleep_until(agent_now_ns() + ts_ns(&req), &req, NULL);
}

/* sleep() as glibc has it (nanosleep), returning the seconds left when the program's signal cut it. */
AGENT_EXPORT unsigned int sleep(unsigned int seconds)
{
	struct timespec req = { (time_t)seconds, 0 }, rem = { 0, 0 };
	int rc = guarded() ? sleep_until(agent_now_ns() + ts_ns(&req), &req, &rem) : REAL(nanosleep)(&req, &rem);
	if (rc == 0)
		return 0;
	return (unsigned int)rem.tv_sec + (rem.tv_nsec > 0);
}

/* ---- waits for descriptors ---- */

AGENT_EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	if (!guarded())
		return REAL(poll)(fds, n, timeout);
	uint64_t deadline = ms_deadline(timeout);
	for (int ms = timeout;; ms = ms_left(deadline)) {
		arm();
		int rc = REAL(poll)(fds, n, ms);
		if (!ours(rc))
			return rc;
	}
}

AGENT_EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *tmo, const sigset_t *mask)
{
	if (!guarded())
		return REAL(ppoll)(fds, n, tmo, mask);
	uint64_t deadline = tmo ? agent_now_ns() + ts_ns(tmo) : UINT64_MAX;
	struct timespec t = tmo ? *tmo : (struct timespec){ 0, 0 };
	for (;;) {
		arm();
		int rc = REAL(ppoll)(fds, n, tmo ? &t : NULL, mask);
		if (!ours(rc))
			return rc;
		if (tmo)
			t = ns_ts(left(deadline));
	}
}

AGENT_EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	if (!guarded())
		return REAL(select)(n, r, w, e, tv);
	uint64_t deadline = tv ? agent_now_ns() + (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u
			       : UINT64_MAX;
	/* Linux leaves the sets as they were on EINTR: the same sets are asked again. */
	fd_set r0, w0, e0;
	if (r)
		r0 = *r;
	if (w)
		w0 = *w;
	if (e)
		e0 = *e;
	for (;;) {
		arm();
		int rc = REAL(select)(n, r, w, e, tv);
		if (!ours(rc))
			return rc;
		if (r)
			*r = r0;
		if (w)
			*w = w0;
		if (e)
			*e = e0;
		if (tv) {
			uint64_t ns = left(deadline);
			tv->tv_sec = (time_t)(ns / 1000000000u);
			tv->tv_usec = (suseconds_t)(ns % 1000000000u / 1000u);
		}
	}
}

AGENT_EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *tmo, const sigset_t *mask)
{
	if (!guarded())
		return REAL(pselect)(n, r, w, e, tmo, mask);
	uint64_t deadline = tmo ? agent_now_ns() + ts_ns(tmo) : UINT64_MAX;
	struct timespec t = tmo ? *tmo : (struct timespec){ 0, 0 };
	fd_set r0, w0, e0;
	if (r)
		r0 = *r;
	if (w)
		w0 = *w;
	if (e)
		e0 = *e;
	for (;;) {
		arm();
		int rc = REAL(pselect)(n, r, w, e, tmo ? &t : NULL, mask);
		if (!ours(rc))
			return rc;
		if (r)
			*r = r0;
		if (w)
			*w = w0;
		if (e)
			*e = e0;
		if (tmo)
			t = ns_ts(left(deadline));
	}
}

AGENT_EXPORT int epoll_wait(int ep, struct epoll_event *events, int max, int timeout)
{
	if (!guarded())
		return REAL(epoll_wait)(ep, events, max, timeout);
	uint64_t deadline = ms_deadline(timeout);
	for (int ms = timeout;; ms = ms_left(deadline)) {
		arm();
		int rc = REAL(epoll_wait)(ep, events, max, ms);
		if (!ours(rc))
			return rc;
	}
}

AGENT_EXPORT int epoll_pwait(int ep, struct epoll_event *events, int max, int timeout, const sigset_t *mask)
{
	if (!guarded())
		return REAL(epoll_pwait)(ep, events, max, timeout, mask);
	uint64_t deadline = ms_deadline(timeout);
	for (int ms = timeout;; ms = ms_left(deadline)) {
		arm();
		int rc = REAL(epoll_pwait)(ep, events, max, ms, mask);
		if (!ours(rc))
			return rc;
	}
}

AGENT_EXPORT int epoll_pwait2(int ep, struct epoll_event *events, int max, const struct timespec *tmo,
			      const sigset_t *mask)
{
	if (!guarded())
		return REAL(epoll_pwait2)(ep, events, max, tmo, mask);
	uint64_t deadline = tmo ? agent_now_ns() + ts_ns(tmo) : UINT64_MAX;
	struct timespec t = tmo ? *tmo : (struct timespec){ 0, 0 };
	for (;;) {
		arm();
		int rc = REAL(epoll_pwait2)(ep, events, max, tmo ? &t : NULL, mask);
		if (!ours(rc))
			return rc;
		if (tmo)
			t = ns_ts(left(deadline));
	}
}

/* ---- waits for signals ---- */

AGENT_EXPORT int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *tmo)
{
	sigset_t copy;
	set = sigmask_without_ours(set, &copy);
	if (!guarded())
		return REAL(sigtimedwait)(set, info, tmo);
	uint64_t deadline = tmo ? agent_now_ns() + ts_ns(tmo) : UINT64_MAX;
	struct timespec t = tmo ? *tmo : (struct timespec){ 0, 0 };
	for (;;) {
		arm();
		int rc = REAL(sigtimedwait)(set, info, tmo ? &t : NULL);
		if (!ours(rc))
			return rc;
		if (tmo)
			t = ns_ts(left(deadline));
	}
}

AGENT_EXPORT int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	sigset_t copy;
	set = sigmask_without_ours(set, &copy);
	for (;;) {
		arm();
		int rc = REAL(sigwaitinfo)(set, info);
		if (!guarded() || !ours_strict(rc))
			return rc;
	}
}

/* pause() and sigsuspend() end when a handler ran: the profiler's does not count. */
AGENT_EXPORT int pause(void)
{
	for (;;) {
		arm();
		int rc = REAL(pause)();
		if (!guarded() || !ours_strict(rc))
			return rc;
	}
}

AGENT_EXPORT int sigsuspend(const sigset_t *mask)
{
	for (;;) {
		arm();
		int rc = REAL(sigsuspend)(mask);
		if (!guarded() || !ours_strict(rc))
			return rc;
	}
}

/* ---- sockets with SO_RCVTIMEO / SO_SNDTIMEO (and read/write on them) ---- */

#define RETRY(call)                                  \
	do {                                         \
		for (;;) {                           \
			arm();                       \
			__typeof__(call) rc_ = call; \
			if (!guarded() || !ours(rc_)) \
				return rc_;          \
		}                                    \
	} while (0)

AGENT_EXPORT ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	RETRY(REAL(recv)(fd, buf, n, flags));
}

AGENT_EXPORT ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *from, socklen_t *len)
{
	RETRY(REAL(recvfrom)(fd, buf, n, flags, from, len));
}

AGENT_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	RETRY(REAL(recvmsg)(fd, msg, flags));
}

AGENT_EXPORT ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	RETRY(REAL(send)(fd, buf, n, flags));
}

AGENT_EXPORT ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *to, socklen_t len)
{
	RETRY(REAL(sendto)(fd, buf, n, flags, to, len));
}

AGENT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	RETRY(REAL(sendmsg)(fd, msg, flags));
}

AGENT_EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	RETRY(REAL(accept)(fd, addr, len));
}

AGENT_EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	RETRY(REAL(accept4)(fd, addr, len, flags));
}

AGENT_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	RETRY(REAL(read)(fd, buf, n));
}

AGENT_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	RETRY(REAL(write)(fd, buf, n));
}

AGENT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	RETRY(REAL(readv)(fd, iov, n));
}

AGENT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	RETRY(REAL(writev)(fd, iov, n));
}

/* An interrupted connect() goes on in the background: wait for it (within SO_SNDTIMEO) and say how it ended. */
AGENT_EXPORT int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	arm();
	int rc = REAL(connect)(fd, addr, len);
	if (!guarded() || !ours(rc))
		return rc;
	struct timeval tv = { 0, 0 };
	socklen_t tvlen = sizeof tv;
	int ms = getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &tvlen) == 0 && (tv.tv_sec || tv.tv_usec)
			 ? (int)(tv.tv_sec * 1000 + tv.tv_usec / 1000)
			 : -1;
	struct pollfd p = { fd, POLLOUT, 0 };
	uint64_t deadline = ms_deadline(ms);
	for (;;) {
		arm();
		int n = REAL(poll)(&p, 1, ms_left(deadline));
		if (n > 0)
			break;
		if (n == 0) {
			errno = EINPROGRESS; /* as a timed-out connect on a socket with SO_SNDTIMEO says */
			return -1;
		}
		if (!ours(n))
			return -1;
	}
	int err = 0;
	socklen_t errlen = sizeof err;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) < 0)
		return -1;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}
