/*
 * tracegen.c - the one synthetic trace generator of the benchmarks
 * (bench/analyze-speed, bench/export-speed): N samples over a few threads,
 * whose stacks are paths through the functions of a real ELF file, so analyze
 * symbolizes them from its real debug info as it would a collected trace.
 *
 * The shape is meant to look like a real program, not like noise: distinct
 * stacks of depth 8 to 40, each extending the root part of an earlier one (as
 * a call tree shares prefixes), and a skewed popularity (a few hot stacks and
 * a long tail). What the two benchmarks vary is a few knobs:
 *
 *   --call-sites N   callers' frames come from a pool of N return addresses,
 *                    about as many distinct call sites as a large program
 *                    shows (default 0: every caller frame a fresh address)
 *   --skew K         the stack picked is STACKS * u^K for a uniform u in [0, 1),
 *                    so low stacks are hot (an integer; default 3)
 *   --max-run N      a thread stays in one stack for 1..N samples in a row,
 *                    as it does in a loop (default 20; 1: no runs)
 *   --overrun-every N  one sample in N weighs 2 (a timer overrun); default
 *                    50, 0 for none
 *
 * A fixed seed makes the same trace every time.
 *
 * usage: bench_tracegen [options] OUT.trace.zst ELF [SAMPLES [STACKS [THREADS]]]
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define INTERVAL_NS 1000000ull
#define LOAD_BIAS 0x555555554000ull
#define MAX_SEGMENTS 16
#define MAX_DEPTH 40

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64*: fast, and deterministic for a fixed seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double rng_unit(void)
{
	return (double)(rng() >> 11) * 0x1.0p-53;
}

static void die(const char *what)
{
	fprintf(stderr, "tracegen: %s: %s\n", what, errno ? strerror(errno) : elf_errmsg(-1));
	exit(1);
}

struct shape {
	uint32_t call_sites;    /* 0: no pool, every caller frame fresh */
	uint32_t skew;          /* popularity exponent */
	uint32_t max_run;       /* >= 1 */
	uint32_t overrun_every; /* 0: never */
};

struct elf_info {
	uint64_t *functions; /* start addresses of sized FUNC symbols in executable code */
	uint64_t *sizes;
	size_t nfunctions;
	uint8_t build_id[64];
	uint32_t build_id_len;
	struct trace_segment segments[MAX_SEGMENTS];
	uint32_t nsegments;
};

static void read_elf(const char *path, struct elf_info *info)
{
	memset(info, 0, sizeof(*info));
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		die(path);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e)
		die(path);
	size_t nphdr;
	if (elf_getphdrnum(e, &nphdr))
		die("program headers");
	for (size_t i = 0; i < nphdr && info->nsegments < MAX_SEGMENTS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			info->segments[info->nsegments++] = (struct trace_segment){
				ph.p_vaddr, ph.p_memsz, ph.p_offset,
				/* TRACE_SEGMENT_* have the values of PF_* */
				ph.p_flags & (PF_X | PF_W | PF_R) };
	}
	size_t cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		if (sh.sh_type == SHT_NOTE) {
			GElf_Nhdr nh;
			size_t off = 0, name_off, desc_off;
			while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= sizeof(info->build_id)) {
					memcpy(info->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
					info->build_id_len = nh.n_descsz;
				}
			}
		}
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_size < 16 || sym.st_shndx == SHN_UNDEF)
				continue;
			if (info->nfunctions == cap) {
				cap = cap ? 2 * cap : 1024;
				info->functions = realloc(info->functions, cap * sizeof(uint64_t));
				info->sizes = realloc(info->sizes, cap * sizeof(uint64_t));
				if (!info->functions || !info->sizes)
					die("out of memory");
			}
			info->functions[info->nfunctions] = sym.st_value;
			info->sizes[info->nfunctions++] = sym.st_size;
		}
	}
	elf_end(e);
	close(fd);
	if (info->nfunctions < 16) {
		errno = 0;
		fprintf(stderr, "tracegen: %s: too few function symbols (stripped?)\n", path);
		exit(1);
	}
}

