#!/usr/bin/env python3
"""Measures `rulesmith fuzz` on the broken examples: per example and seed,
the time to find the first break, the time to shrink it, and the shrunk
record's length against the shortest game known for that break.

The shortest game known is the shorter of the example's hand-made record
(handmade*.record, built by hand) and its shortest.record (the shortest
game any run found, kept once it replayed with --check). Both are read
from variants/examples/<example>/.

    cargo build --release
    python3 benches/fuzz_measure.py [--seeds 5] [--jobs 1] [--binary target/release/rulesmith]

Prints a Markdown table (for docs/fuzzing.md) and the mean ratio; with
--save-shortest, a run shorter than the shortest known replaces it.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (example, players, suffix of its record files, games to allow)
CASES = [
    ("broken-repair", 2, "", 2000),
    ("broken-quiet-win", 2, "", 2000),
    ("broken-compact", 2, "-2p", 2000),
    ("broken-compact", 4, "-4p", 2000),
    ("broken-lock-capacity", 4, "", 8000),
]


def entries(path):
    """Decision and chance lines of a record (comments and blanks aside)."""
    with open(path) as f:
        lines = [l.split("#", 1)[0].strip() for l in f]
    return sum(1 for l in lines if l)


def known(example, suffix):
    """(hand-made length, shortest known length) of an example's break."""
    folder = os.path.join(ROOT, "variants", "examples", example)
    hand = entries(os.path.join(folder, f"handmade{suffix}.record"))
    shortest_path = os.path.join(folder, f"shortest{suffix}.record")
    shortest = entries(shortest_path) if os.path.exists(shortest_path) else hand
    return hand, min(hand, shortest)


def fuzz(binary, example, players, seed, games, jobs, out):
    cmd = [
        binary, "fuzz", f"variants/examples/{example}", "--players", str(players),
        "--seed", str(seed), "--games", str(games), "--jobs", str(jobs), "--json", "--out", out,
    ]
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr}")
    return json.loads(run.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "rulesmith"))
    ap.add_argument("--save-shortest", action="store_true")
    args = ap.parse_args()
    print("| example | players | seed | found after (s) | decisions | shrink (s) | lines: found -> shrunk | hand-made | shortest known | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for example, players, suffix, games in CASES:
            for seed in range(1, args.seeds + 1):
                out = os.path.join(tmp, f"{example}{suffix}-{seed}.record")
                r = fuzz(args.binary, example, players, seed, games, args.jobs, out)
                f = r["finding"]
                hand, shortest = known(example, suffix)
                if f is None:
                    print(f"| {example} | {players} | {seed} | not found in {r['games']} games | | | | {hand} | {shortest} | |")
                    continue
                lines = f["record_lines"]
                if args.save_shortest and lines < shortest:
                    dest = os.path.join(ROOT, "variants", "examples", example, f"shortest{suffix}.record")
                    with open(out) as src, open(dest, "w") as dst:
                        dst.write(f"# The shortest game known that shows this break: found by\n"
                                  f"# `rulesmith fuzz --players {players} --seed {seed}` (benches/fuzz_measure.py).\n")
                        dst.write(src.read())
                    shortest = lines
                ratio = lines / shortest
                ratios.append(ratio)
                print(f"| {example} | {players} | {seed} | {f['find_seconds']:.2f} | {r['decisions']} | "
                      f"{f['shrink_seconds']:.2f} | {f['found_lines']} -> {lines} | {hand} | {shortest} | {ratio:.2f} |",
                      flush=True)
    if ratios:
        print(f"\nmean ratio {sum(ratios) / len(ratios):.2f}, worst {max(ratios):.2f}, over {len(ratios)} runs")


if __name__ == "__main__":
    main()
