// A small program whose profiles the profdata tests read: loops and
// branches that run a known number of times, calls through function
// pointers (indirect-call value profiles) and copies of varying sizes
// (memory-operation value profiles).
fn collatz(mut n: u64) -> u32 {
    let mut steps = 0;
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

fn double(n: u64) -> u32 {
    (2 * n) as u32
}

#[inline(never)]
fn apply(f: fn(u64) -> u32, n: u64) -> u32 {
    f(std::hint::black_box(n))
}

#[inline(never)]
fn copy(from: &[u8], to: &mut [u8], n: usize) {
    to[..n].copy_from_slice(&from[..n]);
}

fn main() {
    let fs: [fn(u64) -> u32; 2] = [collatz, double];
    let mut total = 0u32;
    for n in 1..200u64 {
        total = total.wrapping_add(apply(fs[(n % 3 == 0) as usize], n));
    }
    // A call through a pointer to a function of std, which is not
    // instrumented: its target has no name in the profile.
    let pid: fn() -> u32 = std::hint::black_box(std::process::id);
    total = total.wrapping_add(pid() & 1);
    let (from, mut to) = ([7u8; 64], [0u8; 64]);
    for n in 0..64 {
        copy(&from, &mut to, std::hint::black_box(n % 9));
    }
    std::process::exit(if total > 0 && to[0] == 7 { 0 } else { 1 });
}
