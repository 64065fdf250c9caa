/*
 * view_tui.c - the ncurses front end of analyze view (view_tui.h).
 *
 * The model draws into a grid of cells (view.h); this file paints the grid
 * with ncurses' wide-character calls, one run of cells of the same role at a
 * time, maps the roles to colours (or to bold, dim and reverse without
 * them), and maps ncurses' keys to the model's. ncurses only sends what
 * changed, so painting the whole grid after every key is cheap.
 *
 * Resizing: ncurses catches SIGWINCH itself and returns KEY_RESIZE from
 * get_wch, after which the grid is made again at the new size. use_tioctl
 * makes the size the terminal's even when LINES and COLUMNS are exported.
 *
 * Signals, and what is async-signal-safe here. endwin() is not: it writes
 * through stdio buffers and ncurses' own state, which the interrupted code
 * may be in the middle of changing. So:
 *  - SIGINT, SIGTERM and SIGHUP only set a flag (installed without
 *    SA_RESTART, so get_wch returns at once; a 200 ms input timeout is the
 *    fallback). The loop then leaves as on q: endwin, the terminal as it
 *    was, and the caller re-raises the signal for the right exit status.
 *  - A second such signal before that (the loop is stuck), or a crash
 *    (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT), restores the terminal with
 *    only async-signal-safe calls: write(2) of the terminfo strings that
 *    leave the alternate screen, show the cursor, reset attributes and the
 *    keypad mode (looked up when the screen was set up, so nothing is
 *    computed in the handler), and tcsetattr(2) of the modes saved before
 *    ncurses changed them. Then the signal's default action runs
 *    (SA_RESETHAND, and raise for one sent with kill): a core or death by
 *    the signal, as without the viewer.
 * The saved modes, the strings and the flag are file-static: a signal
 * handler gets no context pointer, and there is one terminal per process.
 */
#define NCURSES_WIDECHAR 1
#include "view_tui.h"

#include <curses.h>
#include <errno.h>
#include <langinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <wchar.h>

/* ---- restoring the terminal from a signal handler (see above) ---- */

static struct termios saved_modes;
static int have_saved_modes;
static char restore_sequence[256];
static size_t restore_length;
static volatile sig_atomic_t quit_signal;

static const int quit_signals[] = {SIGINT, SIGTERM, SIGHUP};
static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NQUIT (sizeof(quit_signals) / sizeof(quit_signals[0]))
#define NCRASH (sizeof(crash_signals) / sizeof(crash_signals[0]))
static struct sigaction previous_quit[NQUIT], previous_crash[NCRASH];

static void restore_now(void)
{
	if (restore_length) {
		ssize_t ignored = write(STDOUT_FILENO, restore_sequence, restore_length);
		(void)ignored;
	}
	if (have_saved_modes)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_modes);
}

static void on_crash(int sig)
{
	int saved = errno;
	restore_now();
	errno = saved;
	raise(sig); /* SA_RESETHAND: the default action now (a fault re-faults on return too) */
}

static void on_quit(int sig)
{
	if (quit_signal) { /* the second: the loop did not get to it */
		restore_now();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	quit_signal = sig;
}

/* Append terminfo capability cap (if the terminal has it) to the restore sequence. */
static void add_capability(const char *cap)
{
	char *s = tigetstr(cap);
	if (!s || s == (char *)-1)
		return;
	size_t n = strlen(s);
	if (restore_length + n < sizeof(restore_sequence)) {
		memcpy(restore_sequence + restore_length, s, n);
		restore_length += n;
	}
}

static void install_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_quit; /* no SA_RESTART: get_wch returns */
	for (size_t i = 0; i < NQUIT; i++) {
		sigaction(quit_signals[i], NULL, &previous_quit[i]);
		if (previous_quit[i].sa_handler != SIG_IGN) /* nohup's and a shell's ignoring stays */
			sigaction(quit_signals[i], &sa, NULL);
	}
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (size_t i = 0; i < NCRASH; i++)
		sigaction(crash_signals[i], &sa, &previous_crash[i]);
}

static void remove_handlers(void)
{
	for (size_t i = 0; i < NQUIT; i++)
		sigaction(quit_signals[i], &previous_quit[i], NULL);
	for (size_t i = 0; i < NCRASH; i++)
		sigaction(crash_signals[i], &previous_crash[i], NULL);
}

/* ---- painting ---- */

static attr_t attrs[VA_NATTRS];

