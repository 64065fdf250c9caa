/*
 * view_text.c - text for the viewer's screen (view.h): the cell grid and
 * writing UTF-8 into it, cost bars, and function names shortened for a
 * narrow column.
 *
 * Everything that reaches a cell goes through view_put, which decodes
 * UTF-8 and lets no control character through (a trace's names are
 * untrusted; they are escaped before, and this is the last guard), and
 * without a UTF-8 terminal lets nothing but ASCII through. Widths are
 * wcwidth's, what ncurses itself uses, so wide characters line up.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "alloc.h"
#include "terminal.h"

void view_screen_init(struct view_screen *s, int rows, int cols, int utf8)
{
	s->rows = rows > 0 ? rows : 1;
	s->cols = cols > 0 ? cols : 1;
	s->utf8 = utf8;
	s->cells = calloc_or_abort((size_t)s->rows * (size_t)s->cols, sizeof(*s->cells));
	for (size_t i = 0; i < (size_t)s->rows * (size_t)s->cols; i++)
		s->cells[i] = (struct view_cell){' ', VA_NORMAL};
	s->cursor_y = s->cursor_x = -1;
}

void view_screen_free(struct view_screen *s)
{
	free(s->cells);
	s->cells = NULL;
}

static size_t encode(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

const char *view_screen_line(const struct view_screen *s, int y, char *buf, size_t len)
{
	size_t n = 0, kept = 0;
	for (int x = 0; y >= 0 && y < s->rows && x < s->cols && n + 5 < len; x++) {
		uint32_t c = s->cells[(size_t)y * (size_t)s->cols + (size_t)x].ch;
		if (c == 0)
			continue;
		n += encode(c, buf + n);
		if (c != ' ')
			kept = n;
	}
	buf[kept] = '\0';
	return buf;
}

/* The next code point of s (advancing it); U+FFFD for a malformed sequence. */
static uint32_t decode(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t c = *p++;
	int more = c >= 0xf0 && c < 0xf8 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
	if (c >= 0x80 && !more) {
		*s = p;
		return 0xfffd;
	}
	c &= more == 3 ? 0x07 : more == 2 ? 0x0f : more == 1 ? 0x1f : 0x7f;
	for (int i = 0; i < more; i++, p++) {
		if ((*p & 0xc0) != 0x80) {
			*s = p;
			return 0xfffd;
		}
		c = c << 6 | (*p & 0x3f);
	}
	*s = p;
	return c > 0x10ffff ? 0xfffd : c;
}

/* What cell c becomes on screen s and its width (0: dropped, a combining mark). */
static uint32_t shown_char(const struct view_screen *s, uint32_t c, int *width)
{
	*width = 1;
	if (c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0xfffd)
		return '?';
	if (c < 0x80)
		return c;
	if (!s->utf8)
		return '?';
	int w = wcwidth((wchar_t)c);
	if (w == 0)
		*width = 0;
	else if (w == 2)
		*width = 2;
	return c;
}

int view_text_width(const struct view_screen *s, const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	int n = 0, w;
	while (*p) {
		shown_char(s, decode(&p), &w);
		n += w;
	}
	return n;
}

int view_put(struct view_screen *s, int y, int x, int width, const char *text, uint8_t attr)
{
	if (y < 0 || y >= s->rows || x < 0 || x >= s->cols)
		return 0;
	int end = width < 0 || x + width > s->cols ? s->cols : x + width, col = x, w;
	struct view_cell *row = &s->cells[(size_t)y * (size_t)s->cols];
	const unsigned char *p = (const unsigned char *)text;
	while (*p && col < end) {
		uint32_t c = shown_char(s, decode(&p), &w);
		if (w == 0)
			continue;
		if (col + w > end)
			break;
		row[col] = (struct view_cell){c, attr};
		if (w == 2)
			row[col + 1] = (struct view_cell){0, attr};
		col += w;
	}
	return col - x;
}

