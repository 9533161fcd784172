"""Which shipped policy a learned agent plays in a given setting, and how the setting's observation is fed to it.

A policy reads the observation of the setting it was trained in. Rope Team's and Rook's observations have one
layout for every level and variant, so their policies read every game as it is. Summit Rush's observation changes
with the options (players, stock, clock, talking), so a Summit Rush policy (two players, a level's own stock and
clock, silent or talking as its file says) is chosen per setting, in this order:

1. **its own setting**: the observation as it is;
2. **a talking game, silent policy**: the observation without its ``heard``/``heard_ago`` pieces (what was said is
   not read), the mask of the "say nothing" message's moves, and the move played with that message (action
   ``0 * moves + move``; the env's actions are laid out so that a silent move keeps its number);
3. **a level with no policy of its own**, the nearest level whose observation can be mapped: the same players and
   stock, timed, a clock at least as long (Expert's 30 ticks read on Hard's 40-tick ``time_left`` thermometer: the
   ticks left as they are, the extra entries 0). Talk is stripped as in 2 if needed;
4. otherwise **the fallback strategy** (the simple strategy for the registry's agents): three players, solo,
   untimed games, no round the corner (``wrap=False``, which no policy was trained with), custom stock or clock
   options. Without a fallback, such a setting raises ``OptionError``.

Pieces are mapped by their names in the observers' layouts, never by offsets. The setting is identified from the
observation's and mask's lengths among the env's level presets (``rules.LEVELS``: each level, each player count,
timed or untimed, silent or talking); a game whose custom ``stock``/``time_limit`` options give exactly a preset's
lengths is read as that preset (the lengths are all an agent is given).

An agent acts from its observation alone (``agents/base.py``), so the choice is made from it, once per setting, and
every choice made is remembered by its label (``chosen``), which the agent's description names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class Choice:
    """How one setting is played: ``policy`` (None: the fallback agent) on ``observation(obs)`` and ``mask(mask)``,
    its action put back into the env's actions by ``action``. ``label`` names it in descriptions."""

    label: str
    policy: object | None
    observation: Callable[[np.ndarray], np.ndarray]
    mask: Callable[[np.ndarray], np.ndarray]
    action: Callable[[int], int]


def _same(x):
    return x


class ExactChoice:
    """Rope Team, Rook (one layout for all their levels and variants): the policy whose observation length fits."""

    def __init__(self, policies: dict, names: dict):
        self.policies, self.names = policies, names

    def choose(self, observation: np.ndarray, action_mask: np.ndarray) -> Choice | None:
        policy = self.policies.get(observation.shape[0])
        if policy is None:
            return None
        return Choice(self._label(policy), policy, _same, _same, _same)

    def _label(self, policy) -> str:
        name = self.names[policy.observation_size]
        return f"{name} (trained on {_trained_on(policy)}; one observation layout for all levels and variants)"

    def describe(self) -> tuple[str, str]:
        """What each policy plays, and the settings left to the fallback ("": none)."""
        return "; ".join(self._label(p) for p in self.policies.values()), ""


def _trained_on(policy) -> str:
    levels = (policy.meta.get("config") or {}).get("levels") or []
    return ", ".join(levels) or "its game"


# ---------------------------------------------------------------------------- Summit Rush
@dataclass(frozen=True)
class _Setting:
    level: str
    players: int
    timed: bool
    talk: bool

    @property
    def text(self) -> str:
        who = "solo" if self.players == 1 else f"{self.players} players"
        return f"{self.level.capitalize()}, {who}, {'timed' if self.timed else 'untimed'}, " \
               f"{'talking' if self.talk else 'silent'}"


@cache
def _presets() -> dict[tuple[int, int], list[tuple[_Setting, object]]]:
    """(observation length, action count) -> the level presets with those lengths, each with its observer."""
    from cardzoo.envs.summit_rush import rules
    from cardzoo.envs.summit_rush.env import make_config
    from cardzoo.envs.summit_rush.observer import Observer

    out: dict[tuple[int, int], list] = {}
    for level, per_players in rules.LEVELS.items():
        for players in per_players:
            for timed in (True, False):
                for talk in (False, True):
                    who = {"solo": True} if players == 1 else {"players": players}
                    config = make_config(level=level, time_limit="level" if timed else None, talk=talk, **who)
                    observer = Observer(config)
                    setting = _Setting(level, players, config.ticks is not None, talk)
                    out.setdefault((observer.size, config.n_actions), []).append((setting, observer))
    return out


def _pieces(observer) -> dict[str, int]:
    return {name: size for name, size, _ in observer.layout.pieces if size}


def _identify(size: int, n_actions: int):
    """The preset setting and observer of observations of ``size`` with ``n_actions`` actions, or (None, None)
    if none (or several with different layouts) fit."""
    found = _presets().get((size, n_actions), [])
    layouts = {tuple(_pieces(o).items()) for _, o in found}
    if len(layouts) != 1:
        return None, None
    return found[0]


