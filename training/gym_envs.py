"""Single-agent Gymnasium views of cardzoo games, for stable-baselines3 / sb3-contrib.

``SharedPolicyEnv``: a cooperative turn-based game played by one shared policy in every seat (parameter sharing,
self-play). Each Gymnasium step is one decision of whichever seat is to move, made from that seat's own
observation; both seats' decisions are training data. The team reward is credited to the decision that earned it.

``TickEnv``: a cooperative simultaneous (Parallel) game. A tick's decisions are asked for one seat after the other,
each from the observation at the start of the tick, and applied together once every seat has chosen; no seat ever
sees another's choice for the same tick.

``VersusEnv``: a competitive turn-based game. The learner plays one seat (chosen at random per game), and the
other seats are played by opponents drawn from a pool (earlier snapshots, heuristic agents).

Every env exposes ``action_masks()`` for MaskablePPO. The views pass Gymnasium's and SB3's ``check_env``: the game
draw and the deals come from ``np_random`` (seeded by ``seed`` here and by ``reset(seed=...)``), and an action the
mask forbids is settled by the wrapped env's ``illegal_action`` option (``"penalize"`` ends the game with the
penalty; ``"raise"`` raises).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym
import numpy as np

from cardzoo.envs.common.seeding import training_seed


class _CardGameView(gym.Env):
    """What the three views share: spaces from the game's first env, optional input features, game choice."""

    metadata = {"render_modes": []}

    def _setup(self, games: list, weights: Sequence[float] | None, seed: int, features: str | None) -> None:
        self.games = games
        self.weights = None if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
        self.env = games[0]
        agent = self.env.possible_agents[0]
        self.observation_space = self.env.observation_space(agent)["observation"]
        self.action_space = self.env.action_space(agent)
        self.features = None
        if features:
            from cardzoo.agents.features import FEATURES

            self.features, extra = FEATURES[features]
            size = self.observation_space.shape[0] + extra
            self.observation_space = gym.spaces.Box(-1.0, 1.0, (size,), np.float32)
        self._np_random, self._np_random_seed = gym.utils.seeding.np_random(seed)

    def _next_game(self, seed: int | None):
        """The env for the next game (drawn by ``weights``) and that game's seed."""
        super().reset(seed=seed)
        if len(self.games) > 1:
            self.env = self.games[self.np_random.choice(len(self.games), p=self.weights)]
        return self.env, training_seed(self.np_random)  # never one of the benchmark's deals

    def _inputs(self, obs: dict) -> np.ndarray:
        """What the policy reads for an observation dict: the vector, or the features built from it."""
        return obs["observation"] if self.features is None else self.features(obs["observation"], obs["action_mask"])


class SharedPolicyEnv(_CardGameView):
    """See the module docstring. ``make_envs`` builds raw AEC envs; each game picks one (e.g. one per level)."""

    def __init__(self, make_envs: Sequence[Callable], weights: Sequence[float] | None = None, seed: int = 0,
                 features: str | None = None):
        self._setup([make() for make in make_envs], weights, seed, features)
        self._obs: dict | None = None

    def _view(self) -> np.ndarray:
        return self._inputs(self._obs)

    def reset(self, *, seed: int | None = None, options=None):
        env, game_seed = self._next_game(seed)
        env.reset(seed=game_seed)
        self._obs = env.observe(env.agent_selection)
        return self._view(), {}

    def action_masks(self) -> np.ndarray:
        return self._obs["action_mask"].astype(bool)

    def step(self, action):
        env = self.env
        agent = env.agent_selection
        env.step(int(action))
        reward = float(env.rewards[agent])  # cooperative: every seat gets the team's reward
        over = env.terminations[agent] or env.truncations[agent]
        self._obs = env.observe(agent if over else env.agent_selection)
        if over:
            info = dict(env.infos[agent])
            return self._view(), reward, bool(env.terminations[agent]), bool(env.truncations[agent]), info
        return self._view(), reward, False, False, {}


