/*
 * fuzz_symbolize_elf.c - libFuzzer target for the symbolizer's ELF side
 * (analyze/symbolize/: symbolize_elf.c, symbolize_sections.c with its
 * compressed sections, symbolize_plt.c, symbolize_fde.c, and the DWARF the
 * file holds), ctest fuzz_symbolize_elf, built with -DIPSCOPE_FUZZ=ON and
 * clang. A trace names the modules analyze opens; anyone can put any file
 * at such a path.
 *
 * Input: the header of fuzz_symbolize.h, then a whole ELF file, written as
 * the module and symbolized (fuzz_sym_run). The seeds are a small workload
 * built several ways (DWARF 4 and 5, gcc and clang, compressed sections,
 * stripped, a debug file alone), made at build time by
 * make_symbolize_seeds.sh and make_symbolize_corpus.c.
 */
#include "fuzz_symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); /* libFuzzer calls it */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_sym_input in;
	if (!fuzz_sym_header(data, size, &in))
		return 0;
	fuzz_sym_write(FUZZ_SYM_MODULE, in.rest, in.rest_len);
	fuzz_sym_run(&in);
	return 0;
}
