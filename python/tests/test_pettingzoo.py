"""The PettingZoo AEC environment passes PettingZoo's own API test."""

import numpy as np
from pettingzoo.test import api_test

from rulesmith.pettingzoo import env
from conftest import variant


def test_pettingzoo_api_test_passes():
    api_test(env(variant("sirius-basic")), num_cycles=200)


def test_masked_random_agents_finish_a_game():
    e = env(variant("sirius-lifeboats"))
    e.reset(seed=4)
    steps = 0
    for agent in e.agent_iter(max_iter=20000):
        obs, reward, termination, truncation, info = e.last()
        if termination or truncation:
            action = None
        else:
            mask = obs["action_mask"]
            assert mask.sum() >= 1
            action = int(np.flatnonzero(mask)[steps % int(mask.sum())])
            view = bytes(obs["observation"]).rstrip(b"\0").decode()
            assert view == info["view"][: len(view)]
        e.step(action)
        steps += 1
    assert not e.agents, "every agent left at the end"
    assert sorted(e.state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


def test_a_declared_tensor_is_the_observation():
    from conftest import ROOT
    e = env(str(ROOT / "tests" / "openspiel" / "connect-four"))
    api_test(e, num_cycles=100)
    e.reset(seed=1)
    obs, reward, termination, truncation, info = e.last()
    planes = obs["observation"]
    assert planes.shape == (3, 6, 7) and planes.dtype == np.float32
    assert planes[2].sum() == 42, "every cell empty at the start (planes: x, o, empty)"
    assert info["view"].count(".") == 42
    e.step(3)
    obs, *_ = e.last()
    assert obs["observation"][2].sum() == 41
    assert obs["observation"][0][0][3] == 1, "x in the bottom row's column 3"
