// cpp_workload.cpp - symbolization workload for C++: a function template
// member in nested namespaces, instantiated twice, out of line (noinline),
// so its frames must read "geometry::shapes::Scaler<double>::apply(double)".
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace geometry {
namespace shapes {

template <typename T> class Scaler {
public:
	explicit Scaler(T factor) : factor_(factor) {}
	__attribute__((noinline)) T apply(T value) const
	{
		T result = value; // MARK:apply-body
		for (int i = 0; i < 8; i++)
			result = result * factor_ + static_cast<T>(i);
		return result;
	}

private:
	T factor_;
};

__attribute__((noinline)) long total(const std::vector<long> &values)
{
	long sum = 0;
	for (long v : values)
		sum += Scaler<long>(3).apply(v);
	return sum;
}

} // namespace shapes
} // namespace geometry

int main(int argc, char **argv)
{
	double x = argc > 1 ? std::strtod(argv[1], nullptr) : 1.5;
	geometry::shapes::Scaler<double> scale(x);
	std::vector<long> values(static_cast<size_t>(argc) * 10, 7);
	std::printf("%f %ld\n", scale.apply(x), geometry::shapes::total(values));
	return 0;
}
