"""Agents by name, for the command line and evaluation: ``make_agent("random", "rope_team_v0", seed=1)``."""

from __future__ import annotations

from collections.abc import Callable

from cardzoo.envs.common.errors import OptionError

from .partners import rook as rook_partners
from .partners import rope_team as rope_partners
from .random_agent import RandomAgent
from .rook_heuristic import RookHeuristic
from .rook_learned_search import RookLearnedSearch
from .rook_search import WIDE_BUDGET, RookSearch
from .rope_team_belief import RopeTeamBeliefSearch
from .rope_team_search import LEARNED_BUDGET, RopeTeamSearch
from .rope_team_simple import RopeTeamSimple
from .summit_rush_partners import PARTNERS as SUMMIT_PARTNERS
from .summit_rush_search import SummitRushSearch
from .summit_rush_simple import SummitRushSimple
from .summit_rush_talk import Muted, SummitRushSimpleTalk
from .summit_rush_turns import DeadTopTurns


def _learned(*names: str, fallback: Callable | None = None):
    """A factory for the shipped policies ``names`` (the agent picks the one that fits the setting, see
    ``agents/policy_choice.py``); ``fallback(seed)`` makes the agent that plays the settings none of them can."""

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
        return LearnedAgent(paths, seed=seed, fallback=None if fallback is None else fallback(seed))

    return make


_TALK = _learned("summit_rush_normal_talk", fallback=SummitRushSimpleTalk)

# name -> {env name or "*" -> factory(seed)}
AGENTS: dict[str, dict[str, Callable]] = {
    "random": {"*": lambda seed: RandomAgent(seed)},
    "simple": {"rope_team_v0": lambda seed: RopeTeamSimple(seed), "summit_rush_v0": SummitRushSimple},
    "simple_talk": {"summit_rush_v0": SummitRushSimpleTalk},  # says the document's calls and listens
    "simple_talk_muted": {"summit_rush_v0": lambda seed: Muted(SummitRushSimpleTalk(seed))},  # an ablation
    # Summit Rush convention partners for the benchmark's pool: simple with one convention changed each.
    **{p.name: {"summit_rush_v0": p} for p in SUMMIT_PARTNERS},
    "heuristic": {"rook_v0": RookHeuristic},
    "search": {"rope_team_v0": RopeTeamSearch, "summit_rush_v0": SummitRushSearch, "rook_v0": RookSearch},
    "search_belief": {"rope_team_v0": RopeTeamBeliefSearch},  # worlds drawn from a learned belief, fewer rollouts
    # Search on the learned policy (issue 28). Rope Team: its rollouts, its probabilities as the partner model; the
    # budget keeps the mean decision under 100 ms of CPU (evaluation/results/rope_team_search_learned.json). Summit
    # Rush: the rollouts and the move it deviates from are learned's.
    "search_learned": {
        "rope_team_v0": lambda seed: RopeTeamSearch(seed, blueprint=rope_team_policy("learned"), **LEARNED_BUDGET),
        "summit_rush_v0": lambda seed: SummitRushSearch(seed, blueprint="learned", wins_only=True),
        "rook_v0": RookLearnedSearch,  # the opponent's plays weight the worlds by her model's probabilities
    },
    # Trained policies shipped in agents/policies (see its README for the commands that made them).
    # `learned` is the strongest measured for each game; `learned_v1` the policies it replaced (MaskablePPO).
    # A Summit Rush setting no policy can read (three players, solo, untimed, ...) is played by the simple strategy,
    # and the agent's description says so (policy_choice.py).
    "learned": {"rope_team_v0": _learned("rope_team_v2"),
                "summit_rush_v0": _learned("summit_rush_normal_v2", "summit_rush_hard_v2", fallback=SummitRushSimple),
                "rook_v0": _learned("rook_v2")},
    "learned_v1": {"rope_team_v0": _learned("rope_team"),
                   "summit_rush_v0": _learned("summit_rush_normal", "summit_rush_hard", fallback=SummitRushSimple),
                   "rook_v0": _learned("rook")},
    # learned's moves; who turns when nothing fits, by the dead-top convention (issue 40: the largest knowable cause
    # of a lost deal in evaluation/results/summit_rush_losses)
    "learned_turns": {"summit_rush_v0": lambda seed: DeadTopTurns(AGENTS["learned"]["summit_rush_v0"](seed),
                                                                  name="learned_turns")},
    "learned_talk": {"summit_rush_v0": _TALK},  # trained in talking games
    "learned_talk_muted": {"summit_rush_v0": lambda seed: Muted(_TALK(seed))},
    "learned_seed1": {"rope_team_v0": _learned("rope_team_v2_seed1")},  # learned's recipe, seed 1 (cross-play)
    "learned_v1_seed1": {"rope_team_v0": _learned("rope_team_seed1")},
    "learned_plain": {"rope_team_v0": _learned("rope_team_plain")},
    "learned_entropy": {"rope_team_v0": _learned("rope_team_entropy")},  # learned's recipe, a 5x entropy bonus
    # Partners with one convention changed on purpose, for the benchmark's pools (agents/partners, agents/pools.py).
    "simple_lead_long": {"rope_team_v0": rope_partners.LongLead},
    "simple_signal": {"rope_team_v0": rope_partners.Signal},
    "simple_high_follow": {"rope_team_v0": rope_partners.HighFollow},
    "simple_trump_eager": {"rope_team_v0": rope_partners.TrumpEager},
    "simple_trump_shy": {"rope_team_v0": rope_partners.TrumpShy},
    "simple_trusting": {"rope_team_v0": rope_partners.Trusting},
    "simple_wary": {"rope_team_v0": rope_partners.Wary},
    "simple_careless": {"rope_team_v0": rope_partners.Careless},
    # Rook's search at the no-peeking tests' small budget: about 20 times the heuristic's time, not 250 (pools).
    "search_small": {"rook_v0": lambda seed: RookSearch(seed=seed, worlds=2, bid_worlds=3, tries=4)},
    # Rook's strongest measured agent: the search with many more worlds (WIDE_BUDGET, under 100 ms a decision).
    "search_wide": {"rook_v0": lambda seed: RookSearch(seed=seed, **WIDE_BUDGET)},
    # Search on the learned blueprint (issue 28): one line per game, so each game's branch adds its own.
    "heuristic_bold": {"rook_v0": rook_partners.Bold},
    "heuristic_timid": {"rook_v0": rook_partners.Timid},
}


