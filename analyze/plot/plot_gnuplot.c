/*
 * plot_gnuplot.c - the gnuplot side of analyze plot (plot.h): the script
 * (terminal from the output's extension, the variables the data step set,
 * the kind's template from plots/), the directory it runs in, and gnuplot
 * itself as a subprocess whose messages are read back.
 *
 * The script sets its output only when the variable outfile is not given,
 * so the kept script writes the real output when rerun, while plot_make
 * passes `-e outfile='TEMP'`: the file appears under its name only once
 * gnuplot has finished it (output.h). Text (the dumb terminal) goes to
 * gnuplot's stdout, which plot_make copies to the .txt file or its own.
 */
#include "plot.h"
#include "plot_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "file.h"
#include "output.h"
#include "terminal.h"

static const char *const kind_names[PLOT_NKINDS] = {"timeline", "top", "diff", "heap", "rate"};

const char *plot_kind_name(enum plot_kind kind)
{
	return kind < PLOT_NKINDS ? kind_names[kind] : "?";
}

enum plot_kind plot_kind_named(const char *name)
{
	for (int k = 0; k < PLOT_NKINDS; k++)
		if (!strcmp(name, kind_names[k]))
			return (enum plot_kind)k;
	return PLOT_NKINDS;
}

/* s as a gnuplot string expression: single-quoted runs joined by "'" for
 * each quote and "\\" for each backslash. gnuplot's scanner misreads ''
 * (its own escape for a quote) at the start of a string or twice in a row,
 * and a double-quoted run could hold a `command`, so only these two pieces
 * are double-quoted. Control characters are escaped (one line per string:
 * escape_controls, which leaves the backslashes to this quoting). */
static void put_quoted(FILE *out, const char *s)
{
	char safe[4096];
	s = escape_controls(s, safe, sizeof(safe));
	int open = 0, pieces = 0;
	for (; *s; s++) {
		if (*s == '\\' || *s == '\'') {
			if (open)
				fputc('\'', out);
			if (pieces++)
				fputc('.', out);
			fputs(*s == '\'' ? "\"'\"" : "\"\\\\\"", out);
			open = 0;
			continue;
		}
		if (!open) {
			fputs(pieces++ ? ".'" : "'", out);
			open = 1;
		}
		fputc(*s, out);
	}
	if (open)
		fputc('\'', out);
	else if (!pieces)
		fputs("''", out);
}

void plot_var_number(struct plot_script *s, const char *name, double v)
{
	fprintf(s->vars, "%s = %.17g\n", name, v);
}

void plot_var_string(struct plot_script *s, const char *name, const char *v)
{
	fprintf(s->vars, "%s = ", name);
	put_quoted(s->vars, v);
	fputc('\n', s->vars);
}

void plot_var_strings(struct plot_script *s, const char *name, const char *const *v, uint32_t n)
{
	/* gnuplot arrays have at least one element. */
	fprintf(s->vars, "array %s[%u]\n", name, n ? n : 1);
	for (uint32_t i = 0; i < n; i++) {
		fprintf(s->vars, "%s[%u] = ", name, i + 1);
		put_quoted(s->vars, v[i]);
		fputc('\n', s->vars);
	}
}

void plot_var_numbers(struct plot_script *s, const char *name, const double *v, uint32_t n)
{
	fprintf(s->vars, "array %s[%u]\n", name, n ? n : 1);
	for (uint32_t i = 0; i < n; i++)
		fprintf(s->vars, "%s[%u] = %.17g\n", name, i + 1, v[i]);
}

/* The terminal for path's extension (NULL: text), or NULL when unknown. */
static const char *terminal_for(const char *path, int *text)
{
	const char *dot = path ? strrchr(path, '.') : NULL;
	*text = 0;
	if (!path || (dot && !strcmp(dot, ".txt"))) {
		*text = 1;
		return "dumb";
	}
	if (!dot)
		return NULL;
	if (!strcmp(dot, ".png"))
		return "pngcairo size 1280,720 font 'Sans,11' noenhanced";
	if (!strcmp(dot, ".svg"))
		return "svg size 1280,720 font 'Sans,11' noenhanced background rgb 'white'";
	if (!strcmp(dot, ".pdf"))
		return "pdfcairo size 11in,6.2in font 'Sans,10' noenhanced";
	return NULL;
}

int plot_output_known(const char *path)
{
	int text;
	return !path || terminal_for(path, &text) != NULL;
}

