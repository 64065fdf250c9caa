/*
 * png_info.c - "png_info FILE": prints "WIDTH HEIGHT COLORS FOREGROUND%" of
 * a PNG (png_check.h) for the end-to-end plot tests, or exits 1 saying why
 * it is not a readable PNG.
 */
#include <stdio.h>

#include "png_check.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: png_info FILE.png\n", stderr);
		return 2;
	}
	struct png_info info;
	char err[512];
	if (png_check(argv[1], &info, err, sizeof(err))) {
		fprintf(stderr, "png_info: %s\n", err);
		return 1;
	}
	printf("%u %u %u %.2f\n", info.width, info.height, info.colors, 100 * info.foreground);
	return 0;
}
