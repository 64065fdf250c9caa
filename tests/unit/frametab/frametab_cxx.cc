// frametab_cxx.cc - unit_frametab's C++ frames: std::sort's template code with a lambda comparator.
#include <algorithm>
#include <vector>

#include "frametab_shared.h"

namespace {
struct Sorter {
	int compared = 0;
	__attribute__((noinline)) void run(std::vector<int> &v)
	{
		std::sort(v.begin(), v.end(), [this](int a, int b) {
			if (compared++ == 20)
				compare_here("C++ std::sort comparator");
			return a < b;
		});
	}
};
} // namespace

extern "C" int cxx_sort_and_compare(void)
{
	std::vector<int> v;
	for (int i = 0; i < 100; i++)
		v.push_back((i * 37) % 101);
	Sorter s;
	s.run(v);
	return v[0];
}

extern "C" long cxx_spin(long n)
{
	std::vector<unsigned long> v(64);
	unsigned long s = 0;
	for (long i = 0; i < n; i++) {
		v[i & 63] += (unsigned long)i;
		s += v[(i * 7) & 63] >> 2;
	}
	return (long)(s >> 1);
}
