/*
 * png_check.c - a PNG reader for the tests (see png_check.h): chunks, the
 * IHDR, the IDAT stream inflated with zlib, the five row filters undone,
 * then the pixels counted.
 */
#include "png_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* A small open-addressing set of pixel values (cap entries at most). */
#define COLOR_SLOTS (1u << 17)

int png_check(const char *path, struct png_info *info, char *err, size_t errlen)
{
	memset(info, 0, sizeof(*info));
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *file = malloc(size > 0 ? (size_t)size : 1);
	int rc = -1;
	unsigned char *idat = NULL, *raw = NULL;
	uint32_t *slots = NULL;
	if (!file || fread(file, 1, (size_t)size, f) != (size_t)size) {
		snprintf(err, errlen, "%s: cannot read", path);
		goto out;
	}
	static const unsigned char signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
	if (size < 8 || memcmp(file, signature, 8)) {
		snprintf(err, errlen, "%s: not a PNG (no signature)", path);
		goto out;
	}
	uint32_t depth = 0, type = 99, interlace = 0;
	size_t nidat = 0;
	int ended = 0;
	idat = malloc((size_t)size);
	for (long at = 8; at + 12 <= size;) {
		uint32_t len = be32(file + at);
		const unsigned char *kind = file + at + 4, *data = file + at + 8;
		if ((long)len > size - at - 12) {
			snprintf(err, errlen, "%s: chunk %.4s runs past the end", path, (const char *)kind);
			goto out;
		}
		if (crc32(crc32(0, NULL, 0), kind, len + 4) != be32(data + len)) {
			snprintf(err, errlen, "%s: chunk %.4s has a bad CRC", path, (const char *)kind);
			goto out;
		}
		if (!memcmp(kind, "IHDR", 4) && len >= 13) {
			info->width = be32(data);
			info->height = be32(data + 4);
			depth = data[8];
			type = data[9];
			interlace = data[12];
		} else if (!memcmp(kind, "IDAT", 4)) {
			memcpy(idat + nidat, data, len);
			nidat += len;
		} else if (!memcmp(kind, "IEND", 4)) {
			ended = 1;
			break;
		}
		at += 12 + (long)len;
	}
	uint32_t channels = type == 0 ? 1 : type == 2 ? 3 : type == 3 ? 1 : type == 4 ? 2 : type == 6 ? 4 : 0;
	if (!ended || !info->width || !info->height || depth != 8 || !channels || interlace) {
		snprintf(err, errlen, "%s: not a complete non-interlaced 8-bit PNG (type %u, depth %u)", path, type, depth);
		goto out;
	}
	size_t stride = (size_t)info->width * channels, need = (stride + 1) * info->height;
	raw = malloc(need);
	uLongf got = need;
	if (!raw || uncompress(raw, &got, idat, nidat) != Z_OK || got != need) {
		snprintf(err, errlen, "%s: the image data does not inflate to %zu bytes", path, need);
		goto out;
	}
	/* Undo the filters in place: row y's bytes follow its filter byte. */
	for (uint32_t y = 0; y < info->height; y++) {
		unsigned char *row = raw + y * (stride + 1), filter = row[0];
		unsigned char *cur = row + 1, *prev = y ? raw + (y - 1) * (stride + 1) + 1 : NULL;
		if (filter > 4) {
			snprintf(err, errlen, "%s: row %u has filter %u", path, y, filter);
			goto out;
		}
		for (size_t x = 0; x < stride; x++) {
			int a = x >= channels ? cur[x - channels] : 0, b = prev ? prev[x] : 0;
			int c = prev && x >= channels ? prev[x - channels] : 0;
			int add = filter == 1 ? a : filter == 2 ? b : filter == 3 ? (a + b) / 2 : filter == 4 ? paeth(a, b, c) : 0;
			cur[x] = (unsigned char)(cur[x] + add);
		}
	}
	slots = calloc(COLOR_SLOTS, sizeof(*slots));
	uint32_t first = 0;
	uint64_t unlike = 0;
	for (uint32_t y = 0; y < info->height; y++) {
		const unsigned char *row = raw + y * (stride + 1) + 1;
		for (uint32_t x = 0; x < info->width; x++) {
			uint32_t v = 0;
			for (uint32_t c = 0; c < channels; c++)
				v = v << 8 | row[x * channels + c];
			if (!x && !y)
				first = v;
			unlike += v != first;
			/* Store v + 1 so that 0 marks an empty slot. */
			uint32_t h = (v * 2654435761u) & (COLOR_SLOTS - 1);
			while (slots[h] && slots[h] != v + 1)
				h = (h + 1) & (COLOR_SLOTS - 1);
			if (!slots[h] && info->colors < 65536) {
				slots[h] = v + 1;
				info->colors++;
			}
		}
	}
	info->foreground = (double)unlike / ((double)info->width * info->height);
	rc = 0;
out:
	fclose(f);
	free(file);
	free(idat);
	free(raw);
	free(slots);
	return rc;
}
