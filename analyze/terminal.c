/*
 * terminal.c - colors, widths and text fitting for reports (see terminal.h).
 */
#include "terminal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

int terminal_use_color(const char *when, int fd)
{
	if (!strcmp(when, "always"))
		return 1;
	if (!strcmp(when, "never"))
		return 0;
	const char *no_color = getenv("NO_COLOR");
	if (no_color && *no_color)
		return 0;
	return isatty(fd);
}

int terminal_width(int fd)
{
	if (!isatty(fd))
		return 0;
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	const char *columns = getenv("COLUMNS");
	int c = columns ? atoi(columns) : 0;
	return c > 0 ? c : 80;
}

int terminal_height(int fd)
{
	if (!isatty(fd))
		return 0;
	struct winsize ws;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
		return ws.ws_row;
	const char *lines = getenv("LINES");
	int l = lines ? atoi(lines) : 0;
	return l > 0 ? l : 24;
}

void palette_init(struct palette *pal, int color)
{
	if (!color) {
		*pal = (struct palette){"", "", "", "", "", "", "", {"", "", "", "", ""}};
		return;
	}
	*pal = (struct palette){
		.reset = "\033[0m",
		.bold = "\033[1m",
		.dim = "\033[2m",
		.count = "\033[36m",   /* cyan */
		.self = "\033[33m",    /* yellow */
		.inlined = "\033[35m", /* magenta */
		.extra = "\033[31m",   /* red: the +n of cut indentation */
		.heat = {"", "\033[36m", "\033[33m", "\033[31m", "\033[1;37;41m"}, /* cyan, yellow, red, white on red */
	};
}

int heat_level(uint64_t v, uint64_t hottest)
{
	if (v == 0 || hottest == 0)
		return 0;
	double f = (double)v / (double)hottest;
	return f >= 0.5 ? 4 : f >= 0.2 ? 3 : f >= 0.05 ? 2 : 1;
}

