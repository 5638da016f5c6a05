"""Shared paths and helpers of the Python tests (run by tests/run)."""

import os
import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "variants"


def variant(name):
    return str(VARIANTS / name)


def random_game(game, seed, max_steps=5000):
    """Plays `game` to its end with random choices; returns the state and
    the actions applied."""
    rng = random.Random(seed)
    state = game.new_initial_state()
    played = []
    for _ in range(max_steps):
        if state.is_terminal():
            break
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            a = rng.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0]
        else:
            a = rng.choice(state.legal_actions())
        state.apply_action(a)
        played.append(a)
    return state, played


def settle(state, seed=0, limit=1000):
    """Resolves chance events (random outcomes from `seed`) until a seat is
    to decide or the game ends. Always taking the first outcome would loop:
    Sirius re-rolls a tied roll for the first player."""
    rng = random.Random(seed)
    for _ in range(limit):
        if not state.is_chance_node():
            return state
        outcomes = state.chance_outcomes()
        state.apply_action(rng.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0])
    raise AssertionError(f"still a chance event after {limit} outcomes")


@pytest.fixture(scope="session")
def rulesmith_bin():
    """The `rulesmith` command tests/run built (RULESMITH_BIN)."""
    path = os.environ.get("RULESMITH_BIN") or str(ROOT / "target" / "debug" / "rulesmith")
    if not Path(path).exists():
        pytest.fail(f"no rulesmith binary at {path}: run the tests through tests/run")
    return path
