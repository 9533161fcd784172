"""Games played by agents, below everything that plays them (the evaluation runner, the trainers' own evaluations,
the studies):

- a game as a generator of the moves it needs (:func:`env_game_steps`: yields ``(seat, observation, action_mask)``,
  is sent the move or has the agent's exception thrown in, returns the record), played one at a time with a list
  of agents by :func:`drive` / :func:`play_env_game`, or many at once by the runner's lockstep play;
- the report's deals played on the rules module (Rope Team, for agents with ``act_bits``) or through the silent
  Parallel env (Summit Rush), for the runner (:data:`FAST_LOOPS`), the studies and the distillation trainer
  (:func:`results`). Game ``i`` of a level is the report's game ``i``: dealt as the env's ``reset(seed=i)`` deals
  it (:func:`deal`), the agents reset with :func:`agent_seed`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from cardzoo.agents.base import BitsAgent
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common.errors import IllegalActionError
from cardzoo.envs.registry import GAMES
from cardzoo.envs.rope_team import rules
from cardzoo.envs.rope_team.env import CONFIG_OPTIONS, make_config
from cardzoo.envs.rope_team.observer import LAYOUT, observe_bits

Request = tuple[int, Any, Any]  # (seat, observation, action_mask)
Game = Generator[Request, Any, Any]


def step(game: Game, answer: Any) -> tuple[Request | None, Any]:
    """Send ``answer`` (a move, or an exception to throw in; None to start): the next request, or (None, record)."""
    try:
        if isinstance(answer, BaseException):
            return game.throw(answer), None
        return game.send(answer), None
    except StopIteration as stop:
        return None, stop.value


def ask(agent, request: Request) -> Any:
    """An agent's move for a request, or the exception it raised (thrown into the game, which handles it)."""
    try:
        return agent.act(request[1], request[2])
    except Exception as err:
        return err


def drive(game: Game, agents: Sequence) -> Any:
    """Play one game to its end, ``agents[seat].act`` answering each request; its record."""
    request, record = step(game, None)
    while request is not None:
        request, record = step(game, ask(agents[request[0]], request))
    return record


def env_game_steps(env, seed: int) -> Game:
    """One game through the env's agent_iter loop, as a generator of its moves: yields ``(seat, observation,
    action_mask)``, is sent the move; returns the final info plus each seat's total reward."""
    env.reset(seed=seed)
    seat_of = {a: i for i, a in enumerate(env.possible_agents)}
    totals = [0.0] * len(env.possible_agents)
    final: dict[str, Any] = {}
    for agent_id in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[seat_of[agent_id]] += reward
        if term or trunc:
            final = info
            env.step(None)
        else:
            env.step((yield seat_of[agent_id], obs["observation"], obs["action_mask"]))
    return {**final, "returns": totals}


def play_env_game(env, agents: Sequence, seed: int) -> dict[str, Any]:
    """One game through the env's agent_iter loop; the final info plus each seat's total reward."""
    return drive(env_game_steps(env, seed), agents)


def play_games(env_id: str, specs: Sequence[str], seeds: Sequence[int], **options: Any) -> list[dict[str, Any]]:
    """The records of games ``seeds`` of ``env_id`` with ``options``, one agent per seat (``specs`` cycled), each
    reset with :func:`agent_seed` of the game and seat: the runner's records of a strict matchup, in this process."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.record import make_env

    env = make_env(env_id, **{"illegal_action": "raise", **options})
    agents = [make_agent(specs[i % len(specs)], env_id, seat=i) for i in range(len(env.possible_agents))]
    out = []
    for seed in seeds:
        for seat, agent in enumerate(agents):
            agent.reset(seed=agent_seed(seed, seat))
        out.append({**play_env_game(env, agents, seed), "seed": seed})
    return out


def deal(seed: int, level: str) -> rules.State:
    """Game ``seed`` of ``level``, dealt as the env's ``reset(seed=seed)`` deals it."""
    return rules.deal(rules.LEVELS[level], seed)


def rope_team_bits_game(options: dict[str, Any], agents: Sequence, seed: int) -> dict[str, Any]:
    """Rope Team without the env wrapper: the same deal as ``env.reset(seed)`` and the same observations (as
    the integer the observation vector is made from), for agents with ``act_bits``. Tested equal to the env loop."""
    game_options = {k: v for k, v in options.items() if k in CONFIG_OPTIONS}
    s = rules.deal(make_config(**game_options), seed)
    while s.outcome is None:
        seat = s.to_move
        legal = rules.legal_mask(s)
        card = agents[seat].act_bits(observe_bits(s, seat), legal)
        if not legal >> card & 1:
            if options.get("illegal_action") == "penalize":  # the env's penalty: the team loses at once
                return {"outcome": "illegal", "illegal_by": f"player_{seat}", "returns": [-1.0, -1.0]}
            raise IllegalActionError(f"agent {agents[seat].name} played illegal card {card}")
        rules.play(s, card)
    r = rules.rewards(s)
    return {**rules.summary(s), "returns": [r, r]}


