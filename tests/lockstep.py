"""One lockstep harness: a batched engine and one single env per game slot, driven by the same actions.

:func:`lockstep` plays ``steps`` steps of ``n`` games both ways and asserts, at every step, equal observations,
masks and seats to move; rewards and the end of each game; and for each finished game the engine's final
observation, info, outcome and record against the env's. The actions come from a *player*:

- :class:`RandomTurns` / :class:`RandomTicks`: random legal play (ticks: plays favoured over turns and waits, some
  games stalling, talking games saying random messages), the same draws as the tests always made;
- :class:`Agents`: shipped agents by registry name, one fresh agent per seat of every slot, reset with the
  evaluation's seeds (``agent_seed``) whenever its slot starts a game, each acting on its own observation.

Rope Team and Rook for Two run in their turn form (AEC envs, one seat moves per step); Summit Rush in its tick form
(``summit_rush_v0`` Parallel env against ``SummitRushParallel``, every seat acts each tick).
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

from cardzoo.agents.loops import agent_seed
from cardzoo.agents.registry import make_agent
from cardzoo.envs import rook_v0, rope_team_v0, summit_rush_v0
from cardzoo.envs.batched import make_batched
from cardzoo.envs.common.errors import IllegalActionWarning
from cardzoo.envs.common.layout import to_bits
from cardzoo.envs.rook import observer as rook_observer
from cardzoo.envs.rook import rules as rook_rules
from cardzoo.envs.rope_team import rules as rope_rules
from cardzoo.envs.rope_team.observer import observe_bits
from cardzoo.envs.summit_rush import rules as summit_rules
from cardzoo.envs.summit_rush.batched import SummitRushParallel


class RandomTurns:
    """Random legal cards (turn form)."""

    def begin(self, eng, rng: np.random.Generator) -> None:
        self.rng = rng

    def __call__(self, eng, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray | None) -> np.ndarray:
        return np.argmax(self.rng.random(mask.shape) * mask, axis=1)

    def restart(self, i: int, seed: int) -> None:
        pass


class RandomTicks:
    """Random joint moves (tick form): plays twenty times as likely as a turn or a wait, except in the games marked
    waiting (one in ten, redrawn for each game), which wait four times in five; talking games say a random message
    half the time."""

    def begin(self, eng, rng: np.random.Generator) -> None:
        self.rng = rng
        self.waiting = rng.random(eng.num_envs) < 0.1

    def __call__(self, eng, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray | None) -> np.ndarray:
        return choose_ticks(self.rng, mask, eng, self.waiting)

    def restart(self, i: int, seed: int) -> None:
        self.waiting[i] = self.rng.random() < 0.1


def choose_ticks(rng: np.random.Generator, mask: np.ndarray, eng, waiting: np.ndarray) -> np.ndarray:
    """:class:`RandomTicks`' joint actions int[N, P] from the move part of ``mask`` (int8[N, P, A])."""
    moves = mask[..., : eng.n_moves].astype(np.float64)
    weight = moves.copy()
    weight[..., : eng.TURN] *= 20.0
    action = np.argmax(rng.random(moves.shape) ** (1.0 / np.maximum(weight, 1e-9)) * moves, axis=2)
    idle = waiting[:, None] & (rng.random(action.shape) < 0.8)
    action = np.where(idle, eng.WAIT, action)
    if eng.config.talk:
        said = rng.integers(0, summit_rules.N_MESSAGES, action.shape) * (rng.random(action.shape) < 0.5)
        action = action + said * eng.n_moves
    return action


class Agents:
    """Registry agents by name, seat ``q`` of every slot played by ``names[q % len(names)]``."""

    def __init__(self, *names: str):
        self.names = names

    def begin(self, eng, rng: np.random.Generator) -> None:
        seats = len(eng.possible_agents)
        self.agents = [[make_agent(self.names[q % len(self.names)], eng.env_name) for q in range(seats)]
                       for _ in range(eng.num_envs)]
        for i in range(eng.num_envs):
            self.restart(i, int(eng.seeds[i]))

    def __call__(self, eng, obs: np.ndarray, mask: np.ndarray, seat: np.ndarray | None) -> np.ndarray:
        if seat is not None:  # turn form: the seat to move in each game
            return np.array([self.agents[i][seat[i]].act(obs[i], mask[i]) for i in range(len(obs))])
        return np.array([[agent.act(obs[i, q], mask[i, q]) for q, agent in enumerate(self.agents[i])]
                         for i in range(len(obs))])

    def restart(self, i: int, seed: int) -> None:
        for q, agent in enumerate(self.agents[i]):
            agent.reset(agent_seed(seed, q))


def lockstep(env_id: str, n: int, steps: int, player=None, seed: int = 0, illegal: float = 0.0,
             **options) -> Counter:
    """Play ``steps`` steps of ``n`` games both ways with ``player`` (random play by default), checking everything
    every step. Returns what happened: ``games`` finished, their outcomes, and for Summit Rush the info counters
    (redirected, bounced, conflicts, turned, messages) summed over the finished games. ``illegal``: the share of
    actions replaced by random ones, legal or not."""
    if env_id in TURN_GAMES:
        return _turns(env_id, n, steps, player or RandomTurns(), seed, illegal, **options)
    if env_id == "summit_rush_v0":
        return _ticks(n, steps, player or RandomTicks(), seed, illegal, **options)
    raise ValueError(f"no lockstep driver for {env_id!r}")


