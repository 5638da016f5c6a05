"""A random-playout loop in Python over Rulesmith against the same loop over
pyspiel, on the same game (Rulesmith's port in tests/openspiel, OpenSpiel's
own implementation).

Each loop plays whole games from Python: at a chance node it draws an
outcome by its probability, at a decision it picks a legal action
uniformly (`random.Random`), until the end. Printed per game and engine:
games per second, and the mean time of one `legal_actions` and one
`apply_action` call inside those games (each call timed alone, so both
sides pay the same timer overhead). Then the batched API
(`rulesmith.VectorGame`): N games stepped per call, legal-action masks as
NumPy arrays, actions drawn by NumPy from the masks.

    target/python-venv/bin/python benches/python_loop.py
    target/python-venv/bin/python benches/python_loop.py --games 20000 --engines interpreted,compiled
    target/python-venv/bin/python benches/python_loop.py --games 3000 --engines interpreted,compiled --rounds 15
    target/python-venv/bin/python benches/python_loop.py --games 3000 --engines compiled --rounds 25 --clock cpu

With `--rounds N` every loop of a game is played N times, the loops
taking turns (pyspiel, then each engine, then again), and each figure is
the median over the rounds: on a machine others share, a burst of their
work then falls on one round of one loop, not on a whole loop. With
`--clock cpu` games per second are timed in this process's CPU time
rather than on the wall clock: time the machine gives to others is not
counted (its caches and shared cores still are).

Needs the venv that tests/run makes, with the module built in release
(`cd python && maturin develop --release`): a dev build runs the engine
unoptimized. `compiled` builds the port's compiled rules on first use.
"""

import argparse
import random
import statistics
import time
from pathlib import Path

import numpy as np
import pyspiel

import rulesmith

ROOT = Path(__file__).resolve().parents[1]
GAMES = {"tic-tac-toe": "tic_tac_toe", "kuhn-poker": "kuhn_poker"}


# What games per second are timed with (`--clock`). Single calls are
# always timed on the wall clock: reading the process's CPU time is a
# system call, longer than the calls it would time.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def playouts(game, games, seed):
    """Plays `games` random games; returns (seconds, legal_actions calls and
    their seconds, apply_action calls and their seconds)."""
    rng = random.Random(seed)
    legal_n = apply_n = 0
    legal_t = apply_t = 0.0
    start = clock()
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = rng.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0]
            else:
                t = time.perf_counter()
                legal = state.legal_actions()
                legal_t += time.perf_counter() - t
                legal_n += 1
                action = legal[rng.randrange(len(legal))]
            t = time.perf_counter()
            state.apply_action(action)
            apply_t += time.perf_counter() - t
            apply_n += 1
    return clock() - start, legal_n, legal_t, apply_n, apply_t


def batched(game, games, width, seed):
    """Plays at least `games` random games through a VectorGame of `width`
    games; returns (seconds, games finished)."""
    rng = np.random.default_rng(seed)
    vec = rulesmith.VectorGame(game, width, seed=seed)
    finished = 0
    start = clock()
    while finished < games:
        mask = vec.legal_mask()
        # One legal action per game, uniformly: the argmax of random
        # numbers over the legal ones.
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        _, done = vec.step(actions)
        finished += int(done.sum())
    return clock() - start, finished


def report(name, rounds):
    """Prints a loop's figures: `rounds` holds, per round, (games,
    seconds[, legal_actions calls, their seconds, apply_action calls,
    their seconds]); each figure is the median over the rounds."""
    line = f"  {name:<28} {statistics.median(r[0] / r[1] for r in rounds):>10,.0f} games/s"
    if len(rounds[0]) > 2 and rounds[0][2]:
        legal = statistics.median(r[3] / r[2] * 1e6 for r in rounds)
        apply = statistics.median(r[5] / r[4] * 1e6 for r in rounds)
        line += f"  legal_actions {legal:5.2f} us  apply_action {apply:5.2f} us"
    print(line)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--games", type=int, default=5000)
    p.add_argument("--width", type=int, default=256, help="games per VectorGame")
    p.add_argument("--engines", default="interpreted", help="comma-separated: interpreted, compiled")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rounds", type=int, default=1, help="rounds of every loop, taking turns; medians printed")
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="time on the wall clock or in this process's CPU time")
    args = p.parse_args()
    global clock
    clock = CLOCKS[args.clock]
    for port, theirs in GAMES.items():
        print(f"{port}:")
        # Each loop's name and what plays one round of it.
        loops = [("pyspiel", lambda g=pyspiel.load_game(theirs): (args.games, *playouts(g, args.games, args.seed)))]
        for engine in args.engines.split(","):
            ours = rulesmith.load_game(str(ROOT / "tests" / "openspiel" / port), engine=engine)
            loops.append((f"rulesmith {engine}", lambda g=ours: (args.games, *playouts(g, args.games, args.seed))))
            loops.append((f"rulesmith {engine} VectorGame",
                          lambda g=ours: tuple(reversed(batched(g, args.games, args.width, args.seed)))))
        rounds = {name: [] for name, _ in loops}
        for _ in range(args.rounds):
            for name, play in loops:
                rounds[name].append(play())
        for name, _ in loops:
            report(name, rounds[name])


if __name__ == "__main__":
    main()
