/*
 * forward.c - termination signals sent to collect (SIGINT, SIGQUIT, SIGTERM,
 * SIGHUP) are meant for the program; collect passes them on, then finishes
 * the trace when the program ends.
 *
 * But the program must get each signal exactly once. A signal sent to the
 * process group (Ctrl-C at the terminal, kill -TERM -- -PGID) already
 * reached the program, and the kernel gives collect the same siginfo
 * (SI_USER from the same sender) as for a kill of collect alone; looking at
 * the program cannot tell either, since it may already have handled its copy.
 * So collect keeps a witness: a tiny helper process in the same process
 * group that blocks these four signals and does nothing else. A group signal
 * is generated for every member inside one kill() call, newest member first
 * (the kernel adds members at the head of the group's list), so the
 * witness's copy (it is collect's child, newer than collect) is pending
 * before collect's own copy is even generated. It is forked first thing,
 * while collect is small: its pages are then copy-on-write in collect. In
 * collect's handler one question to the witness settles it: "is this signal
 * pending for you?" - the witness checks with sigpending() and, if it is,
 * consumes it with sigtimedwait() before it answers. Pending there: it was a
 * group signal, and the program (if still in the group) has its own copy:
 * nothing to forward. Not pending: it was sent to collect alone: forward it.
 * A program that left the group does not get group signals, with or without
 * collect.
 *
 * Signals collect was started with ignored (nohup, background jobs) stay
 * ignored: the program inherits them ignored, as it would without collect.
 *
 * Every other signal whose default would end collect is the program's
 * business, not collect's: a pre-fork master notifies its process group
 * (kill(0, SIGUSR1), SIGALRM), a daemon tells its parent it is ready (Xorg's
 * kill(getppid(), SIGUSR1)), and collect is in that group and is that
 * parent. Dying of them would cut the trace and orphan the program, so
 * collect ignores them once the program runs (held until then, and the
 * witness holds them all); SIGUSR2 toggles sampling only when it comes from
 * outside the profiled tree (launch.c). Faults (SIGSEGV, SIGABRT...) keep
 * their default: they are collect's own.
 */
#include "collect.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define WITNESS_TIMEOUT_MS 500

static const int forwarded[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP };
#define NFORWARDED (sizeof forwarded / sizeof *forwarded)

static volatile sig_atomic_t program_pid;
static volatile sig_atomic_t detached, terminated; /* the program ended; a signal came since */
static pid_t witness_pid;
static int ask_fd = -1, answer_fd = -1; /* to and from the witness */
static unsigned handled; /* bit i: forwarded[i] has collect's handler */
static sigset_t unheld; /* the mask before forward_hold */
static int holding;

static void forwarded_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(set, forwarded[i]);
}

/* The signals that would end collect by default and that it neither acts on nor raises itself. */
static void survived_set(sigset_t *set)
{
	static const int terminating[] = { SIGUSR1, SIGALRM, SIGVTALRM, SIGPROF, SIGIO, SIGXCPU, SIGXFSZ, SIGPWR,
#ifdef SIGSTKFLT
					   SIGSTKFLT,
#endif
	};
	sigemptyset(set);
	for (size_t i = 0; i < sizeof terminating / sizeof *terminating; i++)
		sigaddset(set, terminating[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (sig != TRANSPORT_WAKE_SIGNAL) /* collect waits for it, blocked (launch.c) */
			sigaddset(set, sig);
}

/* What forward_hold blocks until the program runs: the forwarded signals and the survived ones. */
static void held_set(sigset_t *set)
{
	sigset_t survived;
	forwarded_set(set);
	survived_set(&survived);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&survived, sig) == 1)
			sigaddset(set, sig);
}

