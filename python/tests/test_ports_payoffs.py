"""OpenSpiel games written as Rulesmith variants (tests/openspiel/*), the
way a designer would write them from the rules, cross-checked against
pyspiel's own implementations on random trajectories: the same player to
move, the same legal moves (compared by text, since the two number their
actions differently), the same chance outcomes with the same
probabilities, the same returns (chips), and the same partition of
histories into information states. Then OpenSpiel's CFR, run on the
registered Rulesmith Kuhn poker, must solve the game OpenSpiel's Kuhn is.
"""

import random

import pyspiel
import pytest
from open_spiel.python.algorithms import cfr, exploitability, expected_game_score

import rulesmith.openspiel
from conftest import ROOT

PORTS = ROOT / "tests" / "openspiel"


def port(name):
    return pyspiel.load_game(rulesmith.openspiel.register(str(PORTS / name)))


class Partition:
    """Information-state strings of both implementations, per player: two
    histories must share Rulesmith's string exactly when they share
    OpenSpiel's."""

    def __init__(self):
        self.ours_to_theirs = {}
        self.theirs_to_ours = {}

    def add(self, player, ours, theirs):
        a, b = (player, ours), (player, theirs)
        assert self.ours_to_theirs.setdefault(a, b) == b, (
            f"P{player + 1}: Rulesmith's information state\n{ours}\nis OpenSpiel's "
            f"{self.ours_to_theirs[a][1]!r} in one history and {theirs!r} in another")
        assert self.theirs_to_ours.setdefault(b, a) == a, (
            f"P{player + 1}: OpenSpiel's information state {theirs!r} is Rulesmith's\n"
            f"{self.theirs_to_ours[b][1]}\nin one history and\n{ours}\nin another")

    def __len__(self):
        return len(self.ours_to_theirs)


def cross_check(ours, theirs, action_text, outcome_of, trajectories, seed):
    """Plays `trajectories` random games in both implementations at once.
    `action_text(text)` is OpenSpiel's string of one of our action texts;
    `outcome_of(text)` is OpenSpiel's chance outcome (its number) for one
    of our outcome texts. Returns the information-state partition seen."""
    rng = random.Random(seed)
    partition = Partition()
    for _ in range(trajectories):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while not b.is_terminal():
            assert not a.is_terminal(), f"Rulesmith ended first, after {a.history()}"
            assert a.current_player() == b.current_player(), (a.history(), b.history())
            if b.is_chance_node():
                mine = {}
                for x, p in a.chance_outcomes():
                    mine[outcome_of(a.action_to_string(pyspiel.PlayerId.CHANCE, x))] = (x, p)
                their = dict(b.chance_outcomes())
                assert set(mine) == set(their), (b.history(), sorted(mine), sorted(their))
                for o, p in their.items():
                    assert mine[o][1] == pytest.approx(p, abs=1e-12), (b.history(), o)
                o = rng.choices(list(their), list(their.values()))[0]
                a.apply_action(mine[o][0])
                b.apply_action(o)
            else:
                player = b.current_player()
                for p in range(theirs.num_players()):
                    partition.add(p, a.information_state_string(p), b.information_state_string(p))
                mine = {action_text(a.action_to_string(player, x)): x for x in a.legal_actions()}
                their = {b.action_to_string(player, x): x for x in b.legal_actions()}
                assert set(mine) == set(their), (b.history(), sorted(mine), sorted(their))
                text = rng.choice(sorted(their))
                a.apply_action(mine[text])
                b.apply_action(their[text])
        assert a.is_terminal(), f"OpenSpiel ended, Rulesmith did not, after {a.history()}"
        assert a.returns() == pytest.approx(b.returns()), (b.history(), a.returns(), b.returns())
    return partition


# ----- Kuhn poker -----------------------------------------------------------

KUHN_CARDS = ["J", "Q", "K"]  # OpenSpiel's cards 0, 1, 2


@pytest.fixture(scope="module")
def kuhn():
    return port("kuhn-poker")