class TickEnv(_CardGameView):
    """See the module docstring. ``make_envs`` builds ParallelEnvs."""

    def __init__(self, make_envs: Sequence[Callable], weights: Sequence[float] | None = None, seed: int = 0,
                 features: str | None = None):
        self._setup([make() for make in make_envs], weights, seed, features)

    def reset(self, *, seed: int | None = None, options=None):
        env, game_seed = self._next_game(seed)
        self._tick_obs, _ = env.reset(seed=game_seed)
        self._seat = 0
        self._actions: dict = {}
        return self._view(), {}

    def _current(self) -> dict:
        return self._tick_obs[self.env.agents[self._seat]]

    def _view(self) -> np.ndarray:
        return self._inputs(self._current())

    def action_masks(self) -> np.ndarray:
        return self._current()["action_mask"].astype(bool)

    def step(self, action):
        env = self.env
        self._actions[env.agents[self._seat]] = int(action)
        self._seat += 1
        if self._seat < len(env.agents):
            return self._view(), 0.0, False, False, {}
        self._tick_obs, rewards, terms, truncs, infos = env.step(self._actions)
        self._actions = {}
        self._seat = 0
        agent = next(iter(rewards))
        reward = float(rewards[agent])
        if not env.agents:
            return np.zeros_like(self.observation_space.low), reward, bool(terms[agent]), bool(truncs[agent]), dict(
                infos[agent])
        return self._view(), reward, False, False, {}


class VersusEnv(_CardGameView):
    """See the module docstring. ``opponents(rng)`` returns an agent (act/reset) for the other seat each game."""

    def __init__(self, make_env: Callable, opponents: Callable[[np.random.Generator], object], seed: int = 0,
                 reward_scale: float = 1.0, features: str | None = None):
        self._setup([make_env()], None, seed, features)
        self.opponents = opponents
        self.reward_scale = reward_scale

    def reset(self, *, seed: int | None = None, options=None):
        env, game_seed = self._next_game(seed)
        env.reset(seed=game_seed)
        self.me = env.possible_agents[int(self.np_random.integers(len(env.possible_agents)))]
        self.opponent = self.opponents(self.np_random)
        self.opponent.reset(seed=game_seed)
        self._advance()
        return self._view(), {}

    def _advance(self) -> None:
        """Let the opponents move until it is the learner's turn or the game is over."""
        env = self.env
        while env.agents and env.agent_selection != self.me and not env.terminations[env.agent_selection]:
            obs = env.observe(env.agent_selection)
            env.step(self.opponent.act(obs["observation"], obs["action_mask"]))
        self._obs = env.observe(self.me)

    def action_masks(self) -> np.ndarray:
        return self._obs["action_mask"].astype(bool)

    def step(self, action):
        env = self.env
        env.step(int(action))
        self._advance()
        # AEC bookkeeping: the learner's cumulative reward was zeroed when it acted, so it now holds exactly what
        # it earned from its action and the opponents' replies.
        reward = self.reward_scale * float(env._cumulative_rewards[self.me])
        if env.terminations[self.me] or env.truncations[self.me]:
            return (self._view(), reward, bool(env.terminations[self.me]), bool(env.truncations[self.me]),
                    dict(env.infos[self.me]))
        return self._view(), reward, False, False, {}

    def _view(self) -> np.ndarray:
        return self._inputs(self._obs)


def make_view(game: str, seed: int = 0, opponent: str = "heuristic", **options) -> _CardGameView:
    """The view of ``game`` ("rope_team", "summit_rush" or "rook") made with the env ``options``: the shared-policy
    view for Rope Team, the tick view for Summit Rush, the learner against ``opponent`` (an agent name from
    ``cardzoo.agents.registry``) in Rook."""
    from importlib import import_module

    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.registry import spec

    game = spec(game)  # OptionError naming the games for any other name
    module = import_module(game.module)
    if not game.cooperative:
        return VersusEnv(lambda: module.raw_env(**options),
                         lambda rng: make_agent(opponent, game.env_id, seed=int(rng.integers(2**31))), seed=seed)
    if game.parallel:
        return TickEnv([lambda: module.parallel_env(**options)], seed=seed)
    return SharedPolicyEnv([lambda: module.raw_env(**options)], seed=seed)
