/*
 * filter.h - transforms that every report and every exporter applies the same
 * way: hiding system frames (unless -C), keeping only some threads (--tid)
 * or processes (--pid), only samples on or off CPU (--state, wall mode), and
 * folding inlined frames into the function they were inlined into
 * (--no-inline, as perf report --no-inline reads).
 *
 * A filter never edits a profile: it builds a new one, so an exporter only
 * ever takes a struct profile and needs to know nothing about the options.
 * String ids, modules and functions keep their ids in the result; lines,
 * locations, stacks, threads and samples are renumbered.
 *
 * System frames (function flag PROFILE_FUNCTION_SYSTEM: libc, libstdc++,
 * ld.so, the vdso, the agent, _start and __libc_start_main) are removed from
 * every stack, so their cost lands on the nearest shown caller, as Julia's
 * Profile.print(C=false) does. Frames are removed one inline-chain entry at a
 * time: a libstdc++ template inlined into user code disappears, the user
 * function it was inlined into stays.
 *
 * A sample whose frames are ALL system frames (a thread still in the loader,
 * time in libc called from nowhere we can show) is kept, not dropped, so
 * totals never shrink with -C off: its stack becomes its innermost location
 * alone (all of that location's inline frames), shown at the top level, e.g.
 * "memcpy" or "_dl_relocate_object" (below what was allocated, in an
 * allocation profile).
 *
 * Off CPU, a stack ends in the call the thread blocks in: hiding system
 * frames keeps, of the run of them at the leaf, the outermost one, the
 * library function the program called (nanosleep, pthread_cond_wait, read,
 * epoll_wait), so "where threads wait" names the call and its caller.
 *
 * With no_inline each location keeps only its outermost line: the function
 * the code physically is in, at the line of the call that was inlined (so
 * ZSTD_compressBlock_doubleFast gets the self time its inlined helpers had).
 * A location is then hidden when that function is a system one.
 *
 * Many programs in one trace (a build: cc1, as, ld, sh...): --comm keeps the
 * processes running a program (by the basename of what they exec'd, as
 * profile_thread.command names it); --module keeps the samples with a frame
 * in a module (by basename), --focus REGEX those with a frame whose function
 * name matches and --ignore REGEX drops those, as pprof's -focus and
 * -ignore do. Frames are matched before system ones are hidden, inlined
 * ones included: --focus malloc finds the callers of malloc.
 */
#ifndef IPSCOPE_FILTER_H
#define IPSCOPE_FILTER_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define FILTER_STATE_ANY 0
#define FILTER_STATE_ON_CPU 1  /* --state on-cpu: samples of running (or runnable) threads */
#define FILTER_STATE_OFF_CPU 2 /* --state off-cpu: of blocked threads (wall mode) */
/*
 * Views of an allocation profile: only the blocks of the view, and only the
 * rows of stacks with some (leaks: inuse_space, live at exit; peak:
 * peak_space, live at the highest live heap; temporary: temporary_space,
 * the view's type, which becomes the default). Every allocation type counts
 * those blocks only (alloc_space of --leaks is the leaked bytes); a type the
 * trace does not know for them (which leaked blocks were live at the peak)
 * leaves the profile, and the run's figures before the view stay in
 * profile.alloc_run. Every report, exporter, diff and plot takes them (a
 * plot's rows binned in time keep every figure of the kept stacks).
 */
enum filter_view { FILTER_VIEW_NONE, FILTER_VIEW_LEAKS, FILTER_VIEW_PEAK, FILTER_VIEW_TEMPORARY };

struct filter_options {
	int show_system;       /* -C / --C: keep system frames */
	const uint32_t *tids;  /* --tid N (repeatable): keep only these threads */
	int ntids;             /* 0: every thread */
	const uint32_t *pids;  /* --pid N (repeatable): keep only these processes' threads */
	int npids;             /* 0: every process */
	int state;             /* --state: FILTER_STATE_* */
	int no_inline;         /* --no-inline: inlined frames charged to their function */
	enum filter_view view; /* --leaks, --peak, --temporary */
	const char *const *comms;   /* --comm NAME (repeatable): keep only processes running these programs */
	int ncomms;
	const char *const *modules; /* --module NAME (repeatable): only samples with a frame in one */
	int nmodules;
	const regex_t *focus;       /* --focus REGEX (repeatable): only samples with a frame matching one */
	int nfocus;
	const regex_t *ignore;      /* --ignore REGEX (repeatable): not samples with a frame matching one */
	int nignore;
};

/* The value type a view shows ("inuse_space"...), and its option ("--leaks"); NULL for none. */
const char *filter_view_type(enum filter_view view);
const char *filter_view_option(enum filter_view view);

/* Why view has no type named type (a sentence into buf, returned), or NULL when it has. */
const char *filter_view_lacks(enum filter_view view, const char *type, char *buf, size_t len);

/* A filtered copy of p (p is unchanged); aborts on out of memory. */
struct profile *filter_profile(const struct profile *p, const struct filter_options *f);

/*
 * Same result, but consumes p: the sample array, the largest table by far, is
 * filtered in place instead of copied, so peak memory stays near one profile.
 * When the filters change nothing it returns p itself. Use it when p is not
 * needed afterwards; free only the result.
 */
struct profile *filter_profile_consume(struct profile *p, const struct filter_options *f);

/* 1 when the filters would change nothing (-C, no --tid, --pid or --state, no --no-inline, no view,
 * no --comm, --module, --focus or --ignore). */
int filter_is_identity(const struct filter_options *f);

/* 1 when thread t of p runs a program --comm keeps (every one without --comm). */
int filter_comm_selected(const struct profile *p, uint32_t t, const struct filter_options *f);

/*
 * Per stack of p: 1 when --module, --focus and --ignore keep its samples;
 * NULL when none was given (every stack kept). Free the result.
 */
uint8_t *filter_select_stacks(const struct profile *p, const struct filter_options *f);

/*
 * p with one sample per (stack, thread), its values summed (saturating) and
 * time 0 (it stands for the whole run), in the order each pair first came:
 * what a viewer ranks, in place (p itself is returned). Every total stays.
 */
struct profile *filter_sum_samples(struct profile *p);

#endif
