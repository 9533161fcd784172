"""Summit Rush's batched rollouts: every world x candidate at once on the batched engine's array core, the blueprint
batched over the rows. They give the same values as the per-world rollouts they replaced (``summit_rush_reference``)
in every variant, and the search chooses the same joint move on every decision of real games; the blueprint is a
pluggable batched policy on observations."""

from __future__ import annotations

import random

import numpy as np
import pytest

from cardzoo.agents.summit_rush_rollouts import SimpleBlueprint, rollout_values
from cardzoo.agents.summit_rush_search import Public, candidates, sample_world, search
from cardzoo.envs import summit_rush_v0
from cardzoo.envs.common.errors import PolicyError

from .summit_rush_reference import Blueprint, rollout, search_per_world, value

VARIANTS = [{"level": "normal"}, {"level": "hard"}, {"level": "expert", "players": 3}, {"solo": True},
            {"time_limit": None, "wrap": False, "stock": 10}]


def bits_of(vector: np.ndarray) -> int:
    return int.from_bytes(np.packbits(vector.view(np.uint8), bitorder="little").tobytes(), "little")


def tables(options: dict, seed: int, every: int = 1):
    """The public table at every ``every``-th tick of a game whose team plays random candidates."""
    env = summit_rush_v0.parallel_env(**options, talk=False)
    obs, _ = env.reset(seed=seed)
    rng = random.Random(seed)
    tick = 0
    while env.agents:
        o = obs[env.possible_agents[0]]
        pub = Public(bits_of(o["observation"]), o["observation"].shape[0], o["action_mask"].shape[0])
        if tick % every == 0:
            yield pub, env
        joint = rng.choice(candidates(pub))
        obs, *_ = env.step(dict(zip(env.possible_agents, joint, strict=True)))
        tick += 1


@pytest.mark.parametrize("options", VARIANTS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_batched_rollouts_equal_the_per_world_rollouts(options):
    """Every world x candidate value, to the end and cut at a depth, equals the one-world rollout's; the true
    state of the env (its own stocks' layout and clock) loads as a sampled world does."""
    rng = random.Random(1)
    checked = 0
    for pub, env in tables(options, seed=3, every=3):
        cands = candidates(pub)
        worlds = [sample_world(pub, rng) for _ in range(3)] + [env.game]
        for depth in (None, 2):
            old = [[value(rollout(w, Blueprint(w), joint, depth)) for joint in cands] for w in worlds]
            assert rollout_values(worlds, cands, depth).tolist() == old
            checked += len(worlds) * len(cands)
    assert checked > 100


def test_the_search_chooses_as_the_per_world_search_on_every_decision_of_real_games():
    """At equal worlds and seeds the batched search makes the per-world search's choice, decision for decision,
    on hundreds of real decisions (the worlds' random stream is the same: values equal, so choices equal)."""
    decisions = deviations = 0
    for options, seed in [({"level": "normal"}, 0), ({"level": "hard"}, 1), ({"level": "expert", "players": 3}, 2),
                           ({"solo": True}, 4)]:
        for pub, _ in tables(options, seed):
            for z in (0.0, 1.0):
                chosen = search(pub, 6, None, z, 0)
                assert chosen == search_per_world(pub, 6, None, z, 0)
                decisions += 1
                deviations += chosen != candidates(pub)[0]
    assert decisions >= 200 and deviations > 10  # the search leaves the blueprint often enough to test it


def test_the_blueprint_is_a_pluggable_policy_on_observations():
    """A plain function ``obs[N, O], mask[N, A] -> actions[N]`` (here the simple blueprint seat by seat, without its
    joint fast path) plays the rollouts to the same values; another policy gives other values."""
    pub, env = next(tables({"level": "hard"}, seed=5))
    worlds = [sample_world(pub, random.Random(k)) for k in range(8)]
    cands = candidates(pub)
    calls = []

    def per_seat(config):
        simple = SimpleBlueprint(config)

        def policy(obs, mask):
            calls.append(obs.shape)
            return simple(obs, mask)
        return policy

    assert rollout_values(worlds, cands, None, per_seat).tolist() == rollout_values(worlds, cands).tolist()
    assert calls and all(shape[0] % 2 == 0 for shape in calls)  # both seats of every row asked

    def turn_or_wait(config):  # a weaker blueprint: never plays a card after the first tick
        return lambda obs, mask: np.where(mask[:, -2] == 1, mask.shape[1] - 2, mask.shape[1] - 1)

    assert rollout_values(worlds, cands, None, turn_or_wait).sum() < rollout_values(worlds, cands).sum()


def test_a_blueprint_that_breaks_the_protocol_is_refused_clearly():
    pub, _ = next(tables({"level": "hard"}, seed=5))
    worlds = [sample_world(pub, random.Random(0))]
    cands = candidates(pub)
    with pytest.raises(PolicyError, match="illegal action"):
        rollout_values(worlds, cands, None, lambda config: lambda obs, mask: np.full(len(obs), 3))
    with pytest.raises(PolicyError, match="one per observation"):
        rollout_values(worlds, cands, None, lambda config: lambda obs, mask: np.zeros(1, np.int64))
    with pytest.raises(ValueError, match="share players"):
        other, _ = next(tables({"level": "hard", "players": 3}, seed=5))
        rollout_values(worlds + [sample_world(other, random.Random(0))], cands)


def test_rollouts_in_threads_do_not_share_a_batch():
    """The play server runs agents in a thread pool: rollouts running at once in several threads give what each
    gives alone (each thread has its own engine)."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = []
    for k, (pub, _) in enumerate(tables({"level": "normal"}, seed=8, every=4)):
        jobs.append(([sample_world(pub, random.Random(k * 10 + i)) for i in range(16)], candidates(pub)))
    alone = [rollout_values(w, c).tolist() for w, c in jobs]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            assert list(pool.map(lambda job: rollout_values(*job).tolist(), jobs)) == alone