const char *display_path(const char *path, int full_paths)
{
	if (full_paths)
		return path;
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

const char *fit_text(const char *s, int width, int keep_end, char *buf, size_t buflen)
{
	size_t len = strlen(s);
	if (width <= 0 || len <= (size_t)width)
		return s;
	size_t keep = width > 3 ? (size_t)width - 3 : 1;
	if (keep + 4 > buflen)
		keep = buflen - 4;
	if (keep_end) {
		const char *tail = s + len - keep;
		/* Do not start inside a UTF-8 sequence. */
		while (*tail && ((unsigned char)*tail & 0xc0) == 0x80)
			tail++;
		snprintf(buf, buflen, "...%s", tail);
	} else {
		while (keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80)
			keep--;
		snprintf(buf, buflen, "%.*s...", (int)keep, s);
	}
	return buf;
}

const char *format_duration(uint64_t ns, char *buf, size_t buflen)
{
	if (ns >= 1000000000ull)
		snprintf(buf, buflen, "%.3f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, buflen, "%.1f ms", (double)ns / 1e6);
	else
		snprintf(buf, buflen, "%.0f us", (double)ns / 1e3);
	return buf;
}

const char *format_value(int64_t v, const char *unit, char *buf, size_t buflen)
{
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	const char *sign = v < 0 ? "-" : "";
	char tmp[64];
	if (!strcmp(unit, "nanoseconds")) {
		snprintf(buf, buflen, "%s%s", sign, format_duration(m, tmp, sizeof(tmp)));
	} else if (!strcmp(unit, "bytes")) {
		static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
		if (m < 1024) {
			snprintf(buf, buflen, "%s%llu B", sign, (unsigned long long)m);
		} else {
			double x = (double)m / 1024.0;
			int u = 0;
			while (x >= 1024.0 && u < 5) {
				x /= 1024.0;
				u++;
			}
			snprintf(buf, buflen, "%s%.1f %s", sign, x, units[u]);
		}
	} else {
		snprintf(buf, buflen, "%lld", (long long)v);
	}
	return buf;
}

/*
 * The UTF-8 sequence s starts: its length (2 to 4) with *cp its code point,
 * or 0 when it is not well formed (a stray continuation byte, a cut
 * sequence, an overlong form, a surrogate, beyond U+10FFFF). For s[0] >= 0x80.
 */
static int utf8_sequence(const unsigned char *s, unsigned *cp)
{
	static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000}; /* below: overlong */
	unsigned c = s[0];
	int len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (!len)
		return 0;
	unsigned v = c & (0x7fu >> len);
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80) /* the terminating NUL too */
			return 0;
		v = v << 6 | (s[i] & 0x3fu);
	}
	if (v < least[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* Unicode's Bidi_Control characters: marks, embeddings, overrides and
 * isolates reorder the rest of the line on a terminal that honours them, so
 * a name could show as another ("Trojan Source", CVE-2021-42574). */
static int is_bidi_control(unsigned cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* 1: a C0 control, DEL or the backslash, always escaped; 2: a byte from
 * 0x80, escaped unless it starts a well-formed sequence of a character that
 * is neither a C1 control nor a bidi control. */
static const unsigned char byte_class[256] = {
	[0x01] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['\\'] = 1,
	[0x7f] = 1,
	[0x80] = 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/* The length of the UTF-8 character at s (from 0x80) that may be printed
 * as it is, or 0 when it is escaped. */
static int printable_sequence(const unsigned char *s)
{
	unsigned cp;
	int len = utf8_sequence(s, &cp);
	return len && cp >= 0xa0 && !is_bidi_control(cp) ? len : 0;
}

/* Does s hold anything escape_text changes (a backslash unless
 * keep_backslash)? On every name of every report line: one table load per
 * ASCII byte. */
static int needs_escape(const unsigned char *s, int keep_backslash)
{
	while (*s) {
		int class = byte_class[*s];
		if (class == 1 && !(keep_backslash && *s == '\\'))
			return 1;
		if (class != 2) {
			s++;
			continue;
		}
		int len = printable_sequence(s);
		if (!len)
			return 1;
		s += len;
	}
	return 0;
}

static const char *escape(const char *s, char *buf, size_t buflen, int keep_backslash)
{
	const unsigned char *u = (const unsigned char *)s;
	if (!needs_escape(u, keep_backslash))
		return s;
	size_t n = 0;
	while (*u) {
		char piece[16];
		const char *out = piece;
		size_t len = 1, plen;
		unsigned c = *u, cp = 0;
		int seq = c >= 0x80 ? utf8_sequence(u, &cp) : 0;
		if (seq && cp >= 0xa0 && !is_bidi_control(cp)) {
			out = (const char *)u; /* printed as it is */
			len = plen = (size_t)seq;
		} else if (seq && cp >= 0xa0) {
			len = (size_t)seq; /* a bidi control, by its code point */
			plen = (size_t)snprintf(piece, sizeof(piece), "\\u{%x}", cp);
		} else if (seq) {
			len = 2; /* a C1 control, U+0080-U+009F: both bytes, as a raw C1 byte is */
			plen = (size_t)snprintf(piece, sizeof(piece), "\\x%02x\\x%02x", c, u[1]);
		} else if (c == '\\') {
			out = keep_backslash ? "\\" : "\\\\";
			plen = keep_backslash ? 1 : 2;
		} else if (byte_class[c]) { /* C0, DEL, a byte of no well-formed sequence */
			const char *named = c == 0x1b ? "\\e" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : NULL;
			plen = named ? (size_t)snprintf(piece, sizeof(piece), "%s", named)
				     : (size_t)snprintf(piece, sizeof(piece), "\\x%02x", c);
		} else {
			out = (const char *)u;
			plen = 1;
		}
		/* Whole or not at all: a cut never splits an escape or a character. */
		if (n + plen >= buflen)
			break;
		memcpy(buf + n, out, plen);
		n += plen;
		u += len;
	}
	buf[n] = '\0';
	return buf;
}

const char *escape_text(const char *s, char *buf, size_t buflen)
{
	return escape(s, buf, buflen, 0);
}

const char *escape_controls(const char *s, char *buf, size_t buflen)
{
	return escape(s, buf, buflen, 1);
}

int decimal_digits(uint64_t v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void progress_init(struct progress *pr)
{
	memset(pr, 0, sizeof(*pr));
	pr->enabled = isatty(STDERR_FILENO);
	pr->start_ns = pr->last_ns = now_ns();
}

void progress_update(struct progress *pr, const char *fmt, ...)
{
	if (!pr->enabled)
		return;
	uint64_t t = now_ns();
	if (t - pr->start_ns < 1000000000ull || t - pr->last_ns < 200000000ull)
		return;
	pr->last_ns = t;
	va_list ap;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	pr->shown = 1;
}

void progress_done(struct progress *pr)
{
	if (pr->shown)
		fputs("\r\033[K", stderr);
	pr->shown = 0;
}