# What each name plays, for people (``describe`` adds which policy a learned agent plays in which setting).
DESCRIPTIONS = {
    "random": "a uniformly random legal action",
    "simple": "the simple strategy from the game's document (Rope Team, Summit Rush; silent in talking games)",
    "simple_talk": "Summit Rush's simple strategy with the document's calls, listening to its partners",
    "simple_talk_muted": "simple_talk with every message replaced by nothing (an ablation)",
    **{p.name: f"Summit Rush's simple strategy but for one convention -- {p.convention}" for p in SUMMIT_PARTNERS},
    "heuristic": "Rook's heuristic player",
    "search": "determinized search over the hidden cards with the game's baseline as blueprint",
    "search_belief": "Rope Team's search with its worlds drawn from a learned belief over the partner's hand and "
                     "a third of the rollouts",
    "search_learned": "search with the learned policy as blueprint: its rollouts, the move it leaves only on a clear "
                      "gain and (Rope Team, Rook) worlds weighted by a model's probabilities of the other's plays",
    "learned": "the strongest shipped trained policy of each game",
    "learned_v1": "the trained policies learned named before (MaskablePPO), kept for comparison",
    "learned_talk": "a Summit Rush policy trained in talking games (Normal)",
    "learned_talk_muted": "learned_talk with every message replaced by nothing",
    "learned_seed1": "learned's Rope Team recipe, training seed 1 (for cross-play)",
    "learned_v1_seed1": "learned_v1's Rope Team recipe, training seed 1",
    "learned_plain": "a Rope Team policy that reads the observation alone",
    "learned_entropy": "learned's Rope Team recipe with a five times larger entropy bonus, seed 2 (a pool partner)",
    "simple_lead_long": "Rope Team's simple strategy, leading from its longest suit among the nearly best leads",
    "simple_signal": "Rope Team's simple strategy, discarding from its longest suit when void and leading the suit "
                     "its partner discarded",
    "simple_high_follow": "Rope Team's simple strategy, following with the highest of equally good cards",
    "simple_trump_eager": "Rope Team's simple strategy, trumping whenever a trump is nearly as good as the best card",
    "simple_trump_shy": "Rope Team's simple strategy, discarding instead of trumping whenever nearly as good",
    "simple_trusting": "Rope Team's simple strategy, valuing a lead by the partner's best reply alone",
    "simple_wary": "Rope Team's simple strategy, valuing a lead by the mean of the partner's possible replies",
    "simple_careless": "a deliberately weak Rope Team partner: the simple strategy with a third of its cards random",
    "search_wide": f"Rook's search with {WIDE_BUDGET['worlds']} worlds a card and {WIDE_BUDGET['bid_worlds']} a bid, "
                   "Rook's strongest measured agent",
    "search_small": "Rook's search with a small budget (2 worlds a card, 3 a bid, 4 tries): a cheap opponent",
    "heuristic_bold": "Rook's heuristic player, bidding up to its whole estimate of its points",
    "heuristic_timid": "Rook's heuristic player, stopping its bids 25 points short of its estimate",
}


