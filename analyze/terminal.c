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

/* Does s hold a byte escape_text changes? On every name of every report
 * line: one table load per byte, UTF-8 lead 0xc2 looked at more closely. */
static int needs_escape(const unsigned char *s)
{
	/* 1: C0 controls, DEL, raw C1 bytes (0x80-0x9f); 2: 0xc2, a C1 when UTF-8 encoded */
	static const unsigned char unsafe[256] = {
		[0x01] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		[0x7f] = 1,
		[0x80] = 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
		[0xc2] = 2,
	};
	for (; *s; s++)
		if (unsafe[*s] == 1 || (unsafe[*s] == 2 && s[1] >= 0x80 && s[1] <= 0x9f))
			return 1;
	return 0;
}

const char *escape_text(const char *s, char *buf, size_t buflen)
{
	const unsigned char *u = (const unsigned char *)s;
	if (!needs_escape(u))
		return s; /* raw C1 bytes inside valid UTF-8 are continuations: checked below */
	size_t n = 0;
	int continuation = 0; /* continuation bytes still expected by a UTF-8 lead */
	for (; *u && n + 5 < buflen; u++) {
		unsigned c = *u;
		const char *named = c == 0x1b ? "\\e" : c == '\t' ? "\\t" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : NULL;
		int control = c < 0x20 || c == 0x7f || (c == 0xc2 && u[1] >= 0x80 && u[1] <= 0x9f) ||
			      (c >= 0x80 && c <= 0x9f && !continuation);
		if (continuation && (c & 0xc0) == 0x80)
			continuation--;
		else
			continuation = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
		if (named) {
			memcpy(buf + n, named, 2);
			n += 2;
		} else if (control) {
			if (n + 9 >= buflen)
				break;
			snprintf(buf + n, buflen - n, "\\x%02x", c);
			n += 4;
			if (c == 0xc2) { /* the C1 character's second byte too */
				u++;
				snprintf(buf + n, buflen - n, "\\x%02x", *u);
				n += 4;
				continuation = 0;
			}
		} else {
			buf[n++] = (char)c;
		}
	}
	buf[n] = '\0';
	return buf;
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
