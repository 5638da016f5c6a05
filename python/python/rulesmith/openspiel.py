"""A Rulesmith variant as an OpenSpiel game written in Python.

    import pyspiel, rulesmith.openspiel
    name = rulesmith.openspiel.register("variants/sirius-basic")
    game = pyspiel.load_game(name)

Every OpenSpiel algorithm that works on Python games then runs on it:
``pyspiel.random_sim_test``, MCTS (``open_spiel.python.algorithms.mcts``),
IS-MCTS with ``resampler`` below, CFR on small games. A variant with
secret rounds (a step with ``actor = "every"`` and ``secret = true``) is
registered as a simultaneous-move game: each round is one simultaneous
node (docs/python.md, "Simultaneous moves").
"""

import re

import numpy as np
import pyspiel

import rulesmith


class _Observer:
    """OpenSpiel's observer. With perfect recall it gives the information
    state (everything the seat has seen), otherwise what the seat sees
    now, as a string and as a tensor of fixed shape (the variant's
    `[output] observation_tensor` / `information_tensor`, or its summary's
    numbers; docs/python.md, "Tensors")."""

    def __init__(self, native_game, iig_obs_type, params):
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        if self.perfect_recall:
            shape, name = native_game.information_state_tensor_shape(), "info_state"
        else:
            shape, name = native_game.observation_tensor_shape(), "observation"
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {name: self.tensor.reshape(shape)}

    def set_from(self, state, player):
        native = state.native
        if self.perfect_recall:
            self.tensor[:] = native.information_state_tensor(player)
        else:
            self.tensor[:] = native.observation_tensor(player)

    def string_from(self, state, player):
        if self.perfect_recall:
            return state.native.information_state_string(player)
        return state.native.observation_string(player)


class _State(pyspiel.State):
    """An OpenSpiel state over a Rulesmith state (`native`). Where a secret
    round starts (every seat decides without seeing the others' choices)
    it is a simultaneous node: `current_player()` is
    `pyspiel.PlayerId.SIMULTANEOUS`, each seat has its `legal_actions(p)`
    and `apply_actions` takes one action per seat (the engine applies them
    in seat order)."""

    def __init__(self, game, native):
        super().__init__(game)
        self.native = native

    def current_player(self):
        return self.native.current_player(True)

    def _legal_actions(self, player):
        if player == _SIMULTANEOUS:
            # `legal_actions()` at a simultaneous node: the flat joint
            # actions, as OpenSpiel's own simultaneous games number them.
            sizes = [len(self.native.legal_actions(p)) or 1 for p in range(self.get_game().num_players())]
            return list(range(int(np.prod(sizes))))
        return self.native.legal_actions(player)

    def chance_outcomes(self):
        return self.native.chance_outcomes()

    def _apply_action(self, action):
        if self.native.is_simultaneous_node():
            self.native.apply_actions(self._joint(action))
        else:
            self.native.apply_action(action)

    def apply_action(self, action):
        # A flat joint action from Python goes in as the seats' actions, so
        # that the history holds one action per seat, as in OpenSpiel's own
        # simultaneous games.
        if self.native.is_simultaneous_node():
            self.apply_actions(self._joint(action))
        else:
            super().apply_action(action)

    def _apply_actions(self, actions):
        self.native.apply_actions(list(actions))

    def _joint(self, flat):
        """The seats' actions of flat joint action `flat`: seat 0's index in
        its legal list the least significant digit (OpenSpiel's
        `FlatJointActionToActions`); -1 for a seat with no legal action."""
        actions = []
        for p in range(self.get_game().num_players()):
            legal = self.native.legal_actions(p)
            if legal:
                actions.append(legal[flat % len(legal)])
                flat //= len(legal)
            else:
                actions.append(pyspiel.INVALID_ACTION)
        return actions

    def _action_to_string(self, player, action):
        if player == _SIMULTANEOUS:
            seats = self._joint(action)
            texts = [self.native.action_to_string(p, a) if a >= 0 else "-" for p, a in enumerate(seats)]
            return "[" + ", ".join(texts) + "]"
        return self.native.action_to_string(player, action)

    def is_terminal(self):
        return self.native.is_terminal()

    def returns(self):
        return self.native.returns()

    def __str__(self):
        return self.native.render()


