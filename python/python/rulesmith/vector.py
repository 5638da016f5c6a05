"""Many games of one variant stepped together, for reinforcement learning.

    import numpy as np, rulesmith
    game = rulesmith.load_game("tests/openspiel/tic-tac-toe")
    vec = rulesmith.VectorGame(game, 256, seed=1)
    rng = np.random.default_rng(1)
    for _ in range(1000):
        mask = vec.legal_mask()                               # [256, 9] bool
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        rewards, done = vec.step(actions)                     # [256, 2], [256]

Each call crosses into Rust once for the whole batch. Chance is played
inside with the batch's own generator (seeded), so every game waits at a
decision; a secret round is played seat by seat, the lowest seat first.
With `auto_reset` (the default) a game that ends reports its returns in
`step`'s rewards and `done`, and starts again at once.
"""

import numpy as np


class VectorGame:
    """`size` games of `game` (a `rulesmith.Game`) stepped together."""

    def __init__(self, game, size, seed=0, auto_reset=True):
        self.game = game
        self.size = size
        self.native = game.batch(size, seed, auto_reset)
        self._actions = game.num_distinct_actions()
        self._players = game.num_players()
        self._shape = tuple(game.observation_tensor_shape())

    def __len__(self):
        return self.size

    def current_players(self):
        """Each game's seat to decide, -4 for a game over (without
        auto-reset): int64 [size]."""
        return np.frombuffer(self.native.current_players(), np.int64)

    def legal_mask(self):
        """True where an action is legal for a game's seat to move: bool
        [size, num_distinct_actions]."""
        return np.frombuffer(self.native.legal_mask(), np.bool_).reshape(self.size, self._actions)

    def observation_tensors(self, player=None):
        """Each game's observation tensor for `player`, or for its seat to
        move: float32 [size, *observation_tensor_shape()]."""
        data = self.native.observation_tensors(player)
        return np.frombuffer(data, np.float32).reshape((self.size,) + self._shape)

    def step(self, actions):
        """Applies `actions` (one action number per game, for its seat to
        move; ignored for a game over) and plays chance on. Returns
        (rewards float64 [size, players]: a game's returns where it just
        ended, else 0; done bool [size]). A bad action raises, naming the
        game, and changes nothing."""
        actions = np.ascontiguousarray(actions, dtype="<i8")
        if actions.shape != (self.size,):
            raise ValueError(f"step: actions of shape {actions.shape}, expected ({self.size},)")
        rewards, done = self.native.step(actions.tobytes())
        return (np.frombuffer(rewards, np.float64).reshape(self.size, self._players),
                np.frombuffer(done, np.bool_))

    def returns(self):
        """Each game's returns so far: float64 [size, players]."""
        return np.frombuffer(self.native.returns(), np.float64).reshape(self.size, self._players)

    def state(self, i):
        """A copy of game `i` as a `rulesmith.State`."""
        return self.native.state(i)

    def reset(self):
        """Starts every game again."""
        self.native.reset()
