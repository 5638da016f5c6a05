"""OpenSpiel runs on Rulesmith variants: its own random-simulation test and
its MCTS / IS-MCTS bots, against Rulesmith's greedy bot."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts

import rulesmith.openspiel
from conftest import variant


@pytest.fixture(scope="module")
def basic():
    return pyspiel.load_game(rulesmith.openspiel.register(variant("sirius-basic")))


@pytest.fixture(scope="module")
def lifeboats():
    return pyspiel.load_game(rulesmith.openspiel.register(variant("sirius-lifeboats")))


def test_openspiel_random_simulation_test_passes(basic, lifeboats):
    for game in (basic, lifeboats):
        pyspiel.random_sim_test(game, num_sims=3, serialize=False, verbose=False)


def test_the_game_type_says_what_the_variant_is(basic, lifeboats):
    assert basic.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION
    assert lifeboats.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert basic.num_players() == 2
    assert basic.num_distinct_actions() == basic.native.num_distinct_actions()


def _play(game, choose, max_decisions, seed):
    """Plays seat 0 with `choose`, seat 1 with Rulesmith's greedy bot;
    returns the decisions seat 0 took."""
    rng = np.random.RandomState(seed)
    state = game.new_initial_state()
    mine = 0
    decisions = 0
    while not state.is_terminal() and decisions < max_decisions:
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
            continue
        if state.current_player() == 0:
            a = choose(state)
            mine += 1
        else:
            a = state.native.bot_action("greedy", seed=decisions)
        assert a in state.legal_actions(), (a, state.legal_actions())
        state.apply_action(a)
        decisions += 1
    return mine


def test_openspiel_mcts_plays_sirius_basic_against_the_greedy_bot(basic):
    rng = np.random.RandomState(1)
    bot = mcts.MCTSBot(basic, uct_c=2.0, max_simulations=8,
                       evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
                       random_state=rng)
    assert _play(basic, bot.step, max_decisions=12, seed=1) >= 3


def test_openspiel_ismcts_plays_sirius_lifeboats_without_peeking(lifeboats):
    rng = np.random.RandomState(2)
    bot = ismcts.ISMCTSBot(lifeboats, evaluator=mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng),
                           uct_c=2.0, max_simulations=8, random_state=rng)
    bot._resampler_cb = rulesmith.openspiel.resampler(seed=3)
    assert _play(lifeboats, bot.step, max_decisions=12, seed=2) >= 3
