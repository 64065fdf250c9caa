/*
 * view_tui.h - the ncurses front end of analyze view (view_tui.c): takes the
 * terminal over, turns key presses into view_key calls, paints what
 * view_draw draws, and gives the terminal back as it was, also on SIGINT,
 * SIGTERM, SIGHUP and a crash. The only file that knows ncurses.
 */
#ifndef IPSCOPE_VIEW_TUI_H
#define IPSCOPE_VIEW_TUI_H

#include <stddef.h>

#include "view.h"

/*
 * Run v on the terminal of stdin and stdout until q: 0; the number of a
 * signal that ended it (SIGINT...: the terminal is restored, the caller
 * re-raises it after freeing); -1 with err set when the terminal cannot be
 * used. color: use colors when the terminal has them.
 */
int view_tui_run(struct view *v, int color, char *err, size_t errlen);

#endif
