"""cpu_workload.py - the interpreter workload bench/cpu-overhead profiles: a
CPU-bound pure-Python program (recursion, dicts, strings, sorting) so the
profiler samples a real interpreter's C stacks. It times its own work and
prints "elapsed_ns=N" to stderr, like bench_cpu_workload.
usage: python3 cpu_workload.py [SCALE]"""
import sys
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def words(rounds):
    counts = {}
    for r in range(rounds):
        for i in range(20000):
            key = "w%d" % ((i * 7919 + r) % 5003)
            counts[key] = counts.get(key, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]


def main():
    scale = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    start = time.monotonic_ns()
    result = 0
    for _ in range(scale):
        result += fib(24)
        result += len(words(10))
    sys.stderr.write("elapsed_ns=%d result=%d\n" % (time.monotonic_ns() - start, result))


main()
