/*
 * render_asm.c - "analyze source --asm FUNCTION": each matching function's
 * instructions with their self cost, as perf annotate and pprof -disasm
 * print them (asm_report in report.h; which instruction a cost goes to,
 * and where the code is read from, is disasm.h's).
 *
 * Per function: a heading with its module, extent and how it was found
 * (symbol table, FDE of stripped code), its total and share of the
 * profile; then one row per instruction: a mark for the --top hottest
 * ("=>"), address, cost and percentage of the function, source line (when
 * debug info has one) and the instruction. Costs are heat-coloured on a
 * terminal. TSV: a header line, then function, address, every value type,
 * line and instruction per instruction, raw integers.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "arith.h"
#include "disasm.h"
#include "report.h"
#include "terminal.h"

static const char *bounds_text(enum disasm_bounds b)
{
	return b == DISASM_SYMBOL ? "symbol table" : b == DISASM_FDE ? "FDE: stripped code" : "by address";
}

static void print_heading(const struct report *r, const struct disasm_function *f, uint64_t whole)
{
	const struct profile *p = r->p;
	char name[4096], path[4096], cost[64];
	const char *unit = profile_string(p, p->value_types[r->value].unit);
	const char *file = f->file ? f->file : profile_string(p, p->modules[f->module].path);
	fprintf(r->out, "%s%s%s in %s [0x%" PRIx64 ", 0x%" PRIx64 ") (%s): %s (%.1f%% of %s)\n", r->pal.bold,
		escape_text(f->name, name, sizeof(name)), r->pal.reset, escape_text(file, path, sizeof(path)), f->lo,
		f->hi, bounds_text(f->bounds), format_value(f->totals[0], unit, cost, sizeof(cost)),
		report_percent(f->totals[0], whole), profile_string(p, p->value_types[r->value].type));
	if (f->note[0])
		fprintf(r->out, "Note: %s\n", escape_text(f->note, path, sizeof(path)));
}

/* The smallest cost among the n hottest instructions of f (0 when none has a cost): what marks a row. */
static uint64_t mark_threshold(const struct disasm_table *dt, const struct disasm_function *f, uint32_t n)
{
	uint64_t *v = calloc_or_abort(f->ninsns + 1, sizeof(*v));
	for (uint32_t i = 0; i < f->ninsns; i++)
		v[i] = abs_i64(disasm_value(dt, f, i, 0));
	uint64_t threshold = UINT64_MAX;
	for (uint32_t k = 0; k < n; k++) { /* n selection passes: n is small, functions are short */
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < f->ninsns; i++)
			if (v[i] && (best == UINT32_MAX || v[i] > v[best]))
				best = i;
		if (best == UINT32_MAX)
			break;
		threshold = v[best];
		v[best] = 0;
	}
	free(v);
	return threshold == UINT64_MAX ? 0 : threshold;
}

static void print_function(const struct report *r, const struct disasm_table *dt, const struct disasm_function *f,
			   uint32_t top, uint64_t whole)
{
	const struct profile *p = r->p;
	const char *unit = profile_string(p, p->value_types[r->value].unit);
	print_heading(r, f, whole);
	char buf[64], text[1024];
	int wcost = 4, waddr = 7, wline = 4;
	uint64_t hottest = 0;
	for (uint32_t i = 0; i < f->ninsns; i++) {
		int64_t v = disasm_value(dt, f, i, 0);
		int n = (int)strlen(format_value(v, unit, buf, sizeof(buf)));
		wcost = n > wcost ? n : wcost;
		n = snprintf(buf, sizeof(buf), "0x%" PRIx64, f->insns[i].vaddr);
		waddr = n > waddr ? n : waddr;
		n = decimal_digits(f->insns[i].line);
		wline = n > wline ? n : wline;
		hottest = abs_i64(v) > hottest ? abs_i64(v) : hottest;
	}
	uint64_t marked = mark_threshold(dt, f, top);
	fprintf(r->out, "   %*s %*s %6s %*s │ Instruction\n", waddr, "Address", wcost, "Cost", "%", wline, "Line");
	for (uint32_t i = 0; i < f->ninsns; i++) {
		const struct disasm_insn *in = &f->insns[i];
		int64_t v = disasm_value(dt, f, i, 0);
		char cost[64] = "", pct[16] = "", line[16] = "", addr[32];
		if (v) {
			format_value(v, unit, cost, sizeof(cost));
			snprintf(pct, sizeof(pct), "%5.1f%%", report_percent(v, abs_i64(f->totals[0])));
		}
		if (in->line)
			snprintf(line, sizeof(line), "%u", in->line);
		snprintf(addr, sizeof(addr), "0x%" PRIx64, in->vaddr);
		const char *heat = r->pal.heat[heat_level(abs_i64(v), hottest)];
		fprintf(r->out, "%s %*s %s%*s %6s%s %s%*s%s │ %s\n", v && abs_i64(v) >= marked ? "=>" : "  ", waddr, addr,
			heat, wcost, cost, pct, *heat ? r->pal.reset : "", r->pal.dim, wline, line, r->pal.reset,
			in->size ? escape_text(in->text, text, sizeof(text)) : "(not decoded)");
	}
	char cost[64];
	fprintf(r->out, "Total %s in %s: %s\n\n", profile_string(p, p->value_types[r->value].type),
		escape_text(f->name, text, sizeof(text)), format_value(f->totals[0], unit, cost, sizeof(cost)));
}

static void print_tsv(const struct report *r, const struct disasm_table *dt, const uint32_t *types)
{
	const struct profile *p = r->p;
	fputs("function\taddress", r->out);
	for (uint32_t k = 0; k < dt->nvalues; k++)
		fprintf(r->out, "\t%s", profile_string(p, p->value_types[types[k]].type));
	fputs("\tline\tinstruction\n", r->out);
	for (uint32_t i = 0; i < dt->nfunctions; i++) {
		const struct disasm_function *f = &dt->functions[i];
		for (uint32_t j = 0; j < f->ninsns; j++) {
			report_tsv_field(r->out, f->name);
			fprintf(r->out, "\t0x%" PRIx64, f->insns[j].vaddr);
			for (uint32_t k = 0; k < dt->nvalues; k++)
				fprintf(r->out, "\t%" PRId64, disasm_value(dt, f, j, k));
			fprintf(r->out, "\t%u\t", f->insns[j].line);
			report_tsv_field(r->out, f->insns[j].text);
			fputc('\n', r->out);
		}
	}
}

int asm_report(const struct report *r, const struct source_options *so, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	uint32_t types[PROFILE_MAX_VALUE_TYPES];
	uint32_t ntypes = report_source_types(r, so, types);
	struct disasm_table dt;
	if (disasm_table_build(&dt, p, &r->o->load, so->asm_function, types, ntypes, so->trace, err, errlen) < 0)
		return -1;
	if (so->format == SOURCE_FORMAT_TSV) {
		print_tsv(r, &dt, types);
	} else {
		struct calltree *t = calltree_new(p, r->o->combine, CALLTREE_ALL_THREADS, r->value);
		report_header(r, t);
		for (uint32_t i = 0; i < dt.nfunctions; i++)
			print_function(r, &dt, &dt.functions[i], so->top, t->total_abs);
		report_footer(r, t);
		calltree_free(t);
	}
	disasm_table_free(&dt);
	return 0;
}
