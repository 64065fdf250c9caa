// alloc_sites.cpp - allocation sites with known answers (e2e_alloc_sites,
// e2e_alloc_sampled, e2e_alloc_diff, e2e_alloc_plot). Every figure below is
// what analyze must report for the function named, at --allocs (rate 1):
//
//   make_nodes    500 x new Node (48 B)        24000 B, all leaked     leaf "new 48 B"
//   small_blocks  SMALL x malloc(32)           SMALL*32 B; the last 10 leaked (320 B),
//                                              all SMALL live at the peak; no temporaries
//                                              leaf "malloc 32 B"
//   big_blocks    1000 x calloc(1, 1 MiB)      1048576000 B, each freed at once:
//                                              1000 temporaries       leaf "calloc 1 MiB"
//   grow_chain    realloc(NULL..) 1..10 KiB    10 allocations, 56320 B, 10 frees, all
//                                              temporary (56320 B)     leaves "realloc 8-16 KiB"...
//
// Phases run in that order, so the live heap is highest at the end of
// small_blocks: 24000 + SMALL*32 bytes of these sites (the peak view holds
// make_nodes' 500 and small_blocks' SMALL blocks). Argument: SMALL (default
// 100000), so two runs differ by a known number of bytes.
#include <cstdio>
#include <cstdlib>
#include <cstring>

struct Node {
	char data[48];
};

static void *small[1000000];
static Node *nodes[500];
void *volatile sink;

__attribute__((noinline)) static void make_nodes()
{
	for (int i = 0; i < 500; i++)
		nodes[i] = new Node; // @new-node
}

__attribute__((noinline)) static void small_blocks(long n)
{
	for (long i = 0; i < n; i++)
		small[i] = malloc(32); // @malloc-32
	for (long i = 0; i + 10 < n; i++)
		free(small[i]);
}

__attribute__((noinline)) static void big_blocks()
{
	for (int i = 0; i < 1000; i++) {
		void *p = calloc(1, 1 << 20);
		sink = p;
		free(p);
	}
}

__attribute__((noinline)) static void grow_chain()
{
	void *p = NULL;
	for (int i = 1; i <= 10; i++)
		p = realloc(p, (size_t)i * 1024);
	sink = p;
	free(p);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n < 11 || n > 1000000)
		return 2;
	make_nodes();
	small_blocks(n);
	big_blocks();
	grow_chain();
	sink = nodes[0];
	return 0;
}
