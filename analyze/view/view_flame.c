/*
 * view_flame.c - the flame graph strip along the bottom of the viewer
 * (view.h): the selected node's subtree fills the width, the node itself
 * on the bottom row, its callees above it in the ranked order (largest on
 * the left), each as wide as its share of the node's value, drawn with
 * text cells. Columns are given out by the running sum (floor of each
 * boundary), so boxes never overlap and a level never overflows the width;
 * a callee narrower than a cell is not drawn, so the layout is bounded by
 * width x levels boxes however large the tree.
 */
#include "view_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "alloc.h"
#include "arith.h"

uint32_t view_flame_layout(struct view *v, uint32_t node, int width, int levels, struct view_flame_box *out,
			   uint32_t max)
{
	if (width <= 0 || levels <= 0 || max == 0)
		return 0;
	const struct view_rank *r = view_rank(v);
	struct view_flame_box *stack = calloc_or_abort((size_t)width * (size_t)levels + 1, sizeof(*stack));
	uint32_t top = 0, n = 0;
	stack[top++] = (struct view_flame_box){node, 0, 0, width};
	while (top && n < max) {
		struct view_flame_box b = stack[--top];
		out[n++] = b;
		uint64_t total = abs_i64(r->incl[b.node]), cum = 0;
		if (b.level + 1 >= levels || total == 0)
			continue;
		uint32_t nk;
		const uint32_t *kids = view_children(v, b.node, &nk);
		for (uint32_t i = 0; i < nk; i++) {
			uint64_t c = abs_i64(r->incl[kids[i]]);
			if (c == 0)
				break; /* sorted: the rest are 0 too */
			int x0 = b.x + (int)((unsigned __int128)cum * (unsigned)b.w / total);
			cum = cum + c > total ? total : cum + c;
			int x1 = b.x + (int)((unsigned __int128)cum * (unsigned)b.w / total);
			if (x1 > x0 && top < (uint32_t)width * (uint32_t)levels)
				stack[top++] = (struct view_flame_box){kids[i], b.level + 1, x0, x1 - x0};
		}
	}
	free(stack);
	return n;
}

void view_flame_draw(struct view *v, struct view_screen *s, int y, int levels, uint32_t node)
{
	const struct view_data *d = view_cur(v);
	const struct profile *p = d->p;
	uint32_t max = (uint32_t)s->cols * (uint32_t)levels + 1;
	struct view_flame_box *boxes = calloc_or_abort(max, sizeof(*boxes));
	uint32_t n = view_flame_layout(v, node, s->cols, levels, boxes, max);
	for (uint32_t i = 0; i < n; i++) {
		const struct view_flame_box *b = &boxes[i];
		int row = y + levels - 1 - b->level;
		uint32_t frame = d->t->nodes[b->node].frame; /* the root has none: "all" */
		/* Neighbours differ in colour: by level and by the box's column. */
		uint8_t attr = (uint8_t)(VA_FLAME0 + ((unsigned)b->level + (unsigned)b->x * 7u + frame) % 4u);
		if (b->node && view_frame_is_leaf(d, frame))
			attr = VA_LEAF;
		view_fill(s, row, b->x, b->w, ' ', attr);
		if (b->w >= 2) {
			/* A left edge, so boxes stay apart without colours too. */
			view_fill(s, row, b->x, 1, s->utf8 ? 0x258f : '|', attr);
			char name[4096];
			if (b->node)
				view_short_name(profile_string(p, p->functions[d->t->frames[frame].function].name),
						s->utf8, name, sizeof(name));
			else
				snprintf(name, sizeof(name), "all");
			view_put(s, row, b->x + 1, b->w - 1, name, attr);
		}
	}
	free(boxes);
}
