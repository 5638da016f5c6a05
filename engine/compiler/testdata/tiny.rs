// A small program whose profile the profdata tests read: loops and
// branches that run a known number of times.
fn collatz(mut n: u64) -> u32 {
    let mut steps = 0;
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    steps
}

fn main() {
    let longest = (1..200u64).map(collatz).max().unwrap_or(0);
    std::process::exit(if longest > 0 { 0 } else { 1 });
}
