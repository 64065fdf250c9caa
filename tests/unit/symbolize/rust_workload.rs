// rust_workload.rs - Rust names for tests/unit/test_symbolize.c (built by
// Debian's rustc with debug info and optimization): a generic function in
// two instances, a closure, and a helper inlined into its caller.
use std::env;

/* Values the optimizer cannot know (black_box is not stable in rustc 1.63). */
fn opaque(x: u64) -> u64 {
    x + env::args().count() as u64 - 1
}

#[inline(never)]
fn sum_generic<T: Copy + Into<u64>>(items: &[T]) -> u64 {
    let mut total = 0u64;
    for &x in items {
        total = total.wrapping_mul(31).wrapping_add(x.into()); // MARK:generic-body
    }
    total
}

#[inline(always)]
fn mix(x: u64) -> u64 {
    (x ^ (x >> 7)).wrapping_mul(0x9e3779b97f4a7c15) // MARK:mix-body
}

#[inline(never)]
fn churn(seed: u64, n: u64) -> u64 {
    let mut x = seed;
    for _ in 0..n {
        x = mix(x); // MARK:mix-call
    }
    x
}

/* Called through a trait object, the closure keeps a body of its own. */
#[inline(never)]
fn call(f: &dyn Fn(u64) -> u64, v: u64) -> u64 {
    f(v)
}

fn main() {
    let small: Vec<u32> = (0..1000).collect();
    let large: Vec<u64> = (0..1000).collect();
    let offset = opaque(3);
    let apply = |v: u64| -> u64 { churn(v + offset, 100) }; // MARK:closure
    let mut total = 0u64;
    for round in 0..opaque(10) {
        total ^= sum_generic(&small) ^ sum_generic(&large);
        total ^= call(&apply, round);
    }
    println!("{}", total);
}
