/*
 * calltree.h - the one aggregation behind every report: report frames (one
 * per inline-chain entry of a location), the weight of each stack, and the
 * call tree (a prefix tree of root-first frame paths) with inclusive and self
 * counts. tree prints the nodes; flat folds the frames into rows. A stack's
 * frames are the model's (profile_stack_frames), as the exporters see them,
 * each mapped to its report frame.
 *
 * Counts are sample weights (timer periods: 1 + overruns), so they add up
 * to CPU time, not to sample records.
 */
#ifndef IPSCOPE_CALLTREE_H
#define IPSCOPE_CALLTREE_H

#include <stdint.h>

#include "profile.h"

#define CALLTREE_ALL_THREADS UINT32_MAX

/*
 * A frame as reports show it. With combine, frames with the same function,
 * file, line and inlined-ness are one frame (address 0); without, every
 * location's entries stay apart and carry the location's address.
 */
struct calltree_frame {
	uint64_t address;
	uint32_t function;
	uint32_t file;
	uint32_t line;
	uint32_t inlined;
};

struct calltree_node {
	uint32_t frame;
	uint32_t parent;
	uint32_t first_child; /* children are linked in no particular order */
	uint32_t next_sibling;
	uint32_t depth;       /* top level is 1; the root (node 0) is 0 */
	int64_t count;        /* inclusive: value of the samples through this node */
	int64_t self;         /* value of the samples whose innermost frame is this node */
};

#define CALLTREE_NONE UINT32_MAX

struct calltree {
	const struct profile *profile;
	int combine;
	uint32_t value;            /* the value type counted */
	struct calltree_frame *frames;
	uint32_t nframes, frames_cap;
	uint32_t *line_frame;      /* per profile line row: its frame */
	int64_t *stack_value;      /* per profile stack: value of the selected samples */
	uint32_t max_frames;       /* most frames in any stack of nonzero value */
	int64_t total;             /* value of the selected samples */
	uint64_t total_abs;        /* sum of |stack value|: the whole percentages divide */
	int64_t totals[PROFILE_MAX_VALUE_TYPES]; /* every type's total of the selected samples */
	int saturated;             /* some sum reached the int64 limit */
	uint64_t total_samples;    /* selected trace samples (profile_sample_count) */
	struct calltree_node *nodes; /* after calltree_build_nodes; nodes[0] is the root,
					and a node's parent has a smaller index */
	uint32_t nnodes;
	uint32_t *stack_node;      /* per profile stack: its innermost node, CALLTREE_NONE
				      when it has none (after calltree_build_nodes) */
	uint32_t *parents;         /* per node: nodes[n].parent, packed for passes over every node */
	uint32_t thread;           /* the thread selected, or CALLTREE_ALL_THREADS */
};

/* Frames and per-stack values of type value of p's samples of one thread
 * index (or CALLTREE_ALL_THREADS). */
struct calltree *calltree_new(const struct profile *p, int combine, uint32_t thread, uint32_t value);
/* Build the prefix tree (nodes) of the stacks whose value is not 0. */
void calltree_build_nodes(struct calltree *t);
/* Build it over every stack some selected sample names, whatever its value:
 * a diff shows the frames whose change is 0 too. */
void calltree_build_all_nodes(struct calltree *t);

/*
 * Per stack of t's profile (out has nstacks entries): the summed value of
 * type v of t's selected samples whose thread index is set in thread_mask
 * (NULL: all of them), scaled. A diff sums its base and new runs apart so.
 */
void calltree_stack_sums(const struct calltree *t, uint32_t v, const uint8_t *thread_mask, int64_t *out);
/*
 * Per node (t->nnodes entries each, nodes built): inclusive and (when self
 * is not NULL) self sums of per-stack values such as calltree_stack_sums
 * gives; stacks without a node add nothing.
 */
void calltree_node_sums(const struct calltree *t, const int64_t *stack_values, int64_t *inclusive,
			int64_t *self);
void calltree_free(struct calltree *t);

/* Report frames of a stack, root first, into out (room for t->max_frames); count returned. */
uint32_t calltree_stack_frames(const struct calltree *t, uint32_t stack, uint32_t *out);

/* Order for listing: file, function name, line, address (unknown files last). */
int calltree_frame_compare(const struct calltree *t, uint32_t a, uint32_t b);

/* Children of node, sorted by |count| (largest first), ties by frame order. */
uint32_t calltree_sorted_children(const struct calltree *t, uint32_t node, uint32_t **out);

#endif
