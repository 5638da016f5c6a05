"""A Rulesmith variant as a PettingZoo AEC environment (`env`), or as a
parallel one (`parallel_env`) for a variant with secret rounds, where
every agent of a round acts at once.

    from rulesmith.pettingzoo import env
    e = env("variants/sirius-basic")
    e.reset(seed=1)
    for agent in e.agent_iter():
        obs, reward, termination, truncation, info = e.last()
        mask = obs["action_mask"]
        action = None if termination or truncation else e.action_space(agent).sample(mask)
        e.step(action)

Agents are `player_0`, `player_1`, ... (seat P1 is `player_0`). Actions
are Rulesmith's action numbers (docs/python.md); chance events are played
by the environment with its own seeded generator. An observation is a dict:
`action_mask` (1 for each legal action of the agent to move) and
`observation`: the agent's observation tensor (float32, of the game's
`observation_tensor_shape()`) when the variant lays one out (`[output]
observation_tensor`) or when asked with `observation="tensor"`; otherwise
(`observation="text"`, the default for variants without a declared
tensor) its view as text (the variant's render for that seat), UTF-8 bytes
padded with zeros to `observation_bytes`. `info["view"]` always holds the
text.
"""


import gymnasium
import numpy as np
from pettingzoo import AECEnv, ParallelEnv

import rulesmith


def env(variant, **options):
    """The AEC environment of `variant` (options as RulesmithEnv's)."""
    return RulesmithEnv(variant, **options)


class _Views:
    """What both environments share: the game, the agents, the spaces and
    an agent's observation (its tensor or its view as bytes, and the mask
    of its legal actions)."""

    def _load(self, variant, players, params, engine, render_mode, observation_bytes, value_bound,
              max_decisions, observation):
        self.game = rulesmith.load_game(variant, players=players, params=params, engine=engine,
                                        value_bound=value_bound, max_decisions=max_decisions)
        if observation is None:
            observation = "tensor" if self.game.declares_tensors()[0] else "text"
        if observation not in ("tensor", "text"):
            raise ValueError(f"observation={observation!r}: expected 'tensor' or 'text'")
        self.tensors = observation == "tensor"
        self.render_mode = render_mode
        self.observation_bytes = observation_bytes
        n = self.game.num_players()
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        actions = self.game.num_distinct_actions()
        self._action_spaces = {a: gymnasium.spaces.Discrete(actions) for a in self.possible_agents}
        if self.tensors:
            self._shape = tuple(self.game.observation_tensor_shape())
            seen = gymnasium.spaces.Box(-np.inf, np.inf, self._shape, np.float32)
        else:
            seen = gymnasium.spaces.Box(0, 255, (observation_bytes,), np.uint8)
        self._observation_spaces = {
            a: gymnasium.spaces.Dict({
                "observation": seen,
                "action_mask": gymnasium.spaces.Box(0, 1, (actions,), np.int8),
            })
            for a in self.possible_agents
        }
        self.state = None

    def observation_space(self, agent):
        return self._observation_spaces[agent]

    def action_space(self, agent):
        return self._action_spaces[agent]

    def _view(self, agent):
        return self.state.observation_string(self._seat[agent])

    def _observe(self, agent, deciding):
        """`agent`'s observation; its mask holds its legal actions when
        `deciding`, else nothing."""
        if self.tensors:
            numbers = self.state.observation_tensor(self._seat[agent])
            obs = np.asarray(numbers, np.float32).reshape(self._shape)
        else:
            text = self._view(agent).encode("utf-8")[: self.observation_bytes]
            obs = np.zeros(self.observation_bytes, np.uint8)
            obs[: len(text)] = np.frombuffer(text, np.uint8)
        mask = np.zeros(self.game.num_distinct_actions(), np.int8)
        if deciding and not self.state.is_terminal():
            mask[self.state.legal_actions(self._seat[agent])] = 1
        return {"observation": obs, "action_mask": mask}

    def _play_chance(self):
        while self.state.is_chance_node():
            outcomes = self.state.chance_outcomes()
            actions = [a for a, _ in outcomes]
            probs = np.array([p for _, p in outcomes])
            self.state.apply_action(int(self._rng.choice(actions, p=probs / probs.sum())))

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        text = self.state.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass


