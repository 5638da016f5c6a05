"""The OpenSpiel ports of tests/openspiel/, written with declared ranges, a
seat's word and adjacent slots, number their actions as OpenSpiel does:
played side by side with `pyspiel` on random trajectories, they give the
same legal moves (as numbers and as texts), the same returns and the same
sizes, and tensors of a fixed shape (the same numbers where the port lays
them out as OpenSpiel does)."""

import random
import shutil
import tomllib

import numpy as np
import pyspiel
import pytest

import rulesmith
import rulesmith.openspiel
from conftest import ROOT

PORTS = ROOT / "tests" / "openspiel"


def port(name):
    return rulesmith.load_game(str(PORTS / name))


def _side_by_side(ours, theirs, games, seed, same_numbers):
    """Plays `games` random games on both; returns how many decisions were
    compared."""
    rng = random.Random(seed)
    decisions = 0
    for _ in range(games):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while not b.is_terminal():
            assert not a.is_terminal(), a.record()
            player = b.current_player()
            assert a.current_player() == player
            texts_a = {a.action_to_string(player, x): x for x in a.legal_actions()}
            texts_b = {b.action_to_string(player, x): x for x in b.legal_actions()}
            assert sorted(texts_a) == sorted(texts_b), a.record()
            if same_numbers:
                assert a.legal_actions() == b.legal_actions()
                assert texts_a == texts_b
            for p in range(ours.num_players()):
                tensor = a.observation_tensor(p)
                assert len(tensor) == ours.observation_tensor_size()
                assert tensor == pytest.approx(b.observation_tensor(p)), a.record()
                assert a.observation_string(p) == b.observation_string(p)
            text = rng.choice(sorted(texts_b))
            a.apply_action(texts_a[text])
            b.apply_action(texts_b[text])
            decisions += 1
        assert a.is_terminal(), a.record()
        assert a.returns() == b.returns(), a.record()
        assert a.move_number() <= ours.max_game_length()
    return decisions


@pytest.mark.parametrize("name, theirs, games, same_numbers", [
    ("tic-tac-toe", "tic_tac_toe", 300, True),
    ("connect-four", "connect_four", 150, True),
    ("breakthrough", "breakthrough", 30, False),
])
def test_ports_play_as_openspiel_does(name, theirs, games, same_numbers):
    ours, theirs = port(name), pyspiel.load_game(theirs)
    assert ours.max_game_length() == theirs.max_game_length()
    assert ours.observation_tensor_shape() == theirs.observation_tensor_shape()
    assert ours.max_chance_outcomes() == 0
    if same_numbers:
        assert ours.num_distinct_actions() == theirs.num_distinct_actions()
    else:
        assert theirs.num_distinct_actions() <= ours.num_distinct_actions() <= 2 * theirs.num_distinct_actions()
    assert _side_by_side(ours, theirs, games, seed=35, same_numbers=same_numbers) > games * 5


def test_the_sizes_are_openspiels():
    assert port("tic-tac-toe").num_distinct_actions() == 9
    assert port("connect-four").num_distinct_actions() == 7
    assert port("breakthrough").num_distinct_actions() == 2 * 8 * 8 * 3 * 3


@pytest.mark.parametrize("name, theirs, actions, outcomes", [
    ("kuhn-poker", "kuhn_poker", 2, 3),
    ("leduc-poker", "leduc_poker", 3, 6),
    ("liars-dice", "liars_dice", 13, 6),
    ("tic-tac-toe", "tic_tac_toe", 9, 0),
    ("connect-four", "connect_four", 7, 0),
])
def test_the_ports_number_actions_and_chance_as_openspiel(name, theirs, actions, outcomes):
    ours, theirs = port(name), pyspiel.load_game(theirs)
    assert ours.num_distinct_actions() == theirs.num_distinct_actions() == actions
    assert ours.max_chance_outcomes() == theirs.max_chance_outcomes() == outcomes


def test_liars_dice_bids_are_numbered_as_openspiels():
    ours, theirs = port("liars-dice"), pyspiel.load_game("liars_dice")
    a, b = ours.new_initial_state(), theirs.new_initial_state()
    for state in (a, b):
        state.apply_action(2)
        state.apply_action(5)
    assert a.legal_actions() == b.legal_actions() == list(range(12))
    texts = [a.action_to_string(0, x).removeprefix("bid ") for x in a.legal_actions()]
    assert texts == [b.action_to_string(0, x) for x in b.legal_actions()]
    a.apply_action(7)
    b.apply_action(7)
    assert a.legal_actions() == b.legal_actions() == list(range(8, 13))
    assert a.action_to_string(1, 12) == "liar"


