"""The OpenSpiel-shaped API of rulesmith: numbers, clones, saves, errors."""

import copy
import json
import random

import pytest

import rulesmith
from conftest import random_game, settle, variant


@pytest.fixture(scope="module")
def basic():
    return rulesmith.load_game(variant("sirius-basic"), players=2)


def test_a_random_game_ends_with_consistent_returns(basic):
    state, played = random_game(basic, seed=3)
    assert state.is_terminal()
    assert state.current_player() == rulesmith.TERMINAL
    r = state.returns()
    assert len(r) == 2 and sorted(r) in ([-1.0, 1.0], [0.0, 0.0])
    assert state.history() == played


def test_actions_are_stable_numbers_that_round_trip_through_text(basic):
    state = basic.new_initial_state()
    settle(state)
    legal = state.legal_actions()
    assert legal == sorted(legal) and len(set(legal)) == len(legal)
    assert all(0 <= a < basic.num_distinct_actions() for a in legal)
    texts = [state.action_to_string(a) for a in legal]
    assert len(set(texts)) == len(texts), "action strings are unique"
    for a, t in zip(legal, texts):
        assert state.string_to_action(t) == a
        assert state.action_to_string(state.current_player(), a) == t
    # The numbering depends only on the variant: another load agrees.
    again = rulesmith.load_game(variant("sirius-basic"), players=2).new_initial_state()
    settle(again)
    assert again.legal_actions() == legal
    # Not the player to move: no actions.
    assert state.legal_actions(1 - state.current_player()) == []


def test_a_bad_action_raises_a_located_error_and_changes_nothing(basic):
    state = basic.new_initial_state()
    settle(state)
    before = state.serialize()
    legal = set(state.legal_actions())
    illegal = next(a for a in range(basic.num_distinct_actions()) if a not in legal)
    with pytest.raises(rulesmith.RulesmithError, match="is not legal now"):
        state.apply_action(illegal)
    with pytest.raises(rulesmith.RulesmithError, match="no action"):
        state.apply_action(basic.num_distinct_actions() + 5)
    assert state.serialize() == before


def test_clones_and_saved_states_play_on_identically(basic):
    state, _ = random_game(basic, seed=5, max_steps=40)
    twin = state.clone()
    saved = basic.deserialize_state(state.serialize())
    deep = copy.deepcopy(state)
    for other in (twin, saved, deep):
        assert other.serialize() == state.serialize()
        assert other.legal_actions() == state.legal_actions()
    a = (state.chance_outcomes()[0][0] if state.is_chance_node() else state.legal_actions()[-1])
    state.apply_action(a)
    assert twin.serialize() != state.serialize(), "a clone is independent"
    twin.apply_action(a)
    assert twin.serialize() == state.serialize()


def test_another_variants_state_is_refused(basic):
    lifeboats = rulesmith.load_game(variant("sirius-lifeboats"), players=2)
    state, _ = random_game(basic, seed=5, max_steps=10)
    with pytest.raises(Exception, match="saved by a game of variant 'sirius-basic'"):
        lifeboats.deserialize_state(state.serialize())


def test_simulate_refuses_zero_jobs_as_the_command_does():
    with pytest.raises(Exception, match="jobs must be at least 1"):
        rulesmith.simulate(variant("sirius-basic"), 2, jobs=0)


