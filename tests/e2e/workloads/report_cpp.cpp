// report_cpp - C++ names in reports: a member function of a class template
// in a namespace does most of the work, two overloads of one name the rest
// (they must read apart: geometry::spin(double), geometry::spin(long)). tests/e2e/report_symbols.sh compiles this
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

__attribute__((noinline)) double spin(double x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) long spin(long x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 3 + (x >> 7);
	return x;
}
} // namespace geometry

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 0.6;
	geometry::Accumulator<double> acc;
	double end = thread_cpu_seconds() + seconds;
	double d = 1.0;
	long l = 1;
	while (thread_cpu_seconds() < end) {
		acc.add_many(100000 + VARIANT);
		d = geometry::spin(d);
		l = geometry::spin(l);
	}
	std::fprintf(stderr, "total=%g %g %ld\n", static_cast<double>(acc.total), d, l);
	return 0;
}
