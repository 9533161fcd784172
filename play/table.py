"""A game with people at it: agents in some seats, people (``"human"``) in the others.

``Table.open`` deals a game: Rope Team and Rook are turn-based (``TurnTable``: the agents move until a person is to
move), Summit Rush is played in ticks (``TickTable``: every seat acts every tick; a person who gives no move waits).
The env runs strict (``illegal_action="raise"``), so a person's illegal move raises ``IllegalActionError`` and
changes nothing. Each person's seat has a ``SeatView`` (``views.py``) fed with that seat's observations only.

``entry()`` is what is saved for a played game (``records.py``): the env's game record, who sat where (a person,
or an agent's name and policy digest) and how it ended.
"""

from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np

from cardzoo.agents.registry import fingerprint, make_agent
from cardzoo.agents.seeding import agent_seed
from cardzoo.envs.common.errors import GameOverError, IllegalActionError, OptionError
from cardzoo.envs.common.record import PARALLEL_ENVS, make_env

from .views import SeatView, make_view, outcome_text, result

HUMAN = "human"


class DeafAgent:
    """A silent policy at a talking Summit Rush table: it acts on the observation without the heard pieces and
    says nothing (message 0), as in the silent games it was trained on."""

    def __init__(self, agent, layout, n_moves: int):
        self.agent = agent
        keep = np.ones(layout.size, dtype=bool)
        keep[layout["heard"]] = keep[layout["heard_ago"]] = False
        self.keep, self.n_moves = keep, n_moves

    def reset(self, seed: int | None = None) -> None:
        self.agent.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return self.agent.act(observation[self.keep], action_mask[: self.n_moves])


class Table:
    """One game: ``players`` names each seat's player (an agent name or ``"human"``), in seat order."""

    def __init__(self, game: str, options: dict[str, Any], players: list[str], seed: int,
                 reset_options: dict[str, Any] | None = None):
        self.game, self.options, self.seed = game, dict(options), seed
        self.env = self._make_env(game, {**options, "illegal_action": "raise"})
        self.seats = list(self.env.possible_agents)
        if len(players) != len(self.seats):
            raise OptionError(f"{len(players)} players for the {len(self.seats)} seats of {game}")
        if HUMAN not in players:
            raise OptionError(f"nobody sits at this table: put {HUMAN!r} in at least one seat")
        self.players = list(players)
        self.humans = [i for i, p in enumerate(players) if p == HUMAN]
        # the env, not its name: an agent that reads the options (a language model's text view) gets them
        self.agents = {i: self._agent(make_agent(p, self.env, seed=agent_seed(seed, i), seat=i))
                       for i, p in enumerate(players) if p != HUMAN}
        self.steps = 0  # moves (turn-based) or ticks so far: public, and how a page tells its view is stale
        self.started = time.time()
        self.info: dict[str, Any] | None = None  # the end-of-game info, once the game is over
        self.views: dict[int, SeatView] = {}
        self._reset(reset_options)
        self._try_agents()

    def _try_agents(self) -> None:
        """Ask a copy of each agent that may move now for its move, so that an agent that cannot play these options
        (a learned policy trained on other levels) is an error when the game is set up, not in its middle."""
        for i, agent in self.agents.items():
            if getattr(agent, "checked_when_made", False):  # a language model: its text view checked the options
                continue
            obs = self._observe(i)
            if obs["mask"].any():
                try:
                    copy.deepcopy(agent).act(obs["observation"], obs["mask"])
                except OptionError as err:
                    raise OptionError(f"the agent {self.players[i]!r} cannot play {self.game} with options "
                                      f"{self.options}: {err}") from None

    @staticmethod
    def open(game: str, options: dict[str, Any], players: list[str], seed: int, **kw) -> Table:
        return (TickTable if game in PARALLEL_ENVS else TurnTable)(game, options, players, seed, **kw)

    @staticmethod
    def _make_env(game: str, options: dict[str, Any]):
        return make_env(game, **options)

    def _agent(self, agent):
        return agent

    def _reset(self, reset_options) -> None:
        raise NotImplementedError

    @property
    def over(self) -> bool:
        return self.info is not None

    def outcome(self, seat: int) -> str | None:
        return None if self.info is None else outcome_text(self.game, self.info, seat)

    def entry(self, where: str, **extra: Any) -> dict[str, Any]:
        """The saved form of this game: its record, who sat where, and how it ended (``None`` if unfinished)."""
        seats = {}
        for i, name in enumerate(self.players):
            seats[self.seats[i]] = {"player": HUMAN} if name == HUMAN else {
                "agent": name, "policy": fingerprint(name, self.game)}
            agent = self.agents.get(i)
            if hasattr(agent, "decisions") and hasattr(agent, "settings"):  # a language model: every decision
                seats[self.seats[i]].update(settings=agent.settings(), decisions=agent.decisions)
        return {
            "cardzoo_game": 1, "where": where, "record": self.env.unwrapped.game_record(), "seats": seats,
            "finished": self.over, "info": self.info,
            "results": None if self.info is None else {
                self.seats[i]: result(self.game, self.info, i) for i in self.humans},
            "started": _iso(self.started), "saved": _iso(time.time()), **extra,
        }


