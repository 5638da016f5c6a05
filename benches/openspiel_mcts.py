"""Rulesmith's MCTS against OpenSpiel's C++ MCTSBot, seat for seat.

The Rulesmith side plays its own port of the game (tests/bots/GAME, which
has no `evaluate`: the search works from rollouts alone) through the
Python bridge; OpenSpiel's `MCTSBot` (random rollouts, uct_c 2, the same
number of simulations) plays OpenSpiel's own implementation of the game.
Every move is mirrored onto both states, so each bot searches its own
engine. Prints the score (wins + draws/2) of Rulesmith's bot and both
bots' simulations per second.

    target/python-venv/bin/python benches/openspiel_mcts.py --game connect-four --games 100
    target/python-venv/bin/python benches/openspiel_mcts.py --game tic-tac-toe --games 50

Needs the venv that tests/run makes (pyspiel, the rulesmith module).
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pyspiel

import rulesmith

ROOT = Path(__file__).resolve().parents[1]

# Rulesmith port, OpenSpiel name, Rulesmith text of OpenSpiel's action a.
GAMES = {
    "connect-four": ("connect_four", lambda a: f"drop {a + 1}"),
    "tic-tac-toe": ("tic_tac_toe", lambda a: f"mark {a + 1}"),
}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", choices=sorted(GAMES), default="connect-four")
    p.add_argument("--games", type=int, default=100)
    p.add_argument("--sims", type=int, default=1000)
    p.add_argument("--bot", default=None, help="Rulesmith bot spec (default mcts:SIMS)")
    p.add_argument("--engine", default="compiled", choices=["compiled", "interpreted"])
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    spec = a.bot or f"mcts:{a.sims}"
    os_name, text_of = GAMES[a.game]
    os_game = pyspiel.load_game(os_name)
    rs_game = rulesmith.load_game(str(ROOT / "tests" / "bots" / a.game), engine=a.engine)
    won = drawn = lost = 0
    rs_time = os_time = 0.0
    rs_sims = os_sims = 0
    for g in range(a.games):
        rs_seat = g % 2
        rng = np.random.RandomState(a.seed * 100003 + g)
        evaluator = pyspiel.RandomRolloutEvaluator(1, a.seed * 7919 + g)
        os_bot = pyspiel.MCTSBot(os_game, evaluator, 2.0, a.sims, 10**9, False, a.seed * 31 + g, False)
        os_state = os_game.new_initial_state()
        rs_state = rs_game.new_initial_state()
        move = 0
        while not os_state.is_terminal():
            if os_state.current_player() == rs_seat:
                t = time.perf_counter()
                action = rs_state.bot_action(spec, seed=a.seed * 1000003 + g * 1000 + move)
                rs_time += time.perf_counter() - t
                rs_sims += a.sims
                text = rs_state.action_to_string(action)
                os_action = next(x for x in os_state.legal_actions() if text_of(x) == text)
            else:
                t = time.perf_counter()
                os_action = os_bot.step(os_state)
                os_time += time.perf_counter() - t
                os_sims += a.sims
                action = rs_state.string_to_action(text_of(os_action))
            os_state.apply_action(os_action)
            rs_state.apply_action(action)
            move += 1
        assert rs_state.is_terminal(), "the two implementations disagree on the end"
        r = os_state.returns()[rs_seat]
        assert r == rs_state.returns()[rs_seat], "the two implementations disagree on the result"
        won += r > 0
        drawn += r == 0
        lost += r < 0
        del rng
    out = {
        "game": a.game,
        "games": a.games,
        "rulesmith_bot": spec,
        "openspiel_bot": f"MCTSBot({a.sims} simulations, random rollouts, uct_c 2)",
        "won": won,
        "drawn": drawn,
        "lost": lost,
        "score": (won + drawn / 2) / a.games,
        "rulesmith_sims_per_s": rs_sims / rs_time if rs_time else None,
        "openspiel_sims_per_s": os_sims / os_time if os_time else None,
    }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