def test_the_record_replays_on_the_command_line(basic, rulesmith_bin, tmp_path):
    import subprocess

    state, _ = random_game(basic, seed=11)
    path = tmp_path / "game.record"
    path.write_text(state.record())
    out = subprocess.run([rulesmith_bin, "replay", variant("sirius-basic"), str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == rulesmith.summary(state)


def test_loading_errors_name_the_problem(tmp_path):
    with pytest.raises(rulesmith.RulesmithError, match="max_power"):
        rulesmith.load_game(variant("sirius-basic"), params={"max_power": 99})
    with pytest.raises(rulesmith.RulesmithError, match="players"):
        rulesmith.load_game(variant("sirius-basic"), players=5)
    bad = tmp_path / "variant.toml"
    bad.write_text("[variant]\nname = 3\n")
    with pytest.raises(rulesmith.RulesmithError, match="variant.toml"):
        rulesmith.load_game(str(tmp_path))


def test_hidden_cards_are_hidden_from_the_other_seat():
    game = rulesmith.load_game(variant("sirius-lifeboats"), players=2)
    state = game.new_initial_state()
    # Deal until some card is dealt in secret.
    settle(state)
    views = [state.information_state_string(p) for p in range(2)]
    assert views[0] != views[1] or "?" not in views[0]
    assert "?" in views[0] + views[1], "each seat's secret card is hidden from the other"
    other = state.resample(0, 7)
    assert other.information_state_string(0) == views[0], "a resampled world looks the same to P1"


def test_bots_pick_legal_actions_with_the_gil_released(basic):
    import threading

    state, _ = random_game(basic, seed=2, max_steps=10)
    settle(state)
    for spec in ("random", "greedy", "mcts:20"):
        assert state.bot_action(spec, seed=1) in state.legal_actions()
    # Two threads simulate at once; each result equals the one-thread run.
    results = {}

    def run(k):
        results[k] = rulesmith.simulate(variant("sirius-basic"), 20, seed=k)

    threads = [threading.Thread(target=run, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[1] == rulesmith.simulate(variant("sirius-basic"), 20, seed=1)
    assert results[1]["summary"]["games"] == 20


def first_secret_choice_of_p1(name, seed):
    """A random game of `name` played up to P1's first secret decision with
    more than one choice."""
    game = rulesmith.load_game(variant(name), players=2)
    state, rng = game.new_initial_state(), random.Random(seed)
    for _ in range(2000):
        settle(state, seed=rng.randrange(1 << 30))
        if state.is_terminal():
            break
        legal = state.legal_actions()
        if state.current_player() == 0 and len(legal) > 1 and state.decision_is_secret():
            break
        state.apply_action(rng.choice(legal))
    else:
        pytest.fail(f"{name}: no secret decision of P1 with a choice in 2000 steps")
    assert not state.is_terminal()
    return state


def two_choices(state):
    """The states after each of the first two legal actions."""
    worlds = []
    for a in state.legal_actions()[:2]:
        w = state.clone()
        w.apply_action(a)
        worlds.append(w)
    return worlds


def test_secret_decisions_are_hidden_from_the_other_seat():
    # Battlefield: Space commits reinforcements in a secret round: once
    # P1 has committed, P2's view must not depend on what P1 chose.
    state = first_secret_choice_of_p1("battlefield-space", seed=4)
    a, b = two_choices(state)
    for w in (a, b):
        assert w.current_player() == 1, "P2 commits next in the same round"
    assert a.information_state_string(1) == b.information_state_string(1)
    assert a.observation_string(1) == b.observation_string(1)
    assert a.legal_actions() == b.legal_actions()
    assert a.information_state_string(1).endswith("\n?")
    # P1 knows what it chose.
    assert a.information_state_string(0) != b.information_state_string(0)


def test_a_sealed_hold_is_hidden_from_the_other_seat():
    # Battleship Galaxies seals a transport's hold in secret, one decision
    # per place: whichever ship P1 puts in, P2's view must be the same.
    state = first_secret_choice_of_p1("battleship-galaxies", seed=7)
    a, b = two_choices(state)
    assert a.information_state_string(1) == b.information_state_string(1)
    assert a.observation_string(1) == b.observation_string(1)
    # P1 knows what it put in its hold.
    assert a.information_state_string(0) != b.information_state_string(0)


HALFWAY_TOML = """
[variant]
name = "halfway"
title = "Test: rules that fail halfway through"
players = { min = 2, max = 2, default = 2 }
scripts = ["rules.rhai"]

[actions.step]
text = "step"
apply = "do_step"

[actions.boom]
text = "boom"
apply = "do_boom"

[setup]
run = "setup"

[steps.play]
legal = "play_legal"

[turn]
steps = ["play"]
"""

HALFWAY_RHAI = """
fn setup() { this.n = 0; roll(1, 6, "rolled"); }
fn rolled(dice) {
    this.n += dice[0];
    if dice[0] == 6 { throw "a six breaks the rules"; }
    start_turns(0);
}
fn play_legal() { add("step"); add("boom"); }
fn do_step() {
    this.n += 1;
    if this.n >= 8 { win(active()); } else { roll(1, 6, "rolled"); }
}
fn do_boom() { this.n += 100; throw "boom"; }
"""


def test_rules_that_fail_halfway_leave_the_state_as_it_was(tmp_path):
    # A decision and a chance outcome whose rules change the data, then
    # fail: the state is put back as it was (made again from its history)
    # and plays on.
    (tmp_path / "variant.toml").write_text(HALFWAY_TOML)
    (tmp_path / "rules.rhai").write_text(HALFWAY_RHAI)
    game = rulesmith.load_game(str(tmp_path))
    state = game.new_initial_state()
    before = state.serialize()
    six = state.string_to_action("6")
    with pytest.raises(rulesmith.RulesmithError, match="a six breaks the rules"):
        state.apply_action(six)
    assert state.serialize() == before
    state.apply_action(state.string_to_action("1"))
    step, boom = state.legal_actions()
    before = state.serialize()
    with pytest.raises(rulesmith.RulesmithError, match="boom"):
        state.apply_action(boom)
    assert state.serialize() == before
    assert state.legal_actions() == [step, boom]
    state.apply_action(step)
    assert state.is_chance_node() and state.history() == [0, step]