class RulesmithEnv(_Views, AECEnv):
    metadata = {"render_modes": ["human", "ansi"], "name": "rulesmith_v0", "is_parallelizable": False}

    def __init__(self, variant, players=None, params=None, engine="interpreted", render_mode=None,
                 observation_bytes=4096, value_bound=None, max_decisions=None, observation=None):
        super().__init__()
        self._load(variant, players, params, engine, render_mode, observation_bytes, value_bound,
                   max_decisions, observation)

    def observe(self, agent):
        return self._observe(agent, agent == self.agent_selection)

    def _sync(self):
        """Agent selection, rewards and terminations from the state."""
        if self.state.is_terminal():
            returns = self.state.returns()
            for a in self.agents:
                self.rewards[a] = returns[self._seat[a]]
                self.terminations[a] = True
        else:
            self.agent_selection = self.possible_agents[self.state.current_player()]
        for a in self.agents:
            self.infos[a] = {"view": self._view(a)}

    def reset(self, seed=None, options=None):
        self._rng = np.random.default_rng(seed)
        self.state = self.game.new_initial_state()
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.agents[0]
        self._play_chance()
        self._sync()

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
        self.state.apply_action(int(action))
        self._play_chance()
        self._sync()
        if self.state.is_terminal():
            # Every agent sees the end in turn, then is removed.
            self.agent_selection = agent
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()


def parallel_env(variant, **options):
    """The parallel environment of `variant` (options as RulesmithEnv's),
    for variants with secret rounds: where one starts, every agent of the
    round acts at once."""
    return RulesmithParallelEnv(variant, **options)


class RulesmithParallelEnv(_Views, ParallelEnv):
    """A PettingZoo `ParallelEnv`. `step` takes a dict of actions: where a
    secret round starts (`State.is_simultaneous_node()`), one from every
    agent that decides in it, applied together (`State.apply_actions`);
    elsewhere (a step of one seat, in a variant that also has such
    rounds) only the agent to move acts and the others' actions are
    ignored. An agent's `action_mask` holds its legal actions exactly when
    it decides now, so masked sampling gives every agent an action. Chance
    is played by the environment with its seeded generator; at the end
    every agent gets its return as reward and is terminated."""

    metadata = {"render_modes": ["human", "ansi"], "name": "rulesmith_parallel_v0"}

    def __init__(self, variant, players=None, params=None, engine="interpreted", render_mode=None,
                 observation_bytes=4096, value_bound=None, max_decisions=None, observation=None):
        super().__init__()
        self._load(variant, players, params, engine, render_mode, observation_bytes, value_bound,
                   max_decisions, observation)
        self.agents = []

    def _deciding(self):
        """The agents that decide now: those with legal actions at a
        simultaneous node, else the one to move; none at the end."""
        if self.state.is_terminal():
            return []
        if self.state.is_simultaneous_node():
            return [a for a in self.agents if self.state.legal_actions(self._seat[a])]
        return [self.possible_agents[self.state.current_player()]]

    def _observations(self):
        deciding = set(self._deciding())
        return {a: self._observe(a, a in deciding) for a in self.agents}

    def _infos(self):
        return {a: {"view": self._view(a)} for a in self.agents}

    def reset(self, seed=None, options=None):
        self._rng = np.random.default_rng(seed)
        self.state = self.game.new_initial_state()
        self.agents = list(self.possible_agents)
        self._play_chance()
        return self._observations(), self._infos()

    def step(self, actions):
        deciding = self._deciding()
        missing = [a for a in deciding if actions.get(a) is None]
        if missing:
            raise ValueError(f"step: no action for {missing}, who decide now (see their action masks)")
        if self.state.is_simultaneous_node():
            joint = [int(actions[a]) if a in deciding else -1 for a in self.possible_agents]
            self.state.apply_actions(joint)
        else:
            self.state.apply_action(int(actions[deciding[0]]))
        self._play_chance()
        over = self.state.is_terminal()
        returns = self.state.returns()
        rewards = {a: (returns[self._seat[a]] if over else 0.0) for a in self.agents}
        terminations = {a: over for a in self.agents}
        truncations = {a: False for a in self.agents}
        observations, infos = self._observations(), self._infos()
        if over:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos
