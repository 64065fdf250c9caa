/*
 * fuzz_trace_reader.c - libFuzzer target for the trace reader (ctest
 * fuzz_trace_reader, built with -DIPSCOPE_FUZZ=ON and clang).
 *
 * Mutating compressed bytes mostly exercises zstd's own checks, so an input
 * that does not start with the zstd magic is taken as a decompressed record
 * stream and compressed first: that lets the fuzzer reach every field of
 * the record parser. The seed corpus (corpus/, made by make_trace_corpus)
 * holds real traces in both forms.
 *
 * Beyond "no crash", it checks the reader's contract: every pointer handed
 * out is readable for the length given, and messages are single lines of the
 * documented shape.
 */
#include "trace.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static volatile uint64_t sink;

static void require(int ok)
{
	if (!ok)
		__builtin_trap();
}

static void one_line(const char *message, const char *starts_with)
{
	require(strncmp(message, starts_with, strlen(starts_with)) == 0);
	require(strchr(message, '\n') == NULL);
}

/* Read every byte the record points to, so ASan sees any bad pointer. */
static void touch(const struct trace_record *rec)
{
	uint64_t h = rec->offset;
	switch (rec->type) {
	case TRACE_META:
		h += strlen(rec->u.meta.key) + strlen(rec->u.meta.value);
		break;
	case TRACE_MODULE:
		h += strlen(rec->u.module.path);
		for (uint32_t i = 0; i < rec->u.module.build_id_len; i++)
			h += rec->u.module.build_id[i];
		for (uint32_t i = 0; i < rec->u.module.nsegments; i++)
			h += rec->u.module.segments[i].vaddr + rec->u.module.segments[i].flags;
		break;
	case TRACE_THREAD:
		h += strlen(rec->u.thread.name);
		break;
	case TRACE_STACK:
		for (uint32_t i = 0; i < rec->u.stack.nframes; i++)
			h += rec->u.stack.ips[i];
		break;
	case TRACE_SAMPLES:
		for (uint32_t i = 0; i < rec->u.samples.count; i++)
			h += rec->u.samples.samples[i].time_ns + rec->u.samples.samples[i].state;
		break;
	case TRACE_JIT_MAP:
		h += strlen(rec->u.jit_map.path);
		for (uint32_t i = 0; i < rec->u.jit_map.text_len; i++)
			h += rec->u.jit_map.text[i];
		break;
	default:
		break;
	}
	sink += h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* libFuzzer calls it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t zstd_magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	const void *input = data;
	size_t input_size = size;
	void *compressed = NULL;
	if (size < 4 || memcmp(data, zstd_magic, 4) != 0) {
		/* One context for all runs: creating one per run costs more than the read. */
		static ZSTD_CCtx *cctx;
		if (!cctx)
			cctx = ZSTD_createCCtx();
		size_t cap = ZSTD_compressBound(size);
		compressed = malloc(cap);
		require(cctx != NULL && compressed != NULL);
		input_size = ZSTD_compressCCtx(cctx, compressed, cap, data, size, 1);
		require(!ZSTD_isError(input_size));
		input = compressed;
	}

	char err[512];
	struct trace_reader *r = trace_reader_open_memory(input, input_size, "fuzz", err, sizeof err);
	if (!r) {
		one_line(err, "fuzz: offset ");
		free(compressed);
		return 0;
	}
	struct trace_record rec;
	int ret;
	while ((ret = trace_reader_next(r, &rec)) > 0)
		touch(&rec);
	if (ret < 0)
		one_line(trace_reader_error(r), "fuzz: offset ");
	else if (trace_reader_truncated(r))
		one_line(trace_reader_error(r), "fuzz: truncated at offset ");
	require(trace_reader_next(r, &rec) == ret); /* the end is sticky */
	trace_reader_close(r);
	free(compressed);
	return 0;
}