int view_put_right(struct view_screen *s, int y, int x, int width, const char *text, uint8_t attr)
{
	int w = view_text_width(s, text);
	return view_put(s, y, w < width ? x + width - w : x, w < width ? w : width, text, attr);
}

void view_fill(struct view_screen *s, int y, int x, int width, uint32_t ch, uint8_t attr)
{
	for (int i = 0; i < width && y >= 0 && y < s->rows && x + i < s->cols; i++)
		if (x + i >= 0)
			s->cells[(size_t)y * (size_t)s->cols + (size_t)(x + i)] = (struct view_cell){ch, attr};
}

void view_paint(struct view_screen *s, int y, int x, int width, uint8_t attr)
{
	for (int i = 0; i < width && y >= 0 && y < s->rows && x + i < s->cols; i++)
		if (x + i >= 0)
			s->cells[(size_t)y * (size_t)s->cols + (size_t)(x + i)].attr = attr;
}

void view_bar(struct view_screen *s, int y, int x, int width, double fraction, uint8_t attr)
{
	if (fraction < 0)
		fraction = 0;
	if (fraction > 1)
		fraction = 1;
	if (!s->utf8) {
		int n = (int)(fraction * width + 0.5);
		view_fill(s, y, x, n, '#', attr);
		return;
	}
	/* Eighths of a cell: U+2588 is a full block, U+2589..U+258F seven to one eighth. */
	int eighths = (int)(fraction * width * 8 + 0.5);
	int full = eighths / 8, rest = eighths % 8;
	view_fill(s, y, x, full, 0x2588, attr);
	if (rest && full < width)
		view_fill(s, y, x + full, 1, 0x2590 - (uint32_t)rest, attr);
}

/* Does s start a C++ lambda "{lambda(...)#N}"? Its length, and N's text in num. */
static size_t lambda_at(const char *s, const char **num, size_t *num_len)
{
	if (strncmp(s, "{lambda(", 8))
		return 0;
	int depth = 1;
	const char *p = s + 8;
	for (; *p && depth; p++)
		depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
	if (depth || *p != '#')
		return 0;
	const char *digits = ++p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == digits || *p != '}')
		return 0;
	*num = digits;
	*num_len = (size_t)(p - digits);
	return (size_t)(p + 1 - s);
}

/* A Rust closure: "{closure#N}" (v0) or "{{closure}}" (legacy). */
static size_t closure_at(const char *s, const char **num, size_t *num_len)
{
	if (!strncmp(s, "{{closure}}", 11)) {
		*num_len = 0;
		return 11;
	}
	if (strncmp(s, "{closure#", 9))
		return 0;
	const char *p = s + 9, *digits = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == digits || *p != '}')
		return 0;
	*num = digits;
	*num_len = (size_t)(p - digits);
	return (size_t)(p + 1 - s);
}

const char *view_short_name(const char *name, int utf8, char *buf, size_t len)
{
	char tmp[4096];
	size_t n = 0;
	const char *lambda = utf8 ? "\xce\xbb" : "lambda"; /* λ */
	for (const char *p = name; *p && n + 16 < sizeof(tmp);) {
		const char *num = NULL;
		size_t num_len = 0, skip = lambda_at(p, &num, &num_len);
		if (!skip)
			skip = closure_at(p, &num, &num_len);
		if (!skip) {
			tmp[n++] = *p++;
			continue;
		}
		n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%s%s%.*s", lambda, num_len ? "#" : "",
				      (int)(num_len < 8 ? num_len : 8), num ? num : "");
		p += skip;
		/* The lambda is the function: its call operator says nothing more. */
		if (!strcmp(p, "::operator()") || !strcmp(p, "::operator() const"))
			break;
	}
	tmp[n < sizeof(tmp) ? n : sizeof(tmp) - 1] = '\0';
	const char *safe = escape_text(tmp, buf, len);
	if (safe == tmp)
		snprintf(buf, len, "%s", tmp);
	return buf;
}