_rope_team_bits_game = rope_team_bits_game  # the name before the game registry
# env id -> the loop for agents that all have act_bits (the registry's fast_loop of each game)
FAST_LOOPS: dict[str, Callable] = {s.env_id: s.load("fast_loop") for s in GAMES.values() if s.fast_loop}


_CARDS = np.arange(52, dtype=np.int64)


def mask_array(legal: int) -> np.ndarray:
    """The env's action mask (int8, one entry per card) of a legal-cards bit mask."""
    return ((legal >> _CARDS) & 1).astype(np.int8)


def act(agent, bits: int, legal: int) -> int:
    """``agent``'s card from an observation's bits: ``act_bits`` for a bit-level agent, else ``act`` on the arrays."""
    if isinstance(agent, BitsAgent):
        return agent.act_bits(bits, legal)
    return agent.act(LAYOUT.to_array(bits), mask_array(legal))


def play(level: str, seed: int, agents: list, game: str = "rope_team") -> bool:
    """Whether ``agents`` (one per seat) win the report's game ``seed`` of ``level`` of ``game``."""
    return _PLAY[game](level, seed, agents)


def _play_rope_team(level: str, seed: int, agents: list) -> bool:
    s = deal(seed, level)
    for seat, agent in enumerate(agents):
        agent.reset(seed=agent_seed(seed, seat))
    while s.outcome is None:
        seat = s.to_move
        legal = rules.legal_mask(s)
        card = act(agents[seat], observe_bits(s, seat), legal)
        if not legal >> card & 1:
            raise RuntimeError(f"{agents[seat].name} played an illegal card {card} in game {seed} of {level}")
        rules.play(s, card)
    return s.outcome == "win"


_ENVS: dict = {}


def summit_rush_env(level: str):
    """The silent Summit Rush Parallel env of ``level`` (one per process), strict about illegal moves."""
    if level not in _ENVS:
        from cardzoo.envs import summit_rush_v0

        _ENVS[level] = summit_rush_v0.parallel_env(level=level, talk=False, illegal_action="raise")
    return _ENVS[level]


def _play_summit_rush(level: str, seed: int, agents: list) -> bool:
    """The report's game ``seed`` (``reset(seed=seed)``), each seat acting on its observation every tick."""
    env = summit_rush_env(level)
    obs, _ = env.reset(seed=seed)
    for seat, agent in enumerate(agents):
        agent.reset(seed=agent_seed(seed, seat))
    info: dict = {}
    while env.agents:
        actions = {name: agents[seat].act(obs[name]["observation"], obs[name]["action_mask"])
                   for seat, name in enumerate(env.possible_agents)}
        obs, _, _, _, infos = env.step(actions)
        info = infos[env.possible_agents[0]]
    return info["outcome"] == "win"


_PLAY = {"rope_team": _play_rope_team, "summit_rush": _play_summit_rush}
ENVS = {game: GAMES[game].env_id for game in _PLAY}


def make_team(name: str, game: str = "rope_team") -> list:
    from cardzoo.agents.registry import make_agent

    return [make_agent(name, ENVS[game]) for _ in range(2)]


def _play_many(job: tuple[str, str, list[int], str]) -> list[bool]:
    name, level, seeds, game = job
    agents = make_team(name, game)
    return [play(level, seed, agents, game) for seed in seeds]


def results(name: str, level: str, seeds: list[int], workers: int = 1, game: str = "rope_team") -> list[bool]:
    """Wins of team ``name`` (both seats) on the deals ``seeds`` of ``level``, in order; ``workers`` processes."""
    if workers <= 1:
        return _play_many((name, level, seeds, game))
    chunks = [seeds[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        parts = list(pool.map(_play_many, [(name, level, c, game) for c in chunks]))
    won = [False] * len(seeds)
    for i, part in enumerate(parts):
        for j, w in enumerate(part):
            won[i + j * workers] = w
    return won


def cached_results(name: str, level: str, games: int, workers: int, cache: Path | None,
                   game: str = "rope_team") -> list[bool]:
    """:func:`results` on deals ``0 .. games-1``, kept in ``cache`` (a folder) under the agent's name and weights'
    fingerprint, so a baseline is played once for all the candidates it is paired with."""
    from cardzoo.agents.registry import fingerprint

    path = None
    if cache is not None:
        stem = Path(name).stem if name.endswith(".npz") else name
        path = cache / f"{game}-{stem}-{fingerprint(name, ENVS[game]) or 'code'}-{level}-{games}.json"
        if path.is_file():
            return [c == "W" for c in json.loads(path.read_text())["results"]]
    won = results(name, level, list(range(games)), workers, game)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"agent": name, "level": level, "results": "".join("W" if w else "L" for w in won)}))
    return won