def rope_team_policy(name: str):
    """The numpy policy the learned Rope Team agent ``name`` plays (``"learned"``, ``"learned_seed1"``, ...): a
    search's blueprint (``RopeTeamSearch(blueprint=rope_team_policy("learned"))``)."""
    agent = make_agent(name, "rope_team_v0")
    policies = getattr(agent, "policies", None)
    if not policies or len(policies) != 1:
        raise OptionError(f"{name!r} is not a learned agent with one Rope Team policy")
    return next(iter(policies.values()))


def game_name(game) -> str:
    """The registered env name of ``game``: a name with or without ``_v0`` ("rope_team"), or an env object (its
    ``metadata["name"]``, wrapped or not). Anything else raises ``OptionError`` saying what is expected."""
    from cardzoo.envs.registry import by_env_id, spec

    known = ", ".join(sorted(by_env_id()))
    if not isinstance(game, str):
        metadata = getattr(game, "metadata", None)
        if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str):
            raise OptionError(f"expected a game name ({known}, with or without _v0) or a "
                              f"cardzoo env, got {type(game).__name__}")
        game = metadata["name"]
    try:
        return spec(game).env_id
    except OptionError:
        raise OptionError(f"unknown game {game!r}; games: {known} (with or without _v0, or "
                          "an env object)") from None


def agent_names(game) -> list[str]:
    game = game_name(game)
    return sorted(n for n, games in AGENTS.items() if "*" in games or game in games)


def _policy_file(path: str, game: str, seed: int | None):
    """A learned agent playing the policy file at ``path`` (a ``.npz`` written by ``cardzoo train``)."""
    from .learned import LearnedAgent

    agent = LearnedAgent(path, seed=seed)
    trained_on = agent.policy.meta.get("env")
    if trained_on != game:
        raise OptionError(f"the policy {path!r} was trained on {trained_on}, not {game}")
    return agent


def _prefixed(module: str, attr: str) -> Callable:
    def make(spec: str, game, seed: int | None = None, seat: int | None = None):
        from importlib import import_module

        return getattr(import_module(module), attr)(spec, game, seed=seed, seat=seat)

    return make


# Spec prefixes read before anything else takes a colon (so ``llm:gpt-4o`` is never taken for a module): prefix ->
# factory ``(spec, game, seed=..., seat=...)``; ``llm:MODEL`` (an OpenAI-compatible endpoint) and ``hf:PATH`` (a local
# transformers model), see agents/llm. They get ``game`` as the caller gave it: an env carries the options a text
# view needs.
PREFIXED: dict[str, Callable] = {"llm": _prefixed("cardzoo.agents.llm.specs", "openai_agent"),
                                 "hf": _prefixed("cardzoo.agents.llm.specs", "local_agent")}


