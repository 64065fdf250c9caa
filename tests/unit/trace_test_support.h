/*
 * trace_test_support.h - what the trace unit tests (test_trace.c,
 * test_trace_layout.c) share: a byte buffer with a hand encoder of the
 * layout in TRACE_FORMAT.md (a second, independent encoder), zstd in memory,
 * a small trace written through the writer that exercises every record type,
 * and reading a stream to its end.
 */
#ifndef IPSCOPE_TRACE_TEST_SUPPORT_H
#define IPSCOPE_TRACE_TEST_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "trace.h"

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

/* Append n bytes to b (growing it). */
void put(struct bytes *b, const void *data, size_t n);
/* Append v as size little-endian bytes, whatever the host. */
void put_le(struct bytes *b, uint64_t v, int size);
/* Append a u32 length and the bytes of s, as the layout stores strings. */
void put_string(struct bytes *b, const char *s);
/* Append a file header of the given version and header size. */
void put_file_header(struct bytes *b, unsigned major, unsigned minor, uint32_t header_size);
/* Start a record with a zero length; returns where its payload starts, for end_record. */
size_t begin_record(struct bytes *b, unsigned type, unsigned flags);
/* Patch the length of the record whose payload starts at payload_start. */
void end_record(struct bytes *b, size_t payload_start);
/* Append a well-formed END record. */
void put_end_record(struct bytes *b);

/* raw compressed as one zstd frame, or the frames of z decompressed. */
struct bytes zstd_compress(const struct bytes *raw);
struct bytes zstd_decompress(const struct bytes *z);

/* A memfd to give the writer; fd_contents reads it whole and closes it. */
int new_memfd(void);
struct bytes fd_contents(int fd);

/* Deterministic xorshift numbers; rng_seed restarts the sequence. */
void rng_seed(uint64_t seed);
uint64_t rng(void);

/*
 * Every record type through the writer, with flushes in between;
 * flush_sizes gets the compressed size after each flush and flush_records
 * the records before it (cut there, exactly those must be read).
 */
struct bytes write_small_trace(uint64_t flush_sizes[4], int flush_records[4]);
/* Check record number index against what write_small_trace wrote. */
void check_small_record(int index, const struct trace_record *r);

struct outcome {
	int last;      /* last trace_reader_next result (-2: open failed) */
	int records;   /* records returned */
	int truncated;
	char message[512];
};

/* Read data to the end; with small, check each record with check_small_record. */
struct outcome read_memory(const void *data, size_t size, int small);

#endif
