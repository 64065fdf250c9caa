/*
 * trace_bytes - where a trace's bytes go, by record type, for bench/alloc-size.
 * It decompresses the trace and walks its record framing (TRACE_FORMAT.md,
 * "Record framing"), then compresses each type's records on their own, at
 * collect's zstd level (1), to tell each type's share of the file: the sum of
 * those is close to the file's size, not equal (zstd finds less repetition in
 * one type's records than in all of them interleaved, or more). A bench tool:
 * it trusts its input, and stops at the first record that does not fit.
 * usage: bench_trace_bytes TRACE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "trace.h"

enum { TYPES = 16 };

static const char *type_name(unsigned type)
{
	static const char *const names[TYPES] = {
		[TRACE_META] = "META",
		[TRACE_MODULE] = "MODULE",
		[TRACE_MODULE_UNLOAD] = "MODULE_UNLOAD",
		[TRACE_THREAD] = "THREAD",
		[TRACE_STACK] = "STACK",
		[TRACE_SAMPLES] = "SAMPLES",
		[TRACE_LOSS] = "LOSS",
		[TRACE_END] = "END",
		[TRACE_ALLOCS] = "ALLOCS",
		[TRACE_PROCESS] = "PROCESS",
		[TRACE_JIT_MAP] = "JIT_MAP",
		[TRACE_ALLOCS_PACKED] = "ALLOCS_PACKED",
		[TRACE_ALLOCS_IDS] = "ALLOCS_IDS",
	};
	return type < TYPES && names[type] ? names[type] : "(other)";
}

struct per_type {
	uint64_t records, raw, compressed;
	ZSTD_CCtx *cctx;
};

/* Compress len bytes into the type's stream (end: finish it), counting the output. */
static void compress(struct per_type *t, const void *data, size_t len, int end)
{
	static uint8_t out[1 << 17];
	ZSTD_inBuffer in = { data, len, 0 };
	for (;;) {
		ZSTD_outBuffer o = { out, sizeof out, 0 };
		size_t left = ZSTD_compressStream2(t->cctx, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left)) {
			fprintf(stderr, "bench_trace_bytes: zstd: %s\n", ZSTD_getErrorName(left));
			exit(1);
		}
		t->compressed += o.pos;
		if (end ? left == 0 : in.pos == in.size)
			return;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_trace_bytes TRACE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 1;
	}
	/* The whole decompressed stream: bench traces are at most a few hundred MiB. */
	size_t cap = 1 << 20, len = 0;
	uint8_t *raw = malloc(cap), inbuf[1 << 16];
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	size_t got;
	uint64_t file_bytes = 0;
	while (raw && (got = fread(inbuf, 1, sizeof inbuf, f)) > 0) {
		file_bytes += got;
		ZSTD_inBuffer in = { inbuf, got, 0 };
		while (in.pos < in.size) {
			if (cap - len < (1 << 17) && !(raw = realloc(raw, cap *= 2)))
				break;
			ZSTD_outBuffer o = { raw + len, cap - len, 0 };
			size_t r = ZSTD_decompressStream(dctx, &o, &in);
			if (ZSTD_isError(r)) {
				fprintf(stderr, "%s: zstd: %s\n", argv[1], ZSTD_getErrorName(r));
				return 1;
			}
			len += o.pos;
		}
	}
	fclose(f);
	if (!raw || len < 16) {
		fprintf(stderr, "%s: not a trace\n", argv[1]);
		return 1;
	}
	struct per_type types[TYPES] = { 0 };
	uint32_t header;
	memcpy(&header, raw + 12, 4);
	for (size_t at = header; at + 8 <= len;) {
		uint16_t type;
		uint32_t size;
		memcpy(&type, raw + at, 2);
		memcpy(&size, raw + at + 4, 4);
		if (size > len - at - 8)
			break;
		struct per_type *t = &types[type < TYPES ? type : 0];
		if (!t->cctx) {
			t->cctx = ZSTD_createCCtx();
			ZSTD_CCtx_setParameter(t->cctx, ZSTD_c_compressionLevel, 1);
		}
		compress(t, raw + at, 8 + (size_t)size, 0);
		t->records++;
		t->raw += 8 + (uint64_t)size;
		at += 8 + (size_t)size;
	}
	printf("%-14s %10s %14s %14s %7s\n", "record", "records", "bytes", "compressed", "share");
	uint64_t sum = 0;
	for (unsigned i = 0; i < TYPES; i++)
		if (types[i].cctx) {
			compress(&types[i], NULL, 0, 1);
			sum += types[i].compressed;
		}
	for (unsigned i = 0; i < TYPES; i++)
		if (types[i].cctx) {
			printf("%-14s %10llu %14llu %14llu %6.1f%%\n", type_name(i), (unsigned long long)types[i].records,
			       (unsigned long long)types[i].raw, (unsigned long long)types[i].compressed,
			       100.0 * (double)types[i].compressed / (double)sum);
			ZSTD_freeCCtx(types[i].cctx);
		}
	printf("%-14s %10s %14zu %14llu (file: %llu)\n", "all", "", len, (unsigned long long)sum,
	       (unsigned long long)file_bytes);
	ZSTD_freeDCtx(dctx);
	free(raw);
	return 0;
}