def make_agent(name: str, game, seed: int | None = None, seat: int | None = None):
    """The agent a spec names for ``game`` (a name, with or without ``_v0``, or an env object). A spec is a registry
    name (``AGENTS``); a path ending in ``.npz`` (a policy file); a prefix of ``PREFIXED`` (``llm:MODEL``); or
    ``module:callable`` / ``path/to/file.py:callable``, a factory ``callable(game, seat, seed)`` called afresh for
    every game (see :class:`~cardzoo.agents.factory.FactoryAgent`). ``seat`` (0, 1, ...) is the seat the agent plays,
    when the caller knows it. A spec that names nothing playable raises ``OptionError`` naming it."""
    prefix = name.split(":", 1)[0] if isinstance(name, str) and ":" in name else None
    if prefix in PREFIXED:  # before the game is reduced to its name
        return PREFIXED[prefix](name, game, seed=seed, seat=seat)
    game = game_name(game)
    if not isinstance(name, str) or not name.strip():
        raise OptionError(f"an agent spec must be a non-empty string (a registry name, a .npz policy file or "
                          f"module:callable), got {name!r}")
    if name.endswith(".npz"):
        return _policy_file(name, game, seed)
    games = AGENTS.get(name)
    if games is None and ":" in name:
        from .factory import FactoryAgent

        return FactoryAgent(name, game, seat=seat, seed=seed)
    factory = None if games is None else games.get(game, games.get("*"))
    if factory is None:
        raise OptionError(f"no agent {name!r} for {game}; agents for it: {', '.join(agent_names(game))} (or a .npz "
                          "policy file, or module:callable)")
    return factory(seed)


def is_outside(name: str) -> bool:
    """Whether a spec names code from outside the project (``module:callable``, ``file.py:callable``), which the
    benchmark plays in a process of its own (:mod:`cardzoo.agents.isolated`)."""
    if not isinstance(name, str) or ":" not in name or name in AGENTS or name.endswith(".npz"):
        return False
    return name.split(":", 1)[0] not in PREFIXED


def describe(name: str, game) -> str:
    """What the agent ``name`` plays in ``game``; for a learned agent, which policy in which setting and the
    fallback (so a fallback's result is never mistaken for a trained policy's)."""
    agent = make_agent(name, game)
    prefix = name.partition(":")[0] if ":" in name else ""
    if name in DESCRIPTIONS:
        text = DESCRIPTIONS[name]
    elif prefix in PREFIXED:
        text = {"llm": "a language model behind an OpenAI-compatible endpoint",
                "hf": "a local transformers language model"}.get(prefix, f"the agent {name}")
    else:
        text = f"the policy file {name}" if name.endswith(".npz") else f"the agent {name}"
    inner = getattr(agent, "agent", agent)  # Muted wraps the agent
    detail = getattr(inner, "description", "")
    return f"{name}: {text}" + (f". Plays: {detail}" if detail else "")


def fingerprint(name: str, game) -> str:
    """What identifies an agent's behaviour beyond its name: the weights of a learned agent, an outside agent's own
    source files (every module of its own it imports, found by a probe in a worker process, so its code is never
    imported here), "" for the others. Evaluation caches key on it, so retrained policies and edited code are never
    served stale results."""
    if is_outside(name):
        from .isolated import probe

        return probe(name, game).digest
    return agent_fingerprint(make_agent(name, game))


def agent_fingerprint(agent) -> str:
    """:func:`fingerprint` of an agent already made (not an outside agent's: its probe knows its sources)."""
    digest = getattr(agent, "digest", None)  # a search agent's blueprint weights, a belief agent's policy
    if isinstance(digest, str):
        return digest
    policies = getattr(agent, "policies", None)
    return "+".join(sorted(p.digest for p in policies.values())) if policies else ""