def refusal(err: Exception) -> str:
    """The env's reason for refusing a person's move, addressed to them (without the list of legal actions)."""
    text = str(err)
    if "cannot play action" in text:
        text = "not now: " + text.split("): ", 1)[-1].split(". Legal actions")[0]
    return text.replace(" their ", " your ").replace(" they ", " you ")


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


class TurnTable(Table):
    """Rope Team and Rook: one seat moves at a time."""

    def _reset(self, reset_options) -> None:
        self.env.reset(seed=self.seed, options=reset_options)
        for i in self.humans:
            self.views[i] = make_view(self.game, self.env, i)
            self.views[i].observe(**self._observe(i))

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        obs = self.env.observe(self.seats[seat])
        return {"observation": obs["observation"], "mask": obs["action_mask"]}

    @property
    def to_move(self) -> int | None:
        return None if self.over else self.seats.index(self.env.agent_selection)

    def play(self, seat: int, action: int) -> None:
        """A person's move for ``seat`` (raises ``IllegalActionError`` if it is not theirs to make or not legal)."""
        if self.over:
            raise GameOverError(f"the game is over: {self.outcome(seat)}")
        if self.to_move != seat:
            raise IllegalActionError(f"it is not your turn: {self.seats[self.to_move]} is to move")
        self._step(action)

    def advance(self) -> None:
        """Let the agents move until a person is to move or the game is over."""
        while not self.over and self.to_move not in self.humans:
            seat = self.to_move
            obs = self.env.observe(self.seats[seat])
            self._step(self.agents[seat].act(obs["observation"], obs["action_mask"]))

    def _step(self, action: int) -> None:
        seat = self.to_move
        self.env.step(action)  # strict: an illegal action raises here and changes nothing
        self.steps += 1
        for i, view in self.views.items():
            view.saw(seat, int(action))
            view.observe(**self._observe(i))
        agent = self.env.agent_selection
        if self.env.terminations[agent] or self.env.truncations[agent]:
            self.info = dict(self.env.infos[agent])


class TickTable(Table):
    """Summit Rush: every seat acts every tick; the agents act on the start-of-tick observation."""

    @staticmethod
    def _make_env(game: str, options: dict[str, Any]):
        from cardzoo.envs.registry import spec

        return spec(game).make(parallel=True, **options)

    def _agent(self, agent):
        policies = getattr(agent, "policies", None)
        size = self.env.observation_space(self.seats[0])["observation"].shape[0]
        if self.env.config.talk and policies and size not in policies:  # a learned policy trained on silent games
            return DeafAgent(agent, self.env.observer.layout, self.env.n_moves)
        return agent  # learned_talk (trained in talking games) hears and speaks

    def _reset(self, reset_options) -> None:
        self.obs, _ = self.env.reset(seed=self.seed, options=reset_options)
        for i in self.humans:
            self.views[i] = make_view(self.game, self.env, i)
            self.views[i].observe(**self._observe(i))

    def _observe(self, seat: int) -> dict[str, np.ndarray]:
        obs = self.obs[self.seats[seat]]
        return {"observation": obs["observation"], "mask": obs["action_mask"]}

    def check(self, seat: int, action: int) -> int:
        """``action`` for ``seat`` if legal now; raises ``IllegalActionError`` naming the problem otherwise."""
        if self.over:
            raise GameOverError(f"the game is over: {self.outcome(seat)}")
        return self.env.check_action(self.seats[seat], action)

    def tick(self, moves: dict[int, int]) -> None:
        """One tick: ``moves`` holds the people's actions (a person without one waits); the agents act too."""
        actions = {}
        for i, seat in enumerate(self.seats):
            if i in self.agents:
                obs = self.obs[seat]
                actions[seat] = self.agents[i].act(obs["observation"], obs["action_mask"])
            else:
                actions[seat] = self.check(i, moves.get(i, self.env.WAIT))
        self.obs, _, _, _, infos = self.env.step(actions)
        self.steps += 1
        for i, view in self.views.items():
            view.observe(**self._observe(i))
        if not self.env.agents:
            self.info = dict(infos[self.seats[0]])
