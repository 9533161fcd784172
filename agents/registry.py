"""Agents by name, for the command line and evaluation: ``make_agent("random", "rope_team_v0", seed=1)``."""

from __future__ import annotations

from collections.abc import Callable

from cardzoo.envs.common.errors import OptionError

from .random_agent import RandomAgent
from .rook_heuristic import RookHeuristic
from .rook_search import RookSearch
from .rope_team_search import RopeTeamSearch
from .rope_team_simple import RopeTeamSimple
from .summit_rush_search import SummitRushSearch
from .summit_rush_simple import SummitRushSimple
from .summit_rush_talk import Muted, SummitRushSimpleTalk


def _learned(*names: str):
    """A factory for the shipped policies ``names`` (the agent picks the one that fits the observation)."""

    def make(seed=None):
        from .learned import LearnedAgent, shipped_policy

        paths = []
        for n in names:
            try:
                paths.append(shipped_policy(n))
            except OptionError:
                if len(names) == 1:
                    raise
        if not paths:
            raise OptionError(f"none of the policies {list(names)} is shipped")
        return LearnedAgent(paths, seed=seed)

    return make


# name -> {env name or "*" -> factory(seed)}
AGENTS: dict[str, dict[str, Callable]] = {
    "random": {"*": lambda seed: RandomAgent(seed)},
    "simple": {"rope_team_v0": lambda seed: RopeTeamSimple(seed), "summit_rush_v0": SummitRushSimple},
    "simple_talk": {"summit_rush_v0": SummitRushSimpleTalk},  # says the document's calls and listens
    "simple_talk_muted": {"summit_rush_v0": lambda seed: Muted(SummitRushSimpleTalk(seed))},  # an ablation
    "heuristic": {"rook_v0": RookHeuristic},
    "search": {"rope_team_v0": RopeTeamSearch, "summit_rush_v0": SummitRushSearch, "rook_v0": RookSearch},
    # Trained policies shipped in cardzoo/agents/policies (see its README for the commands that made them).
    # `learned` is the strongest measured for each game; `learned_v1` the policies it replaced (MaskablePPO).
    "learned": {"rope_team_v0": _learned("rope_team_v2"), "summit_rush_v0": _learned("summit_rush_normal_v2",
                                                                                    "summit_rush_hard_v2"),
                "rook_v0": _learned("rook_v2")},
    "learned_v1": {"rope_team_v0": _learned("rope_team"), "summit_rush_v0": _learned("summit_rush_normal",
                                                                                    "summit_rush_hard"),
                   "rook_v0": _learned("rook")},
    "learned_talk": {"summit_rush_v0": _learned("summit_rush_normal_talk")},  # trained in talking games
    "learned_talk_muted": {"summit_rush_v0": lambda seed: Muted(_learned("summit_rush_normal_talk")(seed))},
    "learned_seed1": {"rope_team_v0": _learned("rope_team_v2_seed1")},  # learned's recipe, seed 1 (cross-play)
    "learned_v1_seed1": {"rope_team_v0": _learned("rope_team_seed1")},
    "learned_plain": {"rope_team_v0": _learned("rope_team_plain")},
}


def agent_names(game: str) -> list[str]:
    return sorted(n for n, games in AGENTS.items() if "*" in games or game in games)


def _policy_file(path: str, game: str, seed: int | None):
    """A learned agent playing the policy file at ``path`` (a ``.npz`` written by ``cardzoo train``)."""
    from .learned import LearnedAgent

    agent = LearnedAgent(path, seed=seed)
    trained_on = agent.policy.meta.get("env")
    if trained_on != game:
        raise OptionError(f"the policy {path!r} was trained on {trained_on}, not {game}")
    return agent


def make_agent(name: str, game: str, seed: int | None = None):
    """The agent called ``name`` for ``game``; a name ending in ``.npz`` is a policy file's path."""
    if name.endswith(".npz"):
        return _policy_file(name, game, seed)
    games = AGENTS.get(name)
    factory = None if games is None else games.get(game, games.get("*"))
    if factory is None:
        raise OptionError(f"no agent {name!r} for {game}; agents for it: {', '.join(agent_names(game))}")
    return factory(seed)


def fingerprint(name: str, game: str) -> str:
    """What identifies an agent's behaviour beyond its name: the weights of a learned agent ("" for the others).
    Evaluation caches key on it, so retrained policies are never served stale results."""
    agent = make_agent(name, game)
    policies = getattr(agent, "policies", None)
    return "+".join(sorted(p.digest for p in policies.values())) if policies else ""