_SIMULTANEOUS = int(pyspiel.PlayerId.SIMULTANEOUS)

_UTILITY = {
    "zero_sum": pyspiel.GameType.Utility.ZERO_SUM,
    "constant_sum": pyspiel.GameType.Utility.CONSTANT_SUM,
    "general_sum": pyspiel.GameType.Utility.GENERAL_SUM,
}


def _game_class(native_game, game_type, game_info):
    class _Game(pyspiel.Game):
        def __init__(self, params=None):
            super().__init__(game_type, game_info, params or {})
            self.native = native_game

        def new_initial_state(self):
            return _State(self, self.native.new_initial_state())

        def make_py_observer(self, iig_obs_type=None, params=None):
            return _Observer(self.native, iig_obs_type, params)

    return _Game


def register(variant, players=None, params=None, engine="interpreted", short_name=None,
             value_bound=None, max_decisions=None):
    """Registers `variant` (with `players` and `params`) as an OpenSpiel
    game and returns its short name, for ``pyspiel.load_game``."""
    native = rulesmith.load_game(variant, players=players, params=params, engine=engine,
                                 value_bound=value_bound, max_decisions=max_decisions)
    n = native.num_players()
    if short_name is None:
        short_name = "rulesmith_" + re.sub(r"[^a-z0-9_]", "_", native.name.lower())
        for key, value in sorted((params or {}).items()):
            short_name += f"_{key}_{value}"
        short_name += f"_{n}p_{engine}"
    hidden = native.hides_information()
    declares_observation, declares_information = native.declares_tensors()
    game_type = pyspiel.GameType(
        short_name=short_name,
        long_name=native.title,
        # A variant with secret rounds is simultaneous: each round is one
        # node where every seat decides at once.
        dynamics=(pyspiel.GameType.Dynamics.SIMULTANEOUS if native.has_simultaneous_rounds()
                  else pyspiel.GameType.Dynamics.SEQUENTIAL),
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=(pyspiel.GameType.Information.IMPERFECT_INFORMATION if hidden
                     else pyspiel.GameType.Information.PERFECT_INFORMATION),
        # The variant's [scores] say how results add up; without them the
        # winner gets 1 and every other seat -1 (a draw gives 0 to all).
        utility=_UTILITY[native.utility()],
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=n,
        min_num_players=n,
        provides_information_state_string=True,
        # A tensor read from the whole summary may change length from one
        # state to another: promised only when the variant lays it out. An
        # undeclared information tensor is the observation's, which is
        # everything a seat has seen only when nothing is hidden.
        provides_information_state_tensor=declares_information or (declares_observation and not hidden),
        provides_observation_string=True,
        provides_observation_tensor=declares_observation,
        parameter_specification={},
    )
    game_info = pyspiel.GameInfo(
        num_distinct_actions=native.num_distinct_actions(),
        max_chance_outcomes=native.max_chance_outcomes(),
        num_players=n,
        min_utility=native.min_utility(),
        max_utility=native.max_utility(),
        utility_sum=native.utility_sum(),
        max_game_length=native.max_game_length(),
    )
    pyspiel.register_game(game_type, _game_class(native, game_type, game_info))
    return short_name


def resampler(seed=0):
    """A resampler for OpenSpiel's IS-MCTS bot (``bot._resampler_cb``): a
    state the player cannot tell from the true one, secret cards redealt
    (Rulesmith's `determinize`)."""
    counter = [seed]

    def resample(state, player):
        counter[0] += 1
        world = state.clone()
        world.native = state.native.resample(player, counter[0])
        return world

    return resample