/* Colour pairs and attributes of the roles (view.h). */
static void set_roles(int color)
{
	for (int i = 0; i < VA_NATTRS; i++)
		attrs[i] = A_NORMAL;
	attrs[VA_DIM] = A_DIM;
	attrs[VA_BOLD] = A_BOLD;
	attrs[VA_SELECTED] = A_REVERSE | A_BOLD;
	attrs[VA_STATUS] = A_REVERSE;
	attrs[VA_TITLE] = A_REVERSE | A_BOLD;
	if (!color) {
		attrs[VA_MATCH] = A_BOLD | A_UNDERLINE;
		attrs[VA_LEAF] = A_UNDERLINE;
		attrs[VA_HEAT2] = A_BOLD;
		attrs[VA_HEAT3] = A_BOLD | A_UNDERLINE;
		attrs[VA_HEAT4] = A_REVERSE | A_BOLD;
		attrs[VA_FLAME0] = attrs[VA_FLAME2] = A_REVERSE;
		attrs[VA_ERROR] = A_REVERSE | A_BOLD;
		return;
	}
	start_color();
	use_default_colors();
	int warm = COLORS >= 256;
	static const struct {
		int role;
		short fg, bg;
		attr_t extra;
	} pairs[] = {
		{VA_TITLE, COLOR_BLACK, COLOR_CYAN, A_BOLD},
		{VA_MATCH, COLOR_YELLOW, -1, A_BOLD | A_UNDERLINE},
		{VA_BAR, COLOR_CYAN, -1, 0},
		{VA_LEAF, COLOR_MAGENTA, -1, A_BOLD},
		{VA_INLINED, COLOR_MAGENTA, -1, 0},
		{VA_HEAT1, COLOR_CYAN, -1, 0},
		{VA_HEAT2, COLOR_YELLOW, -1, 0},
		{VA_HEAT3, COLOR_RED, -1, A_BOLD},
		{VA_HEAT4, COLOR_WHITE, COLOR_RED, A_BOLD},
		{VA_FLAME0, COLOR_BLACK, COLOR_RED, 0},
		{VA_FLAME1, COLOR_BLACK, COLOR_YELLOW, 0},
		{VA_FLAME2, COLOR_BLACK, COLOR_MAGENTA, 0},
		{VA_FLAME3, COLOR_BLACK, COLOR_YELLOW, A_BOLD},
		{VA_ERROR, COLOR_WHITE, COLOR_RED, A_BOLD},
		{VA_POPUP, COLOR_WHITE, COLOR_BLUE, 0},
	};
	/* With 256 colours the flame graph in warm tones, as flame graphs are. */
	static const short warm_tones[4] = {203, 215, 209, 221};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		short bg = pairs[i].bg;
		if (warm && pairs[i].role >= VA_FLAME0 && pairs[i].role <= VA_FLAME3)
			bg = warm_tones[pairs[i].role - VA_FLAME0];
		init_pair((short)(i + 1), pairs[i].fg, bg);
		attrs[pairs[i].role] = COLOR_PAIR((int)i + 1) | pairs[i].extra;
	}
}

static void paint(const struct view_screen *s)
{
	wchar_t run[1024];
	for (int y = 0; y < s->rows; y++) {
		const struct view_cell *row = &s->cells[(size_t)y * (size_t)s->cols];
		int x = 0;
		while (x < s->cols) {
			uint8_t a = row[x].attr;
			int start = x, n = 0;
			for (; x < s->cols && row[x].attr == a && n + 1 < (int)(sizeof(run) / sizeof(run[0])); x++)
				if (row[x].ch) /* 0: the right half of a wide character */
					run[n++] = (wchar_t)row[x].ch;
			run[n] = L'\0';
			attrset(attrs[a < VA_NATTRS ? a : VA_NORMAL]);
			mvaddnwstr(y, start, run, n);
		}
	}
	attrset(A_NORMAL);
	if (s->cursor_y >= 0) {
		curs_set(1);
		move(s->cursor_y, s->cursor_x);
	} else {
		curs_set(0);
	}
	refresh();
}

/* ncurses' key to the model's; -1 for none. */
static int model_key(int rc, wint_t ch)
{
	if (rc == KEY_CODE_YES) {
		switch (ch) {
		case KEY_UP: return VIEW_KEY_UP;
		case KEY_DOWN: return VIEW_KEY_DOWN;
		case KEY_LEFT: return VIEW_KEY_LEFT;
		case KEY_RIGHT: return VIEW_KEY_RIGHT;
		case KEY_PPAGE: return VIEW_KEY_PGUP;
		case KEY_NPAGE: return VIEW_KEY_PGDN;
		case KEY_HOME: return VIEW_KEY_HOME;
		case KEY_END: return VIEW_KEY_END;
		case KEY_ENTER: return VIEW_KEY_ENTER;
		case KEY_BACKSPACE: return VIEW_KEY_BACKSPACE;
		default: return -1;
		}
	}
	if (ch == L'\n' || ch == L'\r')
		return VIEW_KEY_ENTER;
	if (ch == 27)
		return VIEW_KEY_ESC;
	if (ch == 127 || ch == 8)
		return VIEW_KEY_BACKSPACE;
	if (ch == 3) /* ^C when the terminal does not send SIGINT */
		return 'q';
	return ch < 0x20 ? -1 : (int)ch;
}

int view_tui_run(struct view *v, int color, char *err, size_t errlen)
{
	quit_signal = 0;
	have_saved_modes = tcgetattr(STDIN_FILENO, &saved_modes) == 0;
	install_handlers();
	use_tioctl(TRUE);
	SCREEN *screen = newterm(NULL, stdout, stdin);
	if (!screen) {
		remove_handlers();
		const char *term = getenv("TERM");
		snprintf(err, errlen, "cannot drive this terminal (TERM=%s)", term && *term ? term : "(unset)");
		return -1;
	}
	restore_length = 0;
	add_capability("rmcup");
	add_capability("sgr0");
	add_capability("cnorm");
	add_capability("rmkx");
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	timeout(200);
	curs_set(0);
	set_roles(color && has_colors());
	struct view_screen s;
	int utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	view_screen_init(&s, LINES, COLS, utf8);
	int redraw = 1;
	while (!quit_signal) {
		if (redraw) {
			view_draw(v, &s);
			paint(&s);
			redraw = 0;
		}
		wint_t ch;
		int rc = get_wch(&ch);
		if (rc == ERR)
			continue; /* the timeout, or a signal: the flag says */
		if (rc == KEY_CODE_YES && ch == KEY_RESIZE) {
			view_screen_free(&s);
			view_screen_init(&s, LINES, COLS, utf8);
			clear();
			redraw = 1;
			continue;
		}
		int key = model_key(rc, ch);
		if (key < 0)
			continue;
		if (view_key(v, key))
			break;
		redraw = 1;
	}
	view_screen_free(&s);
	endwin();
	delscreen(screen);
	if (have_saved_modes)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_modes);
	remove_handlers();
	restore_length = 0;
	return quit_signal;
}
