// report_cpp - C++ names in reports: a member function of a class template
// in a namespace does the work. tests/e2e/report_symbols.sh compiles this
// file itself (stripped, with a separate debug file, rebuilt...) and checks
// the names analyze prints. argv[1]: CPU seconds (default 0.6).
#include <cstdio>
#include <cstdlib>
#include <ctime>

static double thread_cpu_seconds()
{
	timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

namespace geometry {
template <typename T> struct Accumulator {
	volatile T total{};
	__attribute__((noinline)) void add_many(long n)
	{
		for (long i = 0; i < n; i++)
			total = total + static_cast<T>(i ^ (i >> 3)); // @add-many-line
	}
};
} // namespace geometry

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 0.6;
	geometry::Accumulator<double> acc;
	double end = thread_cpu_seconds() + seconds;
	while (thread_cpu_seconds() < end)
		acc.add_many(100000 + VARIANT);
	std::fprintf(stderr, "total=%g\n", static_cast<double>(acc.total));
	return 0;
}
