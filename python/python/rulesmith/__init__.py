"""Rulesmith rule sets from Python.

``load_game`` loads a variant folder as an OpenSpiel-shaped game::

    import rulesmith
    game = rulesmith.load_game("variants/sirius-basic", players=2)
    state = game.new_initial_state()
    while not state.is_terminal():
        ...

Actions and chance outcomes are integers (see docs/python.md, "Action
numbers"). ``VectorGame`` steps many games per call (NumPy masks and
tensors). ``rulesmith.openspiel`` registers a variant with OpenSpiel,
``rulesmith.pettingzoo`` makes PettingZoo AEC and parallel environments, and
``python -m rulesmith.ray`` runs a simulation as Ray tasks.
"""

import importlib.util
import json
import os
import sys

from . import _native
from ._native import Game, State, RulesmithError
from .vector import VectorGame

__all__ = [
    "Game",
    "State",
    "RulesmithError",
    "VectorGame",
    "load_game",
    "simulate",
    "simulate_shard",
    "merge",
    "summary",
]

# OpenSpiel's player numbers.
CHANCE = -1
TERMINAL = -4


def _sets(params):
    """Parameters as the command line's KEY=VALUE overrides."""
    out = []
    for key, value in (params or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        out.append(f"{key}={value}")
    return out


def _compiled_module(variant, sets):
    """The extension module with `variant`'s compiled rules, built (cached)
    and imported."""
    name, path = _native.build_compiled(os.fspath(variant), sets, sys.executable)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def load_game(variant, players=None, params=None, engine="interpreted", value_bound=None, max_decisions=None):
    """Loads the variant folder `variant` for `players` seats (default: the
    variant's), with parameter overrides `params` ({"max_power": 8}).

    engine: "interpreted" (the Rhai interpreter, the reference; starts at
    once) or "compiled" (the rules compiled to Rust and loaded into this
    process: many times faster; the first use builds them, which needs a
    Rust toolchain and the Rulesmith sources this package was built from).
    value_bound: the numbering's bound on `int` action values without a
    declared range, and on die faces the scripts compute (default: the
    variant's `[variant] value_bound`, else 32). max_decisions: a longer
    game is an error (default: the variant's `[end] max_decisions`, else
    20000); `max_game_length()` gives it.
    """
    sets = _sets(params)
    module = _native
    if engine == "compiled":
        module = _compiled_module(variant, sets)
    return module.Game(os.fspath(variant), players, sets, engine, value_bound, max_decisions)


def summary(state, player=None):
    """The state's summary (a dict), as seen by `player` (default: all)."""
    return json.loads(state.summary_json(player))


def simulate_shard(variant, games, shard=(1, 1), players=None, bots=("random",), rotate=False, seed=1,
                   params=None, engine="interpreted", max_decisions=20000, jobs=None):
    """Plays shard `shard` = (i, n) of a run of `games` games between
    `bots` and returns its tally (JSON text; the same as `rulesmith
    simulate --shard i/n` prints). The GIL is released while it plays."""
    i, n = shard
    module = _native if engine != "compiled" else _compiled_module(variant, _sets(params))
    return module.simulate_shard(os.fspath(variant), games, i, n, players, list(bots), rotate, seed,
                                 _sets(params), engine, max_decisions, jobs)


def merge(parts):
    """The shards' tallies added up: the dict `rulesmith simulate --json`
    prints for the whole run."""
    return json.loads(_native.merge(list(parts)))


def simulate(variant, games, **options):
    """A whole simulation in this process: the dict `rulesmith simulate
    --json` prints (win rates, draws, lengths, counters, labels)."""
    return merge([simulate_shard(variant, games, **options)])
