/*
 * fuzz_replay.c - runs a libFuzzer target's inputs without libFuzzer: each
 * file named, and each file of each directory named, goes once through
 * LLVMFuzzerTestOneInput. Linked with the symbolizer's targets, it replays
 * their seeds and kept regression inputs in every build (ctest
 * unit_symbolize_fuzz_*), ASan's included, where clang's libFuzzer is not
 * at hand.
 *
 *   fuzz_replay PATH...
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned replayed;

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t size = 0, cap = 0, n;
	if (f == NULL) {
		fprintf(stderr, "fuzz_replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	do {
		if (size == cap && (data = realloc(data, cap = cap * 2 + 65536)) == NULL)
			abort();
		n = fread(data + size, 1, cap - size, f);
		size += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(data, size);
	free(data);
	replayed++;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			replay_file(argv[i]);
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, by_name);
		if (n < 0) {
			fprintf(stderr, "fuzz_replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
				replay_file(path);
			free(names[k]);
		}
		free(names);
	}
	printf("fuzz_replay: %u inputs\n", replayed);
	return replayed > 0 ? 0 : 1;
}
