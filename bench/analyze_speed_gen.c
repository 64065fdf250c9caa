/*
 * analyze_speed_gen.c - writes the trace bench/analyze-speed times: N samples
 * over S distinct stacks whose addresses lie inside the functions of a real
 * ELF file (so analyze really symbolizes them), with that file's PT_LOAD
 * segments and build-id as the module record.
 *
 * Stacks share prefixes the way real call trees do (each new stack extends a
 * random prefix of an earlier one), samples pick stacks with a skewed
 * distribution (a few hot stacks, a long tail) over 4 threads.
 *
 * usage: analyze_speed_gen OUT.zst ELF SAMPLES STACKS
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define LOAD_BIAS 0x555555554000ull
#define MAX_DEPTH 48

struct function_range {
	uint64_t start, size;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: deterministic, so every run times the same trace. */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static void die(const char *what)
{
	fprintf(stderr, "analyze_speed_gen: %s\n", what);
	exit(1);
}

/* Functions, segments and build-id of path. */
static struct function_range *read_elf(const char *path, size_t *nfunctions,
				       struct trace_segment *segments, uint32_t *nsegments,
				       uint8_t *build_id, uint32_t *build_id_len)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die("cannot open the ELF file");
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		die("not an ELF file");
	size_t nphdr;
	elf_getphdrnum(e, &nphdr);
	*nsegments = 0;
	for (size_t i = 0; i < nphdr && *nsegments < 8; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		segments[(*nsegments)++] = (struct trace_segment){
			.vaddr = ph.p_vaddr,
			.memsz = ph.p_memsz,
			.file_offset = ph.p_offset,
			.flags = (ph.p_flags & PF_X ? TRACE_SEGMENT_EXEC : 0) |
				 (ph.p_flags & PF_W ? TRACE_SEGMENT_WRITE : 0) |
				 (ph.p_flags & PF_R ? TRACE_SEGMENT_READ : 0),
		};
	}
	struct function_range *fns = NULL;
	size_t n = 0, cap = 0;
	*build_id_len = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		if (sh.sh_type == SHT_NOTE) {
			size_t off = 0, name_off, desc_off;
			GElf_Nhdr nh;
			while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0)
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 64) {
					memcpy(build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
					*build_id_len = nh.n_descsz;
				}
		}
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			gelf_getsym(d, (int)i, &sym);
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 4 || !sym.st_value)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				fns = realloc(fns, cap * sizeof(*fns));
			}
			fns[n++] = (struct function_range){sym.st_value, sym.st_size};
		}
	}
	elf_end(e);
	close(fd);
	if (n == 0)
		die("no function symbols (is the file stripped?)");
	*nfunctions = n;
	return fns;
}

/* An address inside a random function; a pool keeps distinct addresses realistic. */
static uint64_t random_address(const struct function_range *fns, size_t n)
{
	const struct function_range *f = &fns[rng() % n];
	return LOAD_BIAS + f->start + 1 + rng() % (f->size - 1);
}

int main(int argc, char **argv)
{
	if (argc != 5)
		die("usage: analyze_speed_gen OUT.zst ELF SAMPLES STACKS");
	uint64_t nsamples = strtoull(argv[3], NULL, 10);
	uint32_t nstacks = (uint32_t)strtoul(argv[4], NULL, 10);
	struct trace_segment segments[8];
	uint32_t nsegments;
	uint8_t build_id[64];
	uint32_t build_id_len;
	size_t nfns;
	struct function_range *fns =
		read_elf(argv[2], &nfns, segments, &nsegments, build_id, &build_id_len);

	/* A pool of call sites, about as many as a large program shows. */
	size_t npool = 20000;
	uint64_t *pool = malloc(npool * sizeof(*pool));
	for (size_t i = 0; i < npool; i++)
		pool[i] = random_address(fns, nfns);

	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		die("cannot create the output");
	struct trace_writer *w = trace_writer_open(fd, 1);
	if (!w)
		die("cannot start the trace");
	trace_writer_meta(w, TRACE_META_COMMAND, "analyze_speed_gen (synthetic)");
	trace_writer_meta(w, TRACE_META_MODE, "cpu");
	trace_writer_meta(w, TRACE_META_INTERVAL_NS, "1000000");
	trace_writer_meta(w, TRACE_META_SOURCE, "synthetic");
	trace_writer_meta(w, TRACE_META_START_MONOTONIC_NS, "1000000000");
	struct trace_module m = {
		.pid = 1, .id = 1, .time_ns = 1000000000, .load_bias = LOAD_BIAS, .path = argv[2],
		.build_id = build_id_len ? build_id : NULL, .build_id_len = build_id_len,
		.nsegments = nsegments, .segments = segments,
	};
	trace_writer_module(w, &m);
	for (uint32_t t = 0; t < 4; t++) {
		char name[32];
		snprintf(name, sizeof(name), "worker-%u", t);
		struct trace_thread th = {.pid = 1, .tid = 1 + t, .time_ns = 1000000000,
					  .flags = TRACE_THREAD_START | TRACE_THREAD_NAME, .name = name};
		trace_writer_thread(w, &th);
	}

	/* Stacks, root first in roots[], written leaf first. */
	uint64_t *roots = malloc((size_t)nstacks * MAX_DEPTH * sizeof(*roots));
	uint8_t *depths = malloc(nstacks);
	uint64_t ips[MAX_DEPTH];
	for (uint32_t s = 0; s < nstacks; s++) {
		uint64_t *r = roots + (size_t)s * MAX_DEPTH;
		uint32_t depth = 8 + (uint32_t)(rng() % 32), shared = 0;
		if (s > 0) { /* share a prefix of an earlier stack */
			uint32_t other = (uint32_t)(rng() % s);
			shared = (uint32_t)(rng() % depths[other]);
			if (shared > depth - 1)
				shared = depth - 1;
			memcpy(r, roots + (size_t)other * MAX_DEPTH, shared * sizeof(*r));
		}
		for (uint32_t i = shared; i < depth; i++)
			r[i] = pool[rng() % npool];
		r[depth - 1] = random_address(fns, nfns); /* leaves are exact pcs */
		depths[s] = (uint8_t)depth;
		for (uint32_t i = 0; i < depth; i++)
			ips[i] = r[depth - 1 - i];
		struct trace_stack st = {.id = s + 1, .flags = TRACE_STACK_LEAF_EXACT,
					 .nframes = depth, .ips = ips};
		if (trace_writer_stack(w, &st))
			die("write failed");
	}
	uint64_t now = 1000000000;
	for (uint64_t i = 0; i < nsamples; i++) {
		/* Skewed: squaring a uniform number favours low stack ids. */
		double u = (double)(rng() >> 11) / 9007199254740992.0;
		uint32_t s = (uint32_t)(u * u * nstacks);
		now += 250000;
		struct trace_sample sm = {.time_ns = now, .pid = 1, .tid = 1 + (uint32_t)(i & 3),
					  .stack_id = s + 1, .weight = 1};
		if (trace_writer_sample(w, &sm))
			die("write failed");
	}
	struct trace_end end = {.time_ns = now, .flags = TRACE_END_EXITED, .samples = nsamples,
				.weight = nsamples};
	if (trace_writer_close(w, &end))
		die("write failed");
	close(fd);
	free(roots);
	free(depths);
	free(pool);
	free(fns);
	return 0;
}