def _piece_map(src, dst) -> tuple[np.ndarray, np.ndarray] | None:
    """Index arrays (into the source observation, into the policy's) copying each of the policy's pieces from the
    piece of the same name, or None if some piece cannot be: missing, or of another length -- but ``time_left``,
    a thermometer, which may be shorter in the source (its ticks left copied as they are)."""
    have, want = _pieces(src), _pieces(dst)
    src_idx, dst_idx = [], []
    for name, size in want.items():
        n = have.get(name, 0)
        if n != size and not (name == "time_left" and 0 < n <= size):
            return None
        src_idx.extend(range(src.layout[name].start, src.layout[name].start + n))
        dst_idx.extend(range(dst.layout[name].start, dst.layout[name].start + n))
    return np.array(src_idx), np.array(dst_idx)


class SummitRushChoice:
    """The Summit Rush policy choice of the module docstring."""

    def __init__(self, policies: dict, names: dict):
        self.names = names
        self.trained: list[tuple[_Setting, object, object]] = []  # (setting, observer, policy) per policy
        for policy in policies.values():
            # The setting a policy was trained in: the preset of its level(s) whose lengths are the policy's. A file
            # that does not say its levels (an RLlib export, a user's) is taken as trained in every preset of its
            # lengths: they are all the policy can tell apart.
            levels = (policy.meta.get("config") or {}).get("levels") or []
            for setting, observer in _presets().get((policy.observation_size, int(policy.meta.get("actions", 0))), []):
                if not levels or setting.level in levels:
                    self.trained.append((setting, observer, policy))
        self._cache: dict[tuple[int, int, bool], Choice | None] = {}

    def choose(self, observation: np.ndarray, action_mask: np.ndarray) -> Choice | None:
        size, n_actions = observation.shape[0], action_mask.shape[0]
        setting, observer = _identify(size, n_actions)
        wrap = bool(observation[observer.layout["wrap"]][0]) if observer is not None else True
        key = (size, n_actions, wrap)
        if key not in self._cache:
            self._cache[key] = None if setting is None or not wrap else self._choose(setting, observer)
        return self._cache[key]

    def _choose(self, setting: _Setting, observer) -> Choice | None:
        from cardzoo.envs.summit_rush.rules import N_PEAKS

        best = None
        for own, _, policy in self.trained:
            if own == setting:
                return Choice(f"{self.names[policy.observation_size]} (its own setting: {own.text})", policy, _same,
                              _same, _same)
        for own, own_observer, policy in self.trained:
            if own.players != setting.players or not setting.timed or own.talk and not setting.talk:
                continue  # a talking policy in a silent game would say what nobody hears: not mapped
            mapped = _piece_map(observer, own_observer)
            if mapped is None:
                continue
            # Preference: the setting's own level, then the shortest clock that holds this one's.
            rank = (own.level != setting.level, own.talk != setting.talk, own_observer.ticks)
            if best is None or rank < best[0]:
                best = (rank, own, own_observer, policy, mapped)
        if best is None:
            return None
        _, own, own_observer, policy, (src, dst) = best
        name = self.names[policy.observation_size]
        size, moves = own_observer.size, N_PEAKS * setting.players + 2

        def observation(obs: np.ndarray) -> np.ndarray:
            out = np.zeros(size, dtype=obs.dtype)
            out[dst] = obs[src]
            return out

        how = []
        if own.level != setting.level:
            own_level = own.level.capitalize()
            how.append(f"read as {own_level}, the nearest level with a policy (same stock; its {observer.ticks}-tick "
                       f"clock's ticks left on {own_level}'s {own_observer.ticks}-tick thermometer)")
        if setting.talk and not own.talk:
            how.append("what was heard not read, the move played saying nothing")
        label = f"{name} in {setting.text}: " + "; ".join(how)
        mask = (lambda m: m[:moves]) if setting.talk and not own.talk else _same
        return Choice(label, policy, observation, mask, _same)

    def describe(self) -> tuple[str, str]:
        """Every preset setting's choice, by label; and the settings no policy plays (the fallback's)."""
        labels, others = [], []
        for found in _presets().values():
            setting, observer = found[0] if len({tuple(_pieces(o).items()) for _, o in found}) == 1 else (None, None)
            choice = None if setting is None else self._choose(setting, observer)
            if choice is None:
                others.extend(s.text for s, _ in found)
            elif choice.label not in labels:
                labels.append(choice.label)
        by_kind: dict[str, list[str]] = {}
        for text in others:
            level, kind = text.split(", ", 1)
            if level not in by_kind.setdefault(kind, []):
                by_kind[kind].append(level)
        rest = [f"{kind} ({'/'.join(levels)})" for kind, levels in by_kind.items()]
        return "; ".join(labels), "; ".join(rest + ["no round the corner (wrap=False)", "custom stock or clock"])
