/*
 * info_json.c - analyze info --format json: the same facts as the text
 * report (info.h), with strings kept byte for byte (JSON escapes them) and
 * counters as numbers.
 */
#include "info.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "debug_hint.h"
#include "terminal.h"
#include "trace.h"

static json_t *jstring(const char *s)
{
	json_t *j = json_string(s);
	if (j)
		return j;
	char *ascii = strdup_or_abort(s);
	for (char *c = ascii; *c; c++)
		if ((unsigned char)*c >= 0x80)
			*c = '?';
	j = json_string(ascii);
	free(ascii);
	return j;
}

static json_t *jint(int64_t v)
{
	return json_integer((json_int_t)v);
}

/* Unsigned figures above INT64_MAX (none is plausible) are capped there. */
static json_t *juint(uint64_t v)
{
	return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

void info_print_json(FILE *out, const struct info *in)
{
	json_t *doc = info_json(in);
	json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', out);
	json_decref(doc);
}

json_t *info_json(const struct info *in)
{
	const struct profile *p = in->p;
	const struct load_stats *st = in->st;
	char a[256];
	json_t *root = json_object();
	json_object_set_new(root, "trace", jstring(in->trace));
	json_object_set_new(root, "truncated", json_boolean(st->truncated));
	json_object_set_new(root, "newer_collector", json_boolean(info_newer_collector(p, st) != NULL));
	json_object_set_new(root, "command", jstring(profile_string(p, p->command)));
	json_object_set_new(root, "start_realtime_ns", juint(p->start_realtime_ns));
	json_object_set_new(root, "duration_ns", juint(p->duration_ns));
	json_object_set_new(root, "mode", jstring(profile_string(p, p->mode)));
	json_object_set_new(root, "interval_ns", jint(p->period));
	json_object_set_new(root, "source", jstring(profile_string(p, p->source)));
	json_object_set_new(root, "effective_rate", json_real(info_effective_rate(in)));
	json_object_set_new(root, "samples", juint(in->samples));
	json_t *types = json_array();
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		json_array_append_new(types, json_pack("{s:o,s:o,s:o}", "type",
						       jstring(profile_string(p, p->value_types[v].type)), "unit",
						       jstring(profile_string(p, p->value_types[v].unit)), "total",
						       jint(in->totals[v])));
	json_object_set_new(root, "value_types", types);
	json_object_set_new(root, "default_value",
			    jstring(profile_string(p, p->value_types[p->default_value].type)));
	json_object_set_new(root, "saturated", json_boolean(in->saturated));
	json_object_set_new(root, "lost_samples", juint(p->lost_samples));
	json_object_set_new(root, "end", json_pack("{s:b,s:o,s:o}", "present", p->ended, "samples",
						   juint(st->end_samples), "weight", juint(st->end_weight)));
	json_object_set_new(root, "exit", json_pack("{s:o,s:i}", "text", jstring(info_exit_text(p, a, sizeof(a))),
						    "wait_status", p->wait_status));
	json_object_set_new(root, "agent", json_pack("{s:o,s:o,s:o}", "handler_ns", juint(st->agent_ns), "signals",
						     juint(st->agent_signals), "sampler_cpu_ns", juint(info_sampler_cpu_ns(in))));
	if (st->has_allocs)
		/* CPU weight of [ipscope: recording allocations]: time in the hooks, the profiler's own */
		json_object_set_new(root, "recording_allocations_weight", juint(st->hook_samples));
	uint64_t measured, sampled;
	uint32_t measured_threads = info_measured_totals(in, &measured, &sampled);
	struct coverage cov;
	info_coverage(in, &cov);
	/* What the samples miss by cause (CPU mode; in wall mode sampled_ns is on-CPU wall time). */
	uint32_t charged_threads;
	uint64_t charged = info_exit_charged_ns(in, &charged_threads);
	json_object_set_new(root, "measured_cpu",
			    json_pack("{s:I,s:o,s:o,s:o,s:I,s:{s:I,s:o,s:I,s:o,s:o}}", "threads", (json_int_t)measured_threads,
				      "measured_ns", juint(measured), "sampled_ns", juint(sampled), "charged_ns",
				      juint(charged), "charged_threads", (json_int_t)charged_threads, "missing",
				      "unsampled_threads", (json_int_t)cov.unsampled_threads, "unsampled_threads_ns",
				      juint(cov.unsampled_threads_ns), "partial_threads", (json_int_t)cov.partial_threads,
				      "partial_ns", juint(cov.partial_ns), "unseen_ns", juint(cov.unseen_ns)));
	json_t *threads = json_array();
	/* values[v * nthreads + i]: thread i's total of value type v. */
	int64_t *values = calloc_or_abort((size_t)p->nvalue_types * p->nthreads + 1, sizeof(*values));
	json_t *per_type[PROFILE_MAX_VALUE_TYPES] = { 0 };
	for (uint32_t v = 0; v < p->nvalue_types; v++) {
		profile_thread_totals(p, v, values + (size_t)v * p->nthreads, NULL);
		per_type[v] = json_array();
		for (uint32_t i = 0; i < p->nthreads; i++)
			json_array_append_new(per_type[v], jint(values[(size_t)v * p->nthreads + i]));
	}
	for (uint32_t i = 0; i < p->nthreads; i++) {
		const struct profile_thread *t = &p->threads[i];
		json_t *tv = json_object();
		for (uint32_t v = 0; v < p->nvalue_types; v++)
			json_object_set(tv, profile_string(p, p->value_types[v].type), json_array_get(per_type[v], i));
		json_array_append_new(threads, json_pack("{s:I,s:I,s:o,s:o,s:o,s:o,s:o}", "pid", (json_int_t)t->pid,
							 "tid", (json_int_t)t->tid, "name", jstring(profile_string(p, t->name)),
							 "samples", juint(in->thread_rows[i]), "values", tv,
							 "measured_cpu_ns", juint(info_measured_ns(in, i)), "off_cpu",
							 jint(in->thread_off[i])));
	}
	json_object_set_new(root, "threads", threads);
	json_t *procs = json_array();
	for (uint32_t i = 0; i < st->nprocesses; i++) {
		const struct load_process *pr = &st->processes[i];
		uint64_t rows;
		int64_t v = info_process_value(in, pr->pid, &rows);
		if (!info_pid_shown(in, pr->pid))
			continue;
		/* Its threads' totals of every value type (an allocation trace: its allocations, leaks...). */
		json_t *pv = json_object();
		for (uint32_t t = 0; t < p->nvalue_types; t++)
			json_object_set_new(pv, profile_string(p, p->value_types[t].type),
					    jint(info_process_total(in, pr->pid, values + (size_t)t * p->nthreads)));
		json_array_append_new(
			procs, json_pack("{s:I,s:I,s:o,s:o,s:o,s:o,s:o,s:b,s:b,s:i,s:b,s:b,s:o}", "pid", (json_int_t)pr->pid,
					 "parent", (json_int_t)pr->parent, "command", jstring(profile_string(p, pr->command)),
					 "path", jstring(profile_string(p, pr->path)), "samples", juint(rows), "value",
					 jint(v), "values", pv, "forked", (pr->flags & LOAD_PROCESS_FORKED) != 0, "exited",
					 (pr->flags & LOAD_PROCESS_EXITED) != 0, "wait_status", pr->wait_status,
					 "status_unknown", (pr->flags & LOAD_PROCESS_STATUS_UNKNOWN) != 0, "profiled",
					 !(pr->flags & LOAD_PROCESS_NOT_PROFILED), "not_profiled_reason",
					 jstring(profile_string(p, pr->reason))));
	}
	for (uint32_t v = 0; v < p->nvalue_types; v++)
		json_decref(per_type[v]);
	free(values);
	json_object_set_new(root, "processes", procs);
	json_object_set_new(root, "wall", json_pack("{s:o,s:o}", "off_cpu_samples", juint(st->off_cpu_samples),
						    "exited_unsampled", juint(st->exited_unsampled)));
	json_t *modules = json_array();
	double *share = debug_hint_module_shares(p, in->value);
	for (uint32_t i = 0; i < p->nmodules; i++) {
		const struct profile_module *m = &p->modules[i];
		const char *path = profile_string(p, m->path);
		json_array_append_new(modules, json_pack("{s:o,s:o,s:s,s:b,s:f}", "path", jstring(path), "build_id",
							 jstring(profile_string(p, m->build_id)), "debug_info",
							 info_debug_info_text(path, m->flags), "system",
							 (m->flags & PROFILE_MODULE_SYSTEM) != 0, "share", share[i]));
	}
	free(share);
	json_object_set_new(root, "modules", modules);
	json_object_set_new(root, "file", json_pack("{s:o,s:o,s:s#}", "compressed_bytes", juint(st->compressed_bytes),
						    "raw_bytes", juint(st->raw_bytes), "format", a,
						    snprintf(a, sizeof(a), "%u.%u", st->version_major, st->version_minor)));
	json_object_set_new(root, "stacks", json_pack("{s:o,s:o,s:o,s:o,s:o}", "distinct", juint(st->stack_records),
						      "truncated", juint(st->truncated_stacks), "truncated_samples",
						      juint(st->truncated_samples), "distinct_addresses",
						      juint(st->distinct_addresses), "undefined_stack_samples",
						      juint(st->undefined_stack_samples)));
	json_object_set_new(root, "corrected",
			    json_pack("{s:I,s:I,s:o,s:o,s:o,s:I}", "loss_threads", (json_int_t)st->implausible_loss_threads,
				      "weight_threads", (json_int_t)st->implausible_weight_threads, "clamped_weights",
				      juint(st->clamped_weights), "samples_outside_run", juint(st->samples_outside_run),
				      "samples_backwards", juint(st->samples_backwards), "overbusy_threads",
				      (json_int_t)st->overbusy_threads));
	json_t *meta = json_object();
	for (uint32_t i = 0; i < st->nmeta; i++)
		json_object_set_new(meta, profile_string(p, st->meta[i].key),
				    jstring(profile_string(p, st->meta[i].value)));
	json_object_set_new(root, "metadata", meta);
	return root;
}