def test_kuhn_poker_plays_as_openspiels(kuhn):
    theirs = pyspiel.load_game("kuhn_poker")
    partition = cross_check(
        kuhn, theirs,
        action_text=str.capitalize,            # "pass" -> "Pass"
        outcome_of=KUHN_CARDS.index,           # "K" -> 2
        trajectories=3000, seed=1)
    # Kuhn has 12 information states per player at its decisions; the
    # states seen by the player not to move add the rest.
    assert len(partition) >= 24


def test_kuhn_poker_declares_openspiels_payoffs(kuhn):
    theirs = pyspiel.load_game("kuhn_poker")
    assert kuhn.min_utility() == theirs.min_utility() == -2
    assert kuhn.max_utility() == theirs.max_utility() == 2
    assert kuhn.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert kuhn.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert kuhn.utility_sum() == 0


def _cfr(game, iterations, check_every):
    """CFR's average policy after `iterations`, and the first checked
    iteration whose exploitability is under 0.01."""
    solver = cfr.CFRSolver(game)
    first = None
    for i in range(1, iterations + 1):
        solver.evaluate_and_update_policy()
        if first is None and i % check_every == 0:
            if exploitability.exploitability(game, solver.average_policy()) < 0.01:
                first = i
    return solver.average_policy(), first


def test_openspiels_cfr_solves_the_registered_kuhn_poker(kuhn):
    theirs = pyspiel.load_game("kuhn_poker")
    # OpenSpiel's own Kuhn: how many iterations its CFR needs to get under
    # an exploitability of 0.01 (checked every 10).
    _, needed = _cfr(theirs, 400, 10)
    assert needed is not None, "OpenSpiel's own Kuhn did not reach 0.01 in 400 iterations"
    policy, ours_needed = _cfr(kuhn, needed, 10)
    assert ours_needed == needed, (ours_needed, needed)
    assert exploitability.exploitability(kuhn, policy) < 0.01
    value = expected_game_score.policy_value(kuhn.new_initial_state(), [policy, policy])
    assert value[0] == pytest.approx(-1 / 18, abs=0.005), value
    assert value[0] + value[1] == pytest.approx(0, abs=1e-9)


# ----- Leduc poker ----------------------------------------------------------

LEDUC_CARDS = ["J1", "J2", "Q1", "Q2", "K1", "K2"]  # OpenSpiel's cards 0-5


def test_leduc_poker_plays_as_openspiels():
    ours = port("leduc-poker")
    theirs = pyspiel.load_game("leduc_poker")
    assert (ours.min_utility(), ours.max_utility()) == (theirs.min_utility(), theirs.max_utility())
    assert ours.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    partition = cross_check(
        ours, theirs,
        action_text=str.capitalize,            # "raise" -> "Raise"
        outcome_of=LEDUC_CARDS.index,          # "Q2" -> 3
        trajectories=2000, seed=2)
    assert len(partition) > 500


# ----- Liar's dice ------------------------------------------------------------

def liars_dice_action(text):
    """Ours "bid 2-5" is OpenSpiel's "2-5"; "liar" its "Liar"."""
    return "Liar" if text == "liar" else text.removeprefix("bid ")


def test_liars_dice_with_secret_rolls_plays_as_openspiels():
    ours = port("liars-dice")
    theirs = pyspiel.load_game("liars_dice")
    # The dice are rolled in secret (roll_secret): imperfect information,
    # each roll still a chance node of six faces.
    assert ours.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    partition = cross_check(
        ours, theirs,
        action_text=liars_dice_action,
        outcome_of=lambda face: int(face) - 1,  # our face "4" is OpenSpiel's roll 3
        trajectories=3000, seed=3)
    assert len(partition) > 500


def test_a_secret_roll_shows_only_in_its_seats_information_state():
    game = port("liars-dice")
    state = game.new_initial_state()
    assert state.is_chance_node()
    assert len(state.chance_outcomes()) == 6
    state.apply_action(4)                      # P1 rolls a 5, behind a screen
    state.apply_action(0)                      # P2 rolls a 1
    mine = state.information_state_string(0).splitlines()
    theirs = state.information_state_string(1).splitlines()
    assert mine[1:] == ["chance 5", "chance ?"], mine
    assert theirs[1:] == ["chance ?", "chance 1"], theirs
