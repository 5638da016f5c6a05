"""`rulesmith.VectorGame`: many games stepped per call, its arrays the same
as the one-game API gives, a bad action refused with nothing changed, the
same seed the same games."""

import numpy as np
import pytest

import rulesmith
from conftest import ROOT

PORTS = ROOT / "tests" / "openspiel"


def game(name):
    return rulesmith.load_game(str(PORTS / name))


def random_actions(vec, rng):
    mask = vec.legal_mask()
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


@pytest.mark.parametrize("name", ["tic-tac-toe", "kuhn-poker", "oshi-zumo"])
def test_the_arrays_are_the_states(name):
    g = game(name)
    vec = rulesmith.VectorGame(g, 16, seed=5)
    rng = np.random.default_rng(5)
    for _ in range(12):
        mask, players = vec.legal_mask(), vec.current_players()
        tensors = vec.observation_tensors()
        assert mask.shape == (16, g.num_distinct_actions()) and mask.dtype == np.bool_
        assert tensors.shape == (16, *g.observation_tensor_shape()) and tensors.dtype == np.float32
        for i in range(16):
            state = vec.state(i)
            assert not state.is_chance_node(), "chance is played inside"
            assert players[i] == state.current_player()
            assert list(np.flatnonzero(mask[i])) == state.legal_actions()
            assert tensors[i].ravel() == pytest.approx(state.observation_tensor(int(players[i])))
        vec.step(random_actions(vec, rng))


def test_games_end_with_their_returns_and_start_again():
    vec = rulesmith.VectorGame(game("kuhn-poker"), 32, seed=2)
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(40):
        before = [vec.state(i) for i in range(32)]
        actions = random_actions(vec, rng)
        rewards, done = vec.step(actions)
        for i in np.flatnonzero(done):
            # The game played on alone to its end gives the same returns.
            alone = before[i]
            alone.apply_action(int(actions[i]))
            assert alone.is_terminal()
            assert list(rewards[i]) == alone.returns()
            assert vec.state(i).move_number() == 0, "started again"
        assert not rewards[~done].any()
        ended += int(done.sum())
    assert ended > 32


def test_without_auto_reset_a_game_over_waits():
    vec = rulesmith.VectorGame(game("tic-tac-toe"), 8, seed=3, auto_reset=False)
    rng = np.random.default_rng(3)
    for _ in range(9):
        vec.step(random_actions(vec, rng))
    assert (vec.current_players() == rulesmith.TERMINAL).all()
    assert not vec.legal_mask().any()
    returns = vec.returns()
    assert all(sorted(r) in ([-1.0, 1.0], [0.0, 0.0]) for r in returns.tolist())
    rewards, done = vec.step(np.zeros(8, np.int64))
    assert not done.any() and not rewards.any(), "a game over ignores its action"
    vec.reset()
    assert (vec.current_players() == 0).all()


def test_a_bad_action_changes_nothing():
    vec = rulesmith.VectorGame(game("tic-tac-toe"), 4, seed=1)
    vec.step(np.array([4, 4, 4, 4]))
    before = [vec.state(i).serialize() for i in range(4)]
    with pytest.raises(rulesmith.RulesmithError, match=r"step: game 2: action 4 is not legal there"):
        vec.step(np.array([0, 1, 4, 2]))
    with pytest.raises(ValueError, match=r"actions of shape \(3,\)"):
        vec.step(np.array([0, 1, 2]))
    assert [vec.state(i).serialize() for i in range(4)] == before


def test_the_same_seed_gives_the_same_games():
    def run():
        vec = rulesmith.VectorGame(game("kuhn-poker"), 8, seed=11)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(20):
            rewards, done = vec.step(random_actions(vec, rng))
            out.append((rewards.tolist(), done.tolist(), vec.legal_mask().tolist()))
        return out

    assert run() == run()