def test_a_number_and_its_text_come_back_for_either_seat():
    c4 = port("connect-four")
    state = c4.new_initial_state()
    assert state.action_to_string(0, 3) == "x3"
    assert state.action_to_string(1, 3) == "o3"
    assert state.string_to_action("x3") == 3
    with pytest.raises(rulesmith.RulesmithError, match="P1 decides"):
        state.string_to_action("o3")
    state.apply_action(3)
    assert state.history() == [3]
    assert state.string_to_action("o6") == 6


def test_registered_ports_give_openspiel_tensors():
    game = pyspiel.load_game(rulesmith.openspiel.register(str(PORTS / "tic-tac-toe")))
    assert game.get_type().provides_observation_tensor
    assert game.observation_tensor_shape() == [3, 3, 3]
    state = game.new_initial_state()
    state.apply_action(4)
    planes = np.reshape(state.observation_tensor(0), [3, 3, 3])
    assert planes[2][1][1] == 1 and planes[0][1][1] == 0 and planes[0].sum() == 8
    pyspiel.random_sim_test(game, num_sims=5, serialize=False, verbose=False)


def test_an_undeclared_tensor_is_the_summarys_numbers(tmp_path):
    # The tic-tac-toe port without its layout: every number of its summary,
    # the 9 cells then the 27 planes (a summary's keys come sorted).
    shutil.copytree(PORTS / "tic-tac-toe", tmp_path / "ttt")
    toml = tmp_path / "ttt" / "variant.toml"
    toml.write_text("\n".join(l for l in toml.read_text().splitlines() if "observation_tensor" not in l))
    game = rulesmith.load_game(str(tmp_path / "ttt"))
    assert game.declares_tensors() == (False, False)
    assert game.observation_tensor_shape() == [36]
    assert game.information_state_tensor_shape() == [36]
    state = game.new_initial_state()
    state.apply_action(4)
    tensor = state.observation_tensor(1)
    assert tensor[:9] == [-1, -1, -1, -1, 0, -1, -1, -1, -1]
    declared = port("tic-tac-toe").new_initial_state()
    declared.apply_action(4)
    assert tensor[9:] == declared.observation_tensor(1)
    assert state.information_state_tensor(1) == tensor


def test_a_declared_tensor_of_the_wrong_size_is_an_error(tmp_path):
    shutil.copytree(PORTS / "tic-tac-toe", tmp_path / "ttt")
    toml = tmp_path / "ttt" / "variant.toml"
    toml.write_text(toml.read_text().replace("shape = [3, 3, 3]", "shape = [3, 3, 2]"))
    state = rulesmith.load_game(str(tmp_path / "ttt")).new_initial_state()
    with pytest.raises(rulesmith.RulesmithError, match="holds 27 numbers for P1, but the shape"):
        state.observation_tensor(0)


def test_chance_outcomes_number_the_dice_the_scripts_roll():
    # Sirius rolls `param("die_faces")` dice: six faces, or eight when set;
    # no deck. Battlefield: Space rolls nothing: its decks' cards alone.
    from conftest import variant
    six = rulesmith.load_game(variant("sirius-basic"))
    eight = rulesmith.load_game(variant("sirius-basic"), params={"die_faces": 8})
    assert (six.max_chance_outcomes(), eight.max_chance_outcomes()) == (6, 8)
    folder = ROOT / "variants" / "battlefield-space"
    decks = tomllib.loads((folder / "variant.toml").read_text())["decks"]
    count = sum(len(tomllib.loads((folder / d["file"]).read_text())["cards"]) for d in decks.values())
    cards = rulesmith.load_game(str(folder))
    assert cards.max_chance_outcomes() == count
    state = cards.new_initial_state()
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        assert all(0 <= n < count for n, _ in outcomes)
        state.apply_action(outcomes[0][0])


def test_a_pile_draw_is_numbered_as_its_decks_card():
    # tests/bots/deck-builder: one deck of 6 cards and piles of it (a
    # supply, and per seat a draw pile, a hand, cards in play, a discard
    # pile). A card drawn from a pile is one of the deck's 6 outcomes,
    # not a number of its own per pile and seat.
    game = rulesmith.load_game(str(ROOT / "tests" / "bots" / "deck-builder"))
    assert game.max_chance_outcomes() == 6
    drawn = 0
    for seed in range(3):
        state = game.new_initial_state()
        rng = random.Random(seed)
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                assert all(0 <= n < 6 for n, _ in outcomes), outcomes
                n = rng.choices([o for o, _ in outcomes], [p for _, p in outcomes])[0]
                text = state.action_to_string(-1, n)
                assert state.string_to_action(text) == n
                drawn += 1
            else:
                n = rng.choice(state.legal_actions())
            state.apply_action(n)
        # The history's numbers replay the same game.
        again = game.new_initial_state()
        for n in state.history():
            again.apply_action(n)
        assert again.record() == state.record()
    assert drawn > 0
