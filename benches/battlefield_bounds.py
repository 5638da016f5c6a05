"""How much can any Battlefield: Space player score against random play?

Two bots that see more than a player may, each playing one battle at a time
against the uniform random bot, seats alternating:

- `best-response`: sees both hands and, as P2, the commitment P1 made; for
  each of its commitments it averages over every reply random could make
  (as P1) and over `--samples` draws of the battle's chance, and takes the
  best. This is the exact best answer to random play one battle ahead,
  with more information than a player has.
- `clairvoyant`: also knows random's commitment and every card the battle
  will draw (it judges its commitments on the very random numbers the
  battle will then use).

Each judges a battle by the fleets' card counts after it (`--utility
cards`) or by the variant's `evaluate` (`--utility evaluate`). Prints the
score (wins + draws/2) / games.

    target/python-venv/bin/python benches/battlefield_bounds.py --bot best-response --games 200
    target/python-venv/bin/python benches/battlefield_bounds.py --bot clairvoyant --games 200

Needs the venv that tests/run makes (the rulesmith module).
"""

import argparse
import json
import random
from pathlib import Path

import rulesmith

ROOT = Path(__file__).resolve().parents[1]


def pick(state, rng):
    """A chance outcome drawn by its probability."""
    outcomes = state.chance_outcomes()
    x, acc = rng.random(), 0.0
    for outcome, p in outcomes:
        acc += p
        if x <= acc:
            return outcome
    return outcomes[-1][0]


def battle_number(state):
    return json.loads(state.summary_json())["battle"]


def finish_battle(state, battle, rng):
    """Plays the chance of `battle` out, stopping where the next one starts."""
    while state.is_chance_node() and battle_number(state) == battle:
        state.apply_action(pick(state, rng))


def settle(state, rng):
    while state.is_chance_node():
        state.apply_action(pick(state, rng))


def cards(fleet):
    in_play = sum(len(c["cards"]) for c in fleet["columns"])
    return fleet["deck"] + fleet["survivors"] + len(fleet["hand"]) + len(fleet["committed"]) + in_play


def value(state, seat, utility):
    if state.is_terminal():
        return 1e6 * state.returns()[seat]
    if utility == "evaluate":
        return state.evaluate(seat)
    fleets = json.loads(state.summary_json())["fleets"]
    return cards(fleets[seat]) - cards(fleets[1 - seat])


def others_turn(state, seat):
    return not state.is_terminal() and not state.is_chance_node() and state.current_player() != seat


def best_response(state, seat, rng, a):
    battle = battle_number(state)
    best, choice = None, None
    for action in state.legal_actions():
        total = n = 0
        for _ in range(a.samples):
            t = state.clone()
            t.apply_action(action)
            replies = t.legal_actions() if others_turn(t, seat) else [None]
            for reply in replies:
                u = t.clone()
                if reply is not None:
                    u.apply_action(reply)
                finish_battle(u, battle, rng)
                total += value(u, seat, a.utility)
                n += 1
        if best is None or total / n > best:
            best, choice = total / n, action
    state.apply_action(choice)


def clairvoyant(state, seat, rng, a):
    battle = battle_number(state)
    seed = rng.random()
    reply = None
    best, choice = None, None
    for action in state.legal_actions():
        t = state.clone()
        t.apply_action(action)
        if others_turn(t, seat):
            # Random's reply does not depend on this seat's (secret) choice.
            reply = reply if reply is not None else rng.choice(t.legal_actions())
            t.apply_action(reply)
        finish_battle(t, battle, random.Random(seed))
        v = value(t, seat, a.utility)
        if best is None or v > best:
            best, choice = v, action
    state.apply_action(choice)
    if reply is not None:
        state.apply_action(reply)
    finish_battle(state, battle, random.Random(seed))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bot", choices=["best-response", "clairvoyant"], default="best-response")
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--samples", type=int, default=4, help="chance draws per commitment (best-response)")
    p.add_argument("--utility", choices=["cards", "evaluate"], default="cards")
    p.add_argument("--engine", choices=["compiled", "interpreted"], default="compiled")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    game = rulesmith.load_game(str(ROOT / "variants" / "battlefield-space"), engine=a.engine)
    decide = best_response if a.bot == "best-response" else clairvoyant
    rng = random.Random(a.seed)
    points = 0.0
    for g in range(a.games):
        seat = g % 2
        state = game.new_initial_state()
        settle(state, rng)
        while not state.is_terminal():
            if state.current_player() == seat:
                decide(state, seat, rng, a)
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            settle(state, rng)
        points += (state.returns()[seat] + 1) / 2
    low, high = wilson(points, a.games)
    print(f"{a.bot} ({a.utility}) against random: {points / a.games:.3f} [{low:.3f}, {high:.3f}] over {a.games} games")


def wilson(points, n, z=1.96):
    """The 95% Wilson interval of a rate."""
    p = points / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return centre - half, centre + half


if __name__ == "__main__":
    main()
