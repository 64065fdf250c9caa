/*
 * source.h - costs per source line, for "analyze source" (render_source.c)
 * and the viewer's source panel (view.h), and the source files themselves.
 *
 * The charging rule: within one file, each stack's value goes to the
 * innermost of its frames that is in that file, once. So the lines of a
 * caller stay clean when its callee is in the same file (the cost is the
 * callee's line), while a file whose code called into a library is still
 * credited, at the line of the call, for costs that bottom out there.
 * Inlined frames are frames of their own file (calltree.h's frames are
 * inline-chain entries, each with its own file and line). A file's total is
 * the value of the stacks with a frame in it, so totals of different files
 * overlap and each is a share of the whole.
 *
 * The table holds several value types side by side (the viewer switches
 * between them with one key, TSV prints them all): per-stack values come in
 * as arrays, one per type, as calltree_stack_sums gives them.
 *
 * Source text: a trace names source files by the paths its debug info
 * recorded, so they are untrusted paths. source_text_load opens only
 * regular files (file.h), looks under --search-dir for files moved since
 * the build, and says in a note when what it read may not be what was
 * built (missing, newer than the binary, fewer lines than the costs name).
 */
#ifndef IPSCOPE_SOURCE_H
#define IPSCOPE_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "calltree.h"
#include "profile.h"

#define SOURCE_MAX_VALUES PROFILE_MAX_VALUE_TYPES

/* One line of one file that some stack was charged to; line 0: unknown line. */
struct source_line {
	uint32_t line;
	uint32_t entry; /* its values: source_table.values[entry * nvalues ..] */
};

struct source_file {
	uint32_t file;    /* string id of the recorded path */
	uint32_t module;  /* module of the first frame charged (mtime check), or UINT32_MAX */
	uint32_t max_line;
	struct source_line *lines; /* by line number */
	uint32_t nlines;
	int64_t totals[SOURCE_MAX_VALUES]; /* value of the stacks with a frame in the file */
};

struct source_table {
	const struct calltree *t;
	uint32_t nvalues;
	struct source_file *files; /* in the order first charged */
	uint32_t nfiles;
	int64_t *values;           /* per entry, nvalues each */
	uint32_t nentries;
	struct source_line *line_store; /* storage behind files[].lines */
};

/*
 * Charge the stacks of t by the rule above, with nvalues per-stack value
 * arrays (stack_values[k][stack], k < SOURCE_MAX_VALUES).
 */
void source_table_build(struct source_table *st, const struct calltree *t, const int64_t *const *stack_values,
			uint32_t nvalues);
/*
 * The same rule for one file only (string id file), from t's nodes, which
 * must hold every stack with a value (calltree_build_all_nodes): for each
 * stack, the innermost node of its path with a frame in the file, found
 * for every node in one pass over the tree (parents first), so the cost is
 * O(nodes + stacks) where source_table_build walks every frame of every
 * stack; what a viewer uses for one file at a time. st then has that file
 * alone, or no file when nothing is charged to it.
 */
void source_table_build_file(struct source_table *st, const struct calltree *t, uint32_t file,
			     const int64_t *const *stack_values, uint32_t nvalues);
void source_table_free(struct source_table *st);

/* Value k of line entry l of a file. */
static inline int64_t source_line_value(const struct source_table *st, const struct source_line *l, uint32_t k)
{
	return st->values[(uint64_t)l->entry * st->nvalues + k];
}

/* The files whose value k is not 0, largest |total| first (ties by path) into
 * *order (freed by the caller); their number. */
uint32_t source_files_by_cost(const struct source_table *st, uint32_t k, uint32_t **order);

/* The index in st->files of the file with string id file, or UINT32_MAX. */
uint32_t source_file_index(const struct source_table *st, uint32_t file);

/*
 * The files whose recorded path ends with name at a path component
 * ("parser.c" and "src/parser.c" match /home/x/src/parser.c, "arser.c"
 * does not); a path equal to name is the only match. Up to max indices
 * into out; the number of matches (which may exceed max).
 */
uint32_t source_match_file(const struct source_table *st, const char *name, uint32_t *out, uint32_t max);

/* The text of a source file as read for showing beside its costs. */
struct source_text {
	char *path;         /* the file read, NULL when none could be */
	char *data;         /* its bytes, NUL-terminated */
	uint32_t *starts;   /* line i (1-based) starts at data + starts[i - 1] */
	uint32_t nlines;
	char note[1024];    /* why the code may not match the costs, "" when nothing says so */
};

/*
 * Read the source recorded at path (untrusted), else DIR/path and DIR/tail
 * for each tail of path under each of dirs; max_line is the largest line
 * the costs name, binary the module's recorded path (NULL: no mtime check).
 * Never fails: without a file, tx->path is NULL and tx->note says why.
 */
void source_text_load(struct source_text *tx, const char *path, const char *binary, const char *const *dirs,
		      int ndirs, uint32_t max_line);
void source_text_free(struct source_text *tx);

/* Line line (1-based) of tx and its length without the newline, or NULL past the end. */
const char *source_text_line(const struct source_text *tx, uint32_t line, size_t *len);

/*
 * A line of code made printable: tabs expanded to stops of 8 columns and
 * control characters escaped (escape_controls: its backslashes stay), into
 * buf; returns buf.
 */
const char *source_printable(const char *code, size_t len, char *buf, size_t buflen);

#endif