/* An address inside a random function, 4-aligned past its first instructions. */
static uint64_t random_address(const struct elf_info *info)
{
	size_t f = rng() % info->nfunctions;
	uint64_t offset = 8 + (rng() % (info->sizes[f] - 8)) / 4 * 4;
	return LOAD_BIAS + info->functions[f] + offset;
}

static void write_header(struct trace_writer *w, const struct elf_info *info, const char *elf,
			 uint64_t nsamples, uint32_t pid, uint64_t start_mono, uint32_t nthreads)
{
	const uint64_t start_real = 1764400000000000000ull;
	char buf[64];
	snprintf(buf, sizeof(buf), "%s (synthetic, %llu samples)", elf, (unsigned long long)nsamples);
	trace_writer_meta(w, TRACE_META_COMMAND, buf);
	trace_writer_meta(w, TRACE_META_MODE, "cpu");
	snprintf(buf, sizeof(buf), "%llu", INTERVAL_NS);
	trace_writer_meta(w, TRACE_META_INTERVAL_NS, buf);
	trace_writer_meta(w, TRACE_META_SOURCE, "synthetic");
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)start_real);
	trace_writer_meta(w, TRACE_META_START_REALTIME_NS, buf);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)start_mono);
	trace_writer_meta(w, TRACE_META_START_MONOTONIC_NS, buf);
	snprintf(buf, sizeof(buf), "%u", pid);
	trace_writer_meta(w, TRACE_META_PID, buf);
	struct trace_module m = { pid, 1, start_mono, LOAD_BIAS, elf,
				  info->build_id_len ? info->build_id : NULL, info->build_id_len,
				  info->nsegments, info->segments };
	if (trace_writer_module(w, &m) < 0)
		die("write");
	for (uint32_t t = 0; t < nthreads; t++) {
		snprintf(buf, sizeof(buf), t ? "worker-%u" : "main", t);
		struct trace_thread th = { pid, pid + t, start_mono, TRACE_THREAD_START, buf, 0 };
		if (trace_writer_thread(w, &th) < 0)
			die("write");
	}
}

/* Stacks: each extends a random earlier stack's root part (shared prefixes,
 * as a call tree has) with frames of its own; the leaf is always fresh, an
 * exact pc anywhere in a function. */
static void write_stacks(struct trace_writer *w, const struct elf_info *info,
			 const struct shape *sh, uint32_t nstacks)
{
	uint64_t *pool = calloc(sh->call_sites ? sh->call_sites : 1, sizeof(*pool));
	uint64_t (*stacks)[MAX_DEPTH] = calloc(nstacks, sizeof(*stacks));
	uint32_t *depths = calloc(nstacks, sizeof(*depths));
	if (!pool || !stacks || !depths)
		die("out of memory");
	for (uint32_t i = 0; i < sh->call_sites; i++)
		pool[i] = random_address(info);
	for (uint32_t s = 0; s < nstacks; s++) {
		uint32_t depth = 8 + (uint32_t)(rng() % (MAX_DEPTH - 7));
		uint64_t *ips = stacks[s]; /* leaf first */
		uint32_t shared = 0;
		if (s) {
			uint32_t parent = (uint32_t)(rng() % s);
			shared = (uint32_t)(rng() % (depths[parent] < depth ? depths[parent] : depth));
			/* copy the parent's root part: its last `shared` frames */
			for (uint32_t i = 0; i < shared; i++)
				ips[depth - 1 - i] = stacks[parent][depths[parent] - 1 - i];
		}
		ips[0] = random_address(info);
		for (uint32_t i = 1; i < depth - shared; i++)
			ips[i] = sh->call_sites ? pool[rng() % sh->call_sites] : random_address(info);
		depths[s] = depth;
		struct trace_stack st = { s + 1, TRACE_STACK_LEAF_EXACT, depth, ips };
		if (trace_writer_stack(w, &st) < 0)
			die("write");
	}
	free(pool);
	free(stacks);
	free(depths);
}