/* The templates' directory: rq's, or share/ipscope/plots beside the program. */
static int templates_dir(const struct plot_request *rq, char *out, size_t len)
{
	if (rq->templates) {
		snprintf(out, len, "%s", rq->templates);
		return 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	int n2 = snprintf(out, len, "%s/../share/ipscope/plots", exe);
	return n2 < 0 || (size_t)n2 >= len ? -1 : 0;
}

static int copy_template(const struct plot_request *rq, FILE *out, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	if (templates_dir(rq, dir, sizeof(dir))) {
		snprintf(err, errlen, "cannot find the plot templates: /proc/self/exe: %s", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s.gp", dir, plot_kind_name(rq->kind));
	FILE *in = fopen(path, "r");
	if (!in) {
		snprintf(err, errlen, "plot template %s: %s", path, strerror(errno));
		return -1;
	}
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	int bad = ferror(in);
	fclose(in);
	if (bad) {
		snprintf(err, errlen, "reading plot template %s: %s", path, strerror(EIO));
		return -1;
	}
	return 0;
}

const char *plot_program(const struct profile *p, char *buf, size_t len)
{
	const char *cmd = p && p->command ? profile_string(p, p->command) : "";
	size_t word = strcspn(cmd, " ");
	const char *name = cmd;
	for (size_t i = 0; i < word; i++)
		if (cmd[i] == '/')
			name = cmd + i + 1;
	snprintf(buf, len, "%s", name);
	if (strlen(buf) > 80 && len > 81)
		strcpy(buf + 77, "...");
	return buf;
}

typedef int (*data_fn)(const struct plot_request *, const char *, struct plot_script *, char *, size_t);

static const data_fn data_of[PLOT_NKINDS] = {
	plot_data_timeline, plot_data_top, plot_data_diff, plot_data_heap, plot_data_rate,
};

int plot_write(const struct plot_request *rq, const char *dir, const char *outfile, char *err, size_t errlen)
{
	int text;
	const char *terminal = terminal_for(rq->output, &text);
	if (!terminal) {
		snprintf(err, errlen, "%s: the output's extension says its type: .png, .svg, .pdf or .txt", rq->output);
		return -1;
	}
	struct plot_script s = {0};
	s.vars = open_memstream(&s.text, &s.len);
	if (!s.vars)
		abort_out_of_memory();
	const struct profile *p = rq->p;
	char program[512];
	plot_program(p, program, sizeof(program));
	plot_var_string(&s, "program", program);
	plot_var_string(&s, "trace", rq->trace ? rq->trace : "");
	plot_var_number(&s, "text", text);
	int rc = data_of[rq->kind](rq, dir, &s, err, errlen);
	fclose(s.vars);
	if (rc) {
		free(s.text);
		return -1;
	}
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "%s/%s.gp", dir, plot_kind_name(rq->kind));
	FILE *f = fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(s.text);
		return -1;
	}
	fprintf(f, "# analyze plot %s of %s; rerun in this directory: gnuplot %s.gp\n", plot_kind_name(rq->kind),
		rq->trace ? rq->trace : "?", plot_kind_name(rq->kind));
	if (text)
		fprintf(f, "set terminal dumb size %d,%d nofeed noenhanced %s\n", rq->text_width > 20 ? rq->text_width : 100,
			rq->text_height > 10 ? rq->text_height : 30, rq->color ? "ansi" : "mono");
	else
		fprintf(f, "set terminal %s\n", terminal);
	if (outfile) {
		fputs("if (!exists('outfile')) outfile = ", f);
		put_quoted(f, outfile);
		fputs("\nset output outfile\n", f);
	}
	fwrite(s.text, 1, s.len, f);
	free(s.text);
	rc = copy_template(rq, f, err, errlen);
	if (fclose(f) && !rc) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		rc = -1;
	}
	return rc;
}

/* Copy text gnuplot drew to sink without its form feeds (the dumb
 * terminal starts every page with one). */
static void copy_text(FILE *sink, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != '\f')
			fputc(buf[i], sink);
}

/*
 * Run gnuplot on dir/KIND.gp: with outfile (given with -e) it draws a file;
 * what it writes on its stdout goes to sink: text (form feeds dropped), or
 * with raw the picture of outfile "/dev/stdout", byte for byte, counted in
 * *copied. Its stderr is read back.
 */
