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

void palette_init(struct palette *pal, int color)
{
	if (!color) {
		*pal = (struct palette){"", "", "", "", "", "", ""};
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
	};
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
