/*
 * terminal.h - what reports need to know about where their text goes: colors
 * (only on a terminal, never under NO_COLOR unless forced), the width to fit,
 * and the shortening of paths, names and durations to fit in it.
 */
#ifndef IPSCOPE_TERMINAL_H
#define IPSCOPE_TERMINAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * when is "auto", "always" or "never". auto: fd is a terminal and NO_COLOR
 * is unset or empty (no-color.org); an explicit "always" wins over NO_COLOR.
 */
int terminal_use_color(const char *when, int fd);

/* Columns of the terminal on fd; 0 (no limit) when fd is not a terminal. */
int terminal_width(int fd);
/* Its lines; 0 when fd is not a terminal. */
int terminal_height(int fd);

/* ANSI sequences, or "" when color is off. */
struct palette {
	const char *reset, *bold, *dim, *count, *self, *inlined, *extra;
	const char *heat[5]; /* by heat_level: none, low, warm, hot, hottest */
};
void palette_init(struct palette *pal, int color);

/*
 * How hot a cost is beside the hottest one (both as magnitudes), the one
 * scale of the source heat column and the viewer: 0 for none, 1 below 5%,
 * 2 below 20%, 3 below 50%, 4 from 50%.
 */
int heat_level(uint64_t v, uint64_t hottest);

/* Path as reports show it: the last component unless full_paths. */
const char *display_path(const char *path, int full_paths);

/*
 * Fit s in width columns (0: no limit) into buf: keep_end keeps the tail
 * ("...tail", for paths), otherwise the head ("head..."). Returns buf or s.
 */
const char *fit_text(const char *s, int width, int keep_end, char *buf, size_t buflen);

/* "1.234 s", "12.3 ms", "850 us": a duration in ns for people. */
const char *format_duration(uint64_t ns, char *buf, size_t buflen);

/*
 * A value of a unit for people: "nanoseconds" as a duration, "bytes" as
 * B/KiB/MiB/GiB, anything else ("count") as an integer; negative values
 * (a diff's) with a leading '-'. Returns buf.
 */
const char *format_value(int64_t v, const char *unit, char *buf, size_t buflen);

/*
 * s made safe to print on a terminal, as ls does for file names, and
 * unambiguous: control characters (C0, DEL, C1 whether raw or UTF-8
 * encoded) become "\e", "\t", "\n", "\r" or "\xHH", each byte that is no
 * part of well-formed UTF-8 "\xHH", Unicode's bidi controls (U+202E...,
 * which reorder what a line shows) "\u{202e}", and a backslash "\\" (so
 * a name holding the text \x1b does not read as an escape); other UTF-8
 * stays. Text for people only: JSON, pprof and folded output have their
 * own escaping. Returns s itself when nothing needs escaping, else buf (cut
 * to fit buflen, never inside an escape or a character).
 */
const char *escape_text(const char *s, char *buf, size_t buflen);
/* The same with backslashes kept, for text whose backslashes are its own
 * (a line of source code: "\n" in a string) or are quoted next (gnuplot's
 * strings); escaping twice changes nothing. */
const char *escape_controls(const char *s, char *buf, size_t buflen);

/*
 * A one-line progress note on stderr, only when stderr is a terminal and the
 * work has already taken more than a second (doc/ARCHITECTURE.md), redrawn at
 * most 5 times a second. progress_done erases it.
 */
struct progress {
	int enabled;
	uint64_t start_ns, last_ns;
	int shown;
};
void progress_init(struct progress *pr);
void progress_update(struct progress *pr, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void progress_done(struct progress *pr);

/* Number of decimal digits of v (1 for 0). */
int decimal_digits(uint64_t v);

#endif