/* The witness: answers whether a signal is pending for it, consuming it if so. */
static void witness_main(int ask, int answer)
{
	prctl(PR_SET_NAME, "collect-witness", 0, 0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	/* In the program's process group: whatever the program sends it waits, pending (only the
	 * forwarded ones are ever looked at). */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* Keep only the two pipe ends, as 3 and 4: it must not hold the trace or anyone's files open. */
	ask = fcntl(ask, F_DUPFD, 10);
	answer = fcntl(answer, F_DUPFD, 10);
	if (ask < 0 || answer < 0 || dup2(ask, 3) < 0 || dup2(answer, 4) < 0)
		_exit(1);
	for (int fd = 0; fd < 3; fd++)
		close(fd);
	syscall(SYS_close_range, 5u, ~0u, 0);
	for (;;) {
		unsigned char sig, pending = 0;
		ssize_t n = read(3, &sig, 1);
		if (n == 0)
			_exit(0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		sigset_t set, one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		if (sigpending(&set) == 0 && sigismember(&set, sig) == 1) {
			struct timespec zero = { 0, 0 };
			pending = sigtimedwait(&one, NULL, &zero) == sig;
		}
		if (write(4, &pending, 1) != 1)
			_exit(1);
	}
}

/* 1 when the witness had sig pending (a group signal), 0 when not, -1 when it cannot say. */
static int witness_had(int sig)
{
	unsigned char c = (unsigned char)sig, answer;
	if (ask_fd < 0 || write(ask_fd, &c, 1) != 1)
		return -1;
	struct pollfd p = { answer_fd, POLLIN, 0 };
	while (poll(&p, 1, WITNESS_TIMEOUT_MS) < 0)
		if (errno != EINTR)
			return -1;
	if (!(p.revents & POLLIN) || read(answer_fd, &answer, 1) != 1)
		return -1;
	return answer;
}

static void forward_signal(int sig, siginfo_t *si, void *unused)
{
	(void)unused;
	int saved_errno = errno;
	if (detached) {
		terminated = 1; /* nobody to pass it to: the rest of the tree is not waited for */
		errno = saved_errno;
		return;
	}
	int had = witness_had(sig);
	/* Without a witness, fall back to what the terminal is known to do: it signals the whole group. */
	int group = had < 0 ? (sig == SIGINT || sig == SIGQUIT) && si->si_code == SI_KERNEL : had;
	if (program_pid > 0 && !group)
		kill((pid_t)program_pid, sig);
	errno = saved_errno;
}

static void start_witness(void)
{
	int to[2], from[2];
	if (pipe2(to, O_CLOEXEC) < 0)
		return;
	if (pipe2(from, O_CLOEXEC) < 0) {
		close(to[0]);
		close(to[1]);
		return;
	}
	/* Blocked before the fork, so the witness never runs collect's handler. */
	sigset_t set, old;
	forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	pid_t pid = fork();
	if (pid == 0)
		witness_main(to[0], from[1]);
	close(to[0]);
	close(from[1]);
	if (pid < 0) {
		close(to[1]);
		close(from[0]);
	} else {
		witness_pid = pid;
		ask_fd = to[1];
		answer_fd = from[0];
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}

void forward_prepare(void)
{
	start_witness();
}

/* A signal that comes while the program is being started would otherwise
 * kill collect (default disposition) or reach a handler that knows no pid
 * yet: it waits, blocked, and forward_start's unblocking delivers it. The
 * program itself starts with the mask collect was given (launch.c saved it
 * before this). */
void forward_hold(void)
{
	sigset_t set;
	held_set(&set);
	holding = sigprocmask(SIG_BLOCK, &set, &unheld) == 0;
}

void forward_start(pid_t pid)
{
	program_pid = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	forwarded_set(&sa.sa_mask); /* one question to the witness at a time */
	sigset_t set, old;
	forwarded_set(&set);
	sigprocmask(SIG_BLOCK, &set, &old);
	for (size_t i = 0; i < NFORWARDED; i++) {
		struct sigaction was;
		if (sigaction(forwarded[i], NULL, &was) == 0 && was.sa_handler == SIG_IGN)
			continue;
		sigaction(forwarded[i], &sa, NULL);
		handled |= 1u << i;
	}
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	sigaction(SIGPIPE, &sa, NULL);
	sigset_t survived;
	survived_set(&survived);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&survived, sig) == 1)
			sigaction(sig, &sa, NULL); /* any held since forward_hold is dropped at the unblock */
	sigprocmask(SIG_SETMASK, holding ? &unheld : &old, NULL);
	holding = 0;
}

void forward_detach(void)
{
	program_pid = 0;
	detached = 1;
}

int forward_terminated(void)
{
	return terminated;
}

int forward_is_witness(pid_t pid)
{
	return witness_pid > 0 && pid == witness_pid;
}

int forward_reaped(pid_t pid)
{
	if (!forward_is_witness(pid))
		return 0;
	witness_pid = 0; /* gone: never signalled or waited for again */
	return 1;
}

void forward_stop(void)
{
	program_pid = 0;
	for (size_t i = 0; i < NFORWARDED; i++)
		if (handled & (1u << i))
			signal(forwarded[i], SIG_DFL);
	handled = 0;
	if (witness_pid > 0) {
		kill(witness_pid, SIGKILL);
		while (waitpid(witness_pid, NULL, 0) < 0 && errno == EINTR)
			;
		witness_pid = 0;
	}
	if (ask_fd >= 0)
		close(ask_fd);
	if (answer_fd >= 0)
		close(answer_fd);
	ask_fd = answer_fd = -1;
}