static int parse_option(struct shape *sh, const char *name, const char *value)
{
	if (!value)
		return -1;
	if (!strcmp(name, "--call-sites"))
		sh->call_sites = (uint32_t)strtoul(value, NULL, 10);
	else if (!strcmp(name, "--skew"))
		sh->skew = (uint32_t)strtoul(value, NULL, 10);
	else if (!strcmp(name, "--max-run"))
		sh->max_run = (uint32_t)strtoul(value, NULL, 10);
	else if (!strcmp(name, "--overrun-every"))
		sh->overrun_every = (uint32_t)strtoul(value, NULL, 10);
	else
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct shape sh = { .call_sites = 0, .skew = 3, .max_run = 20, .overrun_every = 50 };
	int arg = 1;
	for (; arg < argc && !strncmp(argv[arg], "--", 2); arg += 2)
		if (parse_option(&sh, argv[arg], arg + 1 < argc ? argv[arg + 1] : NULL) < 0)
			break;
	if (argc - arg < 2 || (arg < argc && !strncmp(argv[arg], "--", 2)) || sh.max_run < 1) {
		fprintf(stderr, "usage: %s [--call-sites N] [--skew K] [--max-run N] [--overrun-every N]\n"
				"       OUT.trace.zst ELF [SAMPLES [STACKS [THREADS]]]\n", argv[0]);
		return 2;
	}
	const char *out = argv[arg], *elf = argv[arg + 1];
	argv += arg;
	argc -= arg;
	uint64_t nsamples = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000000;
	uint32_t nstacks = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 5000;
	uint32_t nthreads = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 4;
	if (!nstacks || !nthreads)
		return 2;
	struct elf_info info;
	read_elf(elf, &info);

	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die(out);
	struct trace_writer *w = trace_writer_open(fd, 1);
	if (!w)
		die("trace_writer_open");
	const uint32_t pid = 4242;
	const uint64_t start_mono = 1000000000000ull;
	write_header(w, &info, elf, nsamples, pid, start_mono, nthreads);
	write_stacks(w, &info, &sh, nstacks);

	/* Samples: threads take turns in runs; a run stays in one stack. */
	uint64_t now = start_mono, weight = 0;
	uint64_t written = 0;
	while (written < nsamples) {
		uint32_t thread = (uint32_t)(rng() % nthreads);
		double u = rng_unit(), scaled = nstacks;
		for (uint32_t k = 0; k < sh.skew; k++)
			scaled *= u; /* skewed: hot stacks first */
		uint32_t stack = (uint32_t)scaled;
		uint64_t run = 1 + rng() % sh.max_run;
		for (uint64_t i = 0; i < run && written < nsamples; i++, written++) {
			uint32_t sample_weight =
				sh.overrun_every && rng() % sh.overrun_every == 0 ? 2 : 1;
			now += INTERVAL_NS * sample_weight / nthreads;
			struct trace_sample sm = { now, pid, pid + thread, stack + 1, sample_weight, 0 };
			if (trace_writer_sample(w, &sm) < 0)
				die("write");
			weight += sample_weight;
		}
	}
	struct trace_end end = { now + INTERVAL_NS, 0, TRACE_END_EXITED, nsamples, weight, 0, 0, 0 };
	if (trace_writer_close(w, &end) < 0)
		die("write");
	close(fd);
	fprintf(stderr, "tracegen: %llu samples (weight %llu), %u stacks, %u threads, %zu functions of %s\n",
		(unsigned long long)nsamples, (unsigned long long)weight, nstacks, nthreads,
		info.nfunctions, elf);
	free(info.functions);
	free(info.sizes);
	return 0;
}