static int run_gnuplot(const struct plot_request *rq, const char *dir, const char *outfile, FILE *sink, int raw,
		       size_t *copied, char *err, size_t errlen)
{
	const char *program = rq->gnuplot ? rq->gnuplot : "gnuplot";
	char script[64], assign[PATH_MAX * 2 + 32];
	snprintf(script, sizeof(script), "%s.gp", plot_kind_name(rq->kind));
	if (outfile) {
		FILE *a = fmemopen(assign, sizeof(assign), "w");
		fputs("outfile = ", a);
		put_quoted(a, outfile);
		fputc('\0', a);
		fclose(a);
	}
	int messages[2], text[2], report[2];
	if (pipe2(messages, O_CLOEXEC) || pipe2(text, O_CLOEXEC) || pipe2(report, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, STDIN_FILENO);
		dup2(text[1], STDOUT_FILENO);
		dup2(messages[1], STDERR_FILENO);
		signal(SIGPIPE, SIG_DFL);
		if (chdir(dir) == 0) {
			if (outfile)
				execlp(program, program, "-e", assign, script, (char *)NULL);
			else
				execlp(program, program, script, (char *)NULL);
		}
		int e = errno;
		ssize_t unused = write(report[1], &e, sizeof(e));
		(void)unused;
		_exit(127);
	}
	close(messages[1]);
	close(text[1]);
	close(report[1]);
	/* Both pipes at once, so that neither fills while we wait on the
	 * other; of the messages, the first 16 KiB (a broken template can
	 * repeat one error for every point). */
	char msg[16384];
	size_t used = 0;
	struct pollfd fds[2] = {{messages[0], POLLIN, 0}, {text[0], POLLIN, 0}};
	int open_fds = 2;
	while (open_fds) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			char buf[4096];
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			} else if (i == 0) {
				size_t take = (size_t)n < sizeof(msg) - 1 - used ? (size_t)n : sizeof(msg) - 1 - used;
				memcpy(msg + used, buf, take);
				used += take;
			} else if (sink && raw) {
				*copied += fwrite(buf, 1, (size_t)n, sink);
			} else if (sink) {
				copy_text(sink, buf, (size_t)n);
			}
		}
	}
	msg[used] = '\0';
	int exec_errno = 0;
	ssize_t got = read(report[0], &exec_errno, sizeof(exec_errno));
	close(report[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof(exec_errno)) {
		snprintf(err, errlen, "cannot run %s: %s%s", program, strerror(exec_errno),
			 exec_errno == ENOENT ? " (install gnuplot, Debian's gnuplot-nox)" : "");
		return -1;
	}
	/* gnuplot's lines, joined: what went wrong is usually the last. */
	for (char *c = msg; *c; c++)
		if (*c == '\n' && c[1])
			*c = ' ';
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "%s was killed by signal %d%s%s", program, WTERMSIG(status), n ? ": " : "", msg);
		return -1;
	}
	if (WEXITSTATUS(status)) {
		snprintf(err, errlen, "%s failed (exit %d)%s%s", program, WEXITSTATUS(status), n ? ": " : "", msg);
		return -1;
	}
	if (n)
		diag(rq->diag, DIAG_WARNING, "%s: %s", program, msg);
	return 0;
}

/* Remove dir's files and dir (a temporary directory of ours). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char path[PATH_MAX + 256];
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* An absolute form of path (gnuplot runs in another directory). */
static char *absolute(const char *path)
{
	if (path[0] == '/')
		return strdup_or_abort(path);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return strdup_or_abort(path);
	char *out;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		abort_out_of_memory();
	return out;
}

int plot_make(const struct plot_request *rq, char *err, size_t errlen)
{
	char temp[PATH_MAX];
	const char *dir = rq->keep_dir;
	if (dir) {
		struct stat st;
		if (mkdir(dir, 0777) < 0 && (errno != EEXIST || stat(dir, &st) || !S_ISDIR(st.st_mode))) {
			snprintf(err, errlen, "--keep-data %s: %s", dir, errno == EEXIST ? "not a directory" : strerror(errno));
			return -1;
		}
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(temp, sizeof(temp), "%s/ipscope-plot-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(temp)) {
			snprintf(err, errlen, "%s: %s", temp, strerror(errno));
			return -1;
		}
		dir = temp;
	}
	int rc = -1, text;
	terminal_for(rq->output, &text);
	struct output out = {0};
	char *final = NULL, *written = NULL;
	int to_file = rq->output && strcmp(rq->output, "-");
	/* A file's script sets its output; text goes to gnuplot's stdout, which
	 * we pass on (to the file or ours). */
	if (to_file && !text)
		final = absolute(rq->output);
	/* The data first: a trace with nothing to plot leaves no file behind. */
	if (plot_write(rq, dir, final, err, errlen))
		goto done;
	/* A picture for a device or a FIFO (which gnuplot's own open could not
	 * tell from a file, nor we measure) comes through gnuplot's stdout into
	 * the stream output.h opened. */
	int stream = 0;
	size_t copied = 0;
	if (to_file) {
		if (output_open(&out, rq->output) < 0) {
			snprintf(err, errlen, "%s: %s", rq->output, output_error_text(errno));
			goto done;
		}
		stream = !text && !out.temp_path;
		if (!text)
			written = stream ? strdup_or_abort("/dev/stdout") : absolute(out.temp_path);
	}
	FILE *sink = to_file ? (text || stream ? out.file : NULL) : stdout;
	if (run_gnuplot(rq, dir, written, sink, stream, &copied, err, errlen) == 0)
		rc = 0;
	/* gnuplot can end with status 0 and no picture (a broken terminal
	 * driver, a template edited by hand): an empty file is not a plot. */
	struct stat written_st;
	if (rc == 0 && written &&
	    (stream ? copied == 0 : stat(written, &written_st) < 0 || written_st.st_size == 0)) {
		snprintf(err, errlen, "%s: gnuplot wrote nothing", rq->output);
		rc = -1;
	}
	/* Renamed into place when gnuplot finished it, removed otherwise. */
	if (to_file && output_close(&out, rc == 0) < 0 && rc == 0) {
		snprintf(err, errlen, "%s: %s", rq->output, strerror(errno));
		rc = -1;
	}
done:
	free(final);
	free(written);
	if (!rq->keep_dir)
		remove_dir(temp);
	return rc;
}