# turn-form games: the env module, the observer's bits of the seat to move and the rules' legal actions (as bits)
TURN_GAMES = {
    "rope_team_v0": (rope_team_v0, observe_bits, rope_rules.legal_mask),
    "rook_v0": (rook_v0, rook_observer.observe_bits, rook_rules.legal_actions),
}


def _packed(rows: np.ndarray) -> list[int]:
    return [to_bits(row) for row in rows]


def _turns(env_id: str, n: int, steps: int, player, seed: int, illegal: float, **options) -> Counter:
    module, observe, legal_bits = TURN_GAMES[env_id]
    eng = make_batched(env_id, n, **options)
    envs = [module.raw_env(**options) for _ in range(n)]
    rng = np.random.default_rng(seed)
    obs, mask, seat = eng.reset(seed * 1_000_003)
    for i, env in enumerate(envs):
        env.reset(seed=int(eng.seeds[i]))
    player.begin(eng, rng)
    seen: Counter = Counter()

    def check() -> None:
        observed, legal = _packed(obs), _packed(mask)
        for i, env in enumerate(envs):
            s = env.game
            assert seat[i] == s.to_move, i
            assert observed[i] == observe(s, s.to_move), (i, env.game_record())
            assert legal[i] == legal_bits(s), i

    check()
    for _ in range(steps):
        actions = player(eng, obs, mask, seat)
        if illegal:
            wild = rng.random(actions.shape) < illegal
            actions = np.where(wild, rng.integers(0, eng.num_actions, actions.shape), actions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IllegalActionWarning)
            obs, mask, seat, rewards, done = eng.step(actions)
        for i, env in enumerate(envs):
            agent = env.agent_selection
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", IllegalActionWarning)
                env.step(int(actions[i]))
            assert rewards[i].tolist() == [env.rewards[a] for a in env.possible_agents], i
            assert done[i] == (env.terminations[agent] or env.truncations[agent]), i
            if done[i]:
                assert eng.truncated[i] == env.truncations[agent], i
                seen["games"] += 1
                seen[env.infos[agent]["outcome"]] += 1
                assert eng.finished_info(i) == env.infos[agent]
                assert eng.outcomes[eng.outcome[i]] == env.infos[agent]["outcome"]
                assert np.array_equal(eng.final_obs[i], env.observe(agent)["observation"])
                assert eng.finished_record(i) == env.game_record()
                env.reset(seed=int(eng.seeds[i]))
                player.restart(i, int(eng.seeds[i]))
        check()
    return seen


def _ticks(n: int, steps: int, player, seed: int, illegal: float, **options) -> Counter:
    eng = SummitRushParallel(n, **options)
    envs = [summit_rush_v0.parallel_env(**options) for _ in range(n)]
    agents = envs[0].possible_agents
    rng = np.random.default_rng(seed)
    obs, mask = eng.reset(seed * 1_000_003)
    current = [env.reset(seed=int(eng.seeds[i]))[0] for i, env in enumerate(envs)]
    player.begin(eng, rng)
    seen: Counter = Counter()

    def check() -> None:
        assert np.array_equal(obs, [[current[i][a]["observation"] for a in agents] for i in range(n)])
        assert np.array_equal(mask, [[current[i][a]["action_mask"] for a in agents] for i in range(n)])

    check()
    for _ in range(steps):
        actions = player(eng, obs, mask, None)
        if illegal:
            wild = rng.random(actions.shape) < illegal
            actions = np.where(wild, rng.integers(0, eng.num_actions, actions.shape), actions)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IllegalActionWarning)
            obs, mask, rewards, done = eng.step(actions)
            results = [env.step({a: int(actions[i, q]) for q, a in enumerate(agents)}) for i, env in enumerate(envs)]
        for i, (o, r, term, trunc, info) in enumerate(results):
            current[i] = o
            if envs[i].game.outcome != summit_rules.ILLEGAL:  # who touched first this tick
                assert tuple(eng.engine.last_order[i]) == envs[i].game.last_order, i
            assert rewards[i].tolist() == [r[a] for a in agents], i
            assert done[i] == (not envs[i].agents), i
            if not done[i]:
                continue
            assert eng.truncated[i] == trunc[agents[0]] and term[agents[0]] != trunc[agents[0]], i
            assert eng.finished_info(i) == info[agents[0]], i
            assert eng.outcomes[eng.outcome[i]] == info[agents[0]]["outcome"]
            assert np.array_equal(eng.final_obs[i], [o[a]["observation"] for a in agents]), i
            assert eng.finished_record(i) == envs[i].game_record(), i
            seen["games"] += 1
            seen[info[agents[0]]["outcome"]] += 1
            for key in ("redirected", "bounced", "conflicts", "turned", "messages"):
                seen[key] += info[agents[0]].get(key, 0)
            current[i] = envs[i].reset(seed=int(eng.seeds[i]))[0]
            player.restart(i, int(eng.seeds[i]))
        check()
    for i in range(n):  # the games still going are recorded too
        assert eng.record(i) == envs[i].game_record()
    return seen
