"""Summit Rush as a PettingZoo Parallel environment (and its AEC form).

Summit Rush is a cooperative real-time patience on the TriPeaks layout: 28 cards in three overlapping pyramids
(rows of 3, 6 and 9 face down over a bottom row of 10 face up). Each player has a waste pile and a small stock of
their own. A free peak card goes onto any pile whose top is one rank above or below it (suits ignored, K-A round
the corner by default); a player may turn their own stock onto their own pile at any time. The team wins when all
28 peak cards are gone before the clock runs out, and loses on time or when every stock is empty and nothing fits.
Full rules and rulings: ``seeds/summit_rush.md``; simulation figures: ``seeds/summit_rush_figures.json``.

Construction::

    from cardzoo.envs import summit_rush_v0
    par = summit_rush_v0.parallel_env(level="hard")     # ParallelEnv: every player acts every tick
    aec = summit_rush_v0.env(players=3)                 # the AEC form (PettingZoo's parallel_to_aec, order enforced)

Real time as ticks. Play is simultaneous: each ``step`` is one tick, ``seconds_per_action`` seconds of the clock,
and every player submits one action. The actions land one by one in a random seat order drawn from the game's
seed (whoever touches first): if two players take the same card, the later action has no effect (a *conflict*);
a card whose pile changed under it goes onto the first other pile that takes it, starting with the player's own
pile (*redirected*), or else goes back (*bounced*). Cards uncovered during a tick turn up at once but can be played
from the next tick on. The clock has ``time_limit / seconds_per_action`` ticks (60 on Normal, 40 on Hard).

Agents: ``player_0``, ``player_1`` (and ``player_2`` with ``players=3``; only ``player_0`` with ``solo=True``).
Pile ``p`` and stock ``p`` belong to ``player_p``.

Action space: a move and a message together, ``Discrete(M * (28 * P + 2))`` per player, ``P`` = number of piles
and ``M`` = 57 messages (1 when silent): 3306 actions by default, 58 in the silent variant. Action
``message * (28 * P + 2) + move``; with message 0 (say nothing) the action is the move itself, so a silent game's
actions and a silent policy's choices mean the same in a talking game. Moves: ``pos * P + pile`` plays the free card
at peak position ``pos`` (0..27, see below) onto pile ``pile``; ``28 * P`` turns the player's own stock onto their own
pile; ``28 * P + 1`` waits. Wait is always legal, so the mask is never empty. ``action_name(a)`` names an action.

Talking (``talk=True``, the default; ``silent=True`` or ``talk=False`` is the "silent summit" variant). Besides
their move, each player may say one message a tick (``rules.MESSAGES``): 0 nothing; 1 "I'll turn"; 2 "don't turn";
3..15 "I need a <rank>" (2..A); 16..28 "<rank> on my pile"; 29..56 "I'm taking position <pos>". Messages are cheap
talk: they never change the cards and are never illegal (the mask allows every message with every legal move; a
claim on a card that is gone is just wrong). A message said in one tick is heard from the next tick on (speech takes
a moment), by every player, in the ``heard``/``heard_ago`` pieces of the observation; the record keeps the joint
actions, so a replay says the same. Why one joint ``Discrete``: PettingZoo's tools sample masked actions with
``action_space.sample(mask)`` (a ``MultiDiscrete`` would need a tuple of masks, which SB3's MaskablePPO and RLlib's
masked module do not read), and MaskablePPO, RLlib's action-masking module and ``parallel_to_aec`` all take a
``Discrete`` with a flat mask unchanged. Peak positions, row by row::

    row 0 (3, face down)       0           1           2
    row 1 (6, face down)     3   4       5   6       7   8
    row 2 (9, face down)   9  10  11  12  13  14  15  16  17
    row 3 (10, face up)  18  19  20  21  22  23  24  25  26  27

Position ``9 + k`` is covered by ``18 + k`` and ``19 + k``; position ``3 + j`` by ``9 + k`` and ``10 + k`` with
``k = j + j // 2``; position ``i`` by ``3 + 2i`` and ``4 + 2i`` (``rules.COVERED_BY``). A card is free exactly
when it is face up; a face-down card turns up as soon as both cards covering it are gone.

Observation space: ``Dict(observation=Box(0, 1, (n,), int8), action_mask=Box(0, 1, (M * (28 * P + 2),), int8))``.
Every player sees the same public table and hears the same messages; only the ``seat`` piece differs. Face-down
peak cards, unturned stock cards and the cards set aside never appear. ``env.describe(obs["observation"])`` gives the
same in words. Slices for the default options (two players, Normal, talking; other options change the sizes, and
the silent variant has no ``heard``/``heard_ago`` pieces: 732 entries; ``env.observer.layout.table()`` prints
them)::

    slice     piece            meaning
       0:28   peak_gone        1 if the card at peak position i has been played
      28:56   peak_down        1 if position i holds a face-down card
      56:84   peak_up          1 if position i holds a face-up (free) card
      84:448  peak_rank        rank 2..A of each face-up peak card (13 per position; zeros otherwise)
     448:560  peak_suit        suit C,D,H,S of each face-up peak card (4 per position)
     560:586  pile_rank        rank 2..A of the top card of each pile (13 per pile, pile p = player_p's)
     586:594  pile_suit        suit C,D,H,S of the top card of each pile (4 per pile)
     594:646  on_piles         every card lying in any waste pile (card c = suit * 13 + rank)
     646:668  stock_left       cards left in each player's stock, a thermometer of 11 per player
     668:728  time_left        ticks left on the clock, a thermometer of 60 (empty if untimed)
     728:840  heard            each player's last message, one-hot over messages 1..56 (talk)
     840:860  heard_ago        ticks since each said it, one-hot 0..9 (9: or more; talk)
     860:861  timed            1 if the game has a time limit
     861:863  seat             the viewer's seat, one-hot (its pile and stock have the same index)
     863:864  wrap             1 if round the corner (K-A) is on
    (864 entries in all)

State: ``state()`` is the global state for centralised critics (``state_space``): the public table (the
observation layout with the ``seat`` piece all zeros), then the cards nobody sees: each face-down peak card (rank
13 + suit 4 per position), each player's next stock card and the cards left in each stock, and the cards set aside
(``env.observer.state_layout.table()`` prints the slices). It holds hidden cards: train critics on it, never act
on it.

Rewards: +1 to every player on a win, -1 to every player on a loss, 0 on every other tick. The game is won the
moment the 28th peak card lands: the rest of that tick's actions do not land (they neither lower the score nor
count as conflicts).

Truncation: a game still running after ``max_ticks`` ticks (1000 by default) is cut off: ``truncations`` is True
for everyone, the reward 0 and the outcome "tick_limit" (it was neither won nor lost; evaluation counts it as not
won). Untimed games need it: a policy that only waits would otherwise never end. So every episode ends within
``min(max_ticks, clock ticks)`` steps.

Info: empty during play; at the end every agent's info holds ``outcome`` ("win", "time", "stuck", "tick_limit";
"illegal" under ``illegal_action="penalize"``), ``ticks`` used, ``score`` (cards left in all stocks on a win, 0 on a
loss), ``conflicts`` (actions on a card already taken that tick), ``redirected`` and ``bounced`` cards, ``turned``
(stock cards turned), ``peaks_left``, ``illegal_waits`` (under ``illegal_action="wait"``), ``messages`` said (in
talking games) and, for a penalised illegal action, ``illegal_by`` (the agents who tried one).

Options (keyword arguments; unknown names or bad values raise ``OptionError``):

    level              "normal" (12 stock each / 8 with 3 players, 180 s; default), "hard" (10 / 6, 120 s),
                       "expert" (10 / 6, 90 s; a ruling, the document leaves it undefined)
    players            2 (default) or 3
    solo               True: plain TriPeaks, one player, one pile, a 24-card stock, untimed unless time_limit is given
                       (not combined with players)
    stock              stock cards per player, overriding the level (players * stock <= 24)
    time_limit         seconds on the clock, overriding the level; None = untimed (the document's simulation);
                       from seconds_per_action up to 1000 ticks' worth
    seconds_per_action seconds one tick takes, 0.1..60, default 3.0
    max_ticks          1..100000, default 1000: the game is cut off (truncated) after this many ticks
    talk               True (default): players may say one message a tick besides their move
    silent             True: the "silent summit" variant (the same as talk=False)
    wrap               False: no round the corner (K and A are not neighbours)
    illegal_action     "penalize" (default): an in-range action the mask forbids ends the game as a loss for
                       everyone (outcome "illegal") with an IllegalActionWarning (PettingZoo's classic-game
                       convention); the record keeps the tick, so a replay ends the same way;
                       "raise": it raises IllegalActionError and changes nothing (the strict mode);
                       "wait": it is played as a wait and counted in info["illegal_waits"]
    render_mode        "ansi", "human" or "rgb_array"

Reset options: ``deck``, 52 two-character card strings such as "TS": ``deck[0:28]`` the peaks by position (row by
row, as above), then each player's stock in turning order (``deck[28:28+S]`` player_0's, the next ``S``
player_1's, ...; the first card of each starts that player's pile), then the cards set aside (4 on Hard). The
who-touches-first order still comes from the seed. (The key ``"options"``, which PettingZoo's API tests pass to
probe the signature, is ignored with an ``UnknownResetOptionWarning``; any other unknown key raises ``OptionError``.)

Seeding: ``reset(seed=s)`` plays game ``s``; ``reset()`` plays the next game of a stream seeded by the last
explicit seed. ``game_record()`` holds the game's own seed and every tick's actions; ``cardzoo.envs.replay``
rebuilds it.

Version history:
    v0 (cardzoo 0.2): illegal moves follow PettingZoo's classic-game convention by default
        (``illegal_action="penalize"``; before, "raise" was the default); ``state()`` now holds the hidden cards
        too (before: the public table only); records keep illegal moves, so replays end the same way; the game
        ends the moment the 28th card lands (before, the rest of that tick still landed); ``max_ticks`` cuts off
        games that would never end; the clock options are bounded; talking is on by default (the document's game:
        a message channel, the joint move-and-message action space and the ``heard`` pieces), ``silent=True``
        gives the old spaces and games exactly.
    v0 (cardzoo 0.1): first release.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from ..common.cards import card_pretty, parse_deck
from ..common.errors import GameOverError, IllegalActionError, IllegalActionWarning, NotResetError, OptionError
from ..common.layout import Layout
from ..common.options import (
    PROBE_KEY,
    check_reset_options,
    flag,
    int_in,
    number,
    one_of,
    plain,
    reject_unknown,
    seed_value,
    shown,
)
from ..common.render import show
from ..common.wrappers import OrderEnforcing
from . import render, rules
from .observer import Observer

ENV_OPTIONS = ("level", "players", "solo", "stock", "time_limit", "seconds_per_action", "wrap", "max_ticks",
               "talk", "silent", "illegal_action", "render_mode")
RESET_OPTIONS = ("deck",)
# the action space's size in each variant: moves per player count, times the messages when talking
ACTION_SIZES = frozenset(rules.Config(players=p, talk=t).n_actions for p in rules.ORDERS for t in (False, True))
_CONFIG_OPTIONS = ("level", "players", "solo", "stock", "time_limit", "seconds_per_action", "wrap", "max_ticks", "talk",
                   "silent")
ILLEGAL_ACTION_MODES = ("penalize", "raise", "wait")


# Bounds of the clock options: a tick is a human action (a tenth of a second to a minute), and the clock's ticks are
# a thermometer in the observation, so their number is bounded too.
SECONDS_PER_ACTION = (0.1, 60.0)
MAX_CLOCK_TICKS = 1000
MAX_TICKS_RANGE = (1, 100_000)


def make_config(level: str = "normal", players: int | None = None, solo: bool = False, stock=None,
                time_limit="level", seconds_per_action: float = 3.0, wrap: bool = True,
                max_ticks: int = rules.MAX_TICKS, talk=None, silent=None) -> rules.Config:
    """The rules for a set of options (checked; bad values raise ``OptionError``)."""
    level = one_of("level", level, rules.LEVELS)
    if flag("solo", solo):
        if players is not None:
            raise OptionError(f"solo=True is one player; do not combine it with players={shown(players)}")
        players = 1
    else:
        players = int_in("players", 2 if players is None else players, 2, 3)
    base_stock, base_time = rules.LEVELS[level][players]
    stock = base_stock if stock is None else int_in("stock", stock, 1, 24 // players)
    spa = number("seconds_per_action", seconds_per_action, *SECONDS_PER_ACTION)
    if isinstance(time_limit, str) and time_limit == "level":
        time_limit = base_time
    elif time_limit is not None:
        time_limit = number("time_limit", time_limit, spa, spa * MAX_CLOCK_TICKS)
    if talk is not None:
        talk = flag("talk", talk)
    if silent is not None:
        if talk is not None and flag("silent", silent) == talk:
            raise OptionError(f"silent={silent!r} contradicts talk={talk!r} (silent=True is talk=False)")
        talk = not flag("silent", silent)
    talk = True if talk is None else talk
    config = rules.Config(players=players, stock=stock, time_limit=time_limit, seconds_per_action=spa,
                          wrap=flag("wrap", wrap), max_ticks=int_in("max_ticks", max_ticks, *MAX_TICKS_RANGE),
                          talk=talk)
    if config.ticks is not None and not 1 <= config.ticks <= MAX_CLOCK_TICKS:
        raise OptionError(f"time_limit={time_limit} with seconds_per_action={spa} is {config.ticks} whole actions; the "
                          f"clock must hold 1..{MAX_CLOCK_TICKS} actions")
    return config


class SummitRushEnv(ParallelEnv):
    __doc__ = __doc__
    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "summit_rush_v0",
                "is_parallelizable": True, "render_fps": 2}
    env_name = "summit_rush_v0"

    def __init__(self, **options: Any):
        reject_unknown(options, ENV_OPTIONS, "option")
        game = {k: options[k] for k in _CONFIG_OPTIONS if k in options}
        self.config = make_config(**game)
        self.render_mode = one_of("render_mode", options.get("render_mode"), [None, *self.metadata["render_modes"]])
        self.illegal_action = one_of("illegal_action", options.get("illegal_action", "penalize"),
                                     ILLEGAL_ACTION_MODES)
        # Plain copies, with the effective illegal-move mode, so a record replays the same under any default.
        self._options = {**plain({k: v for k, v in options.items() if k != "render_mode"}),
                         "illegal_action": self.illegal_action}
        n = self.config.players
        self.possible_agents = [f"player_{p}" for p in range(n)]
        self.agents: list[str] = []
        self._seat = {a: p for p, a in enumerate(self.possible_agents)}
        self._agent_set = frozenset(self.possible_agents)  # every agent plays every tick until the common end
        self.observer = Observer(self.config)
        self.n_actions = self.config.n_actions
        self.n_moves = self.config.n_moves
        self.TURN = rules.N_PEAKS * n
        self.WAIT = self.TURN + 1
        self.messages_said = 0
        self._mask_layout = Layout(("play", rules.N_PEAKS * n, "pos * P + pile"), ("turn", 1, ""), ("wait", 1, ""))
        obs_space = spaces.Dict({
            "observation": spaces.Box(0, 1, (self.observer.size,), np.int8),
            "action_mask": spaces.Box(0, 1, (self.n_actions,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        # The global state for centralised critics: the public table and the cards nobody sees.
        self.state_space = spaces.Box(0, 1, (self.observer.state_layout.size,), np.int8)
        self.action_spaces = {a: spaces.Discrete(self.n_actions) for a in self.possible_agents}
        self._seed_stream = np.random.default_rng()
        self._record: dict[str, Any] | None = None
        self.game: rules.State | None = None
        self.illegal_waits = 0
        self.outcome_info: dict[str, Any] = {}

    # ----------------------------------------------------------------- PettingZoo API
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None):
        if options is not None and not isinstance(options, dict):
            raise OptionError(f"reset options must be a dict, got {type(options).__name__}")
        check_reset_options(options or {}, RESET_OPTIONS)
        # The record keeps its own JSON-ready copy: a caller reusing its deck list cannot change a recorded game.
        reset_options = plain({k: v for k, v in (options or {}).items() if k != PROBE_KEY})
        deck = None
        if "deck" in reset_options:  # checked before anything changes, so a bad deck leaves the game intact
            deck = parse_deck(reset_options["deck"])
        if seed is None:
            seed = int(self._seed_stream.integers(2**63))
        else:
            seed = seed_value(seed)
            self._seed_stream = np.random.default_rng([seed, 0x5EED])
        self.game = rules.deal(self.config, seed, deck)
        self._record = {"env": self.env_name, "kind": "parallel", "options": dict(self._options), "seed": seed,
                        "reset_options": reset_options, "actions": []}
        self.agents = list(self.possible_agents)
        self.illegal_waits = self.messages_said = 0
        self.outcome_info = {}
        return self._observations(), {a: {} for a in self.agents}

    def step(self, actions: dict[str, Any]):
        s = self.game
        if s is None:
            raise NotResetError("step() before reset(): call reset() first to start a game")
        if not self.agents:
            raise GameOverError(f"the game is over ({self.outcome_info.get('outcome')}); call reset() to play again")
        given, seats_actions = self._check_actions(actions)
        self._record["actions"].append(given)  # as given, illegal ones too: a replay must end the same way
        if seats_actions is None:  # an illegal action under "penalize": the game ends as a loss
            s.outcome = rules.ILLEGAL
            self.outcome_info = {**self._final_info(rules.ILLEGAL), **self.outcome_info}
            return self._finish(-1.0)
        agents = self.agents
        moves = seats_actions
        if self.config.talk:
            moves = []
            for seat, action in enumerate(seats_actions):
                message, move = divmod(action, self.n_moves)
                if message:
                    rules.say(s, seat, message)
                    self.messages_said += 1
                moves.append(move)
        rules.play_tick(s, moves)
        if s.outcome is not None:
            self.outcome_info = self._final_info(s.outcome)
            return self._finish(rules.rewards(s), truncated=s.outcome == rules.TICK_LIMIT)
        return (self._observations(), dict.fromkeys(agents, 0.0), dict.fromkeys(agents, False),
                dict.fromkeys(agents, False), {a: {} for a in agents})

    def _finish(self, reward: float, truncated: bool = False):
        agents = self.agents
        obs = self._observations()
        self.agents = []
        return (obs, dict.fromkeys(agents, reward), dict.fromkeys(agents, not truncated),
                dict.fromkeys(agents, truncated), {a: dict(self.outcome_info) for a in agents})

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        # The table is public: build the shared vector and mask once, then copy them per seat and set the seat's
        # own entries (its seat bit; "turn" if its stock holds a card). Two bit-to-array conversions per tick.
        s = self.game
        plays = rules.play_bits(s)
        shared = self.observer.layout.to_array(self.observer.public_bits(s))
        running = s.outcome is None
        mask = self._mask_layout.to_array(plays | 1 << self.WAIT if running else 0)
        seat_entry, turn, stock_left = self.observer.seat_entries, self.TURN, s.stock_left
        messages = self.config.n_messages
        out = {}
        for p, agent in enumerate(self.possible_agents):
            obs = shared.copy()
            obs[seat_entry[p]] = 1
            m = mask.copy()
            if running and stock_left[p]:
                m[turn] = 1
            if messages > 1:  # any message goes with any legal move
                m = np.tile(m, messages)
            out[agent] = {"observation": obs, "action_mask": m}
        return out

    def _check_actions(self, actions) -> tuple[list[int], list[int] | None]:
        """Every seat's action as an int as given, and the actions to play, all checked before anything is
        applied: ``None`` to play for a penalised illegal action; illegal actions become waits under
        ``illegal_action="wait"``; raises otherwise."""
        if not isinstance(actions, dict):
            raise IllegalActionError(f"step() takes a dict of one action per agent, got {type(actions).__name__}")
        if actions.keys() != self._agent_set:
            unknown = [a for a in actions if a not in self._seat]
            missing = [a for a in self.agents if a not in actions]
            parts = []
            if missing:
                parts.append(f"missing actions for {missing}")
            if unknown:
                parts.append(f"unknown agents {unknown}")
            raise IllegalActionError(f"step() needs exactly one action for each of {self.agents}: "
                                     + "; ".join(parts))
        given, out = [], []
        illegal: list[str] = []
        for agent in self.agents:
            action, legal = self._checked(agent, actions[agent])
            given.append(action)
            if not legal:  # a wait (under "wait"); what the player said still counts
                illegal.append(agent)
                action = action - action % self.n_moves + self.WAIT
            out.append(action)
        if illegal:
            if self.illegal_action == "penalize":
                warnings.warn(f"illegal move by {', '.join(illegal)}; the game ends as a loss for the team. Read "
                              "obs['action_mask'] for the legal moves, or use illegal_action='raise' to get an error "
                              "instead.", IllegalActionWarning, stacklevel=3)
                self.outcome_info = {"illegal_by": illegal}
                return given, None
            self.illegal_waits += len(illegal)
        return given, out

    def check_action(self, agent: str, action) -> int | None:
        """``action`` as an int if it is legal for ``agent`` now. An illegal one raises
        :class:`IllegalActionError` (naming the agent, the action and the legal alternatives) under
        ``illegal_action="raise"`` and gives ``None`` otherwise; a malformed or out-of-range one always raises."""
        action, legal = self._checked(agent, action)
        return action if legal else None

    def _checked(self, agent: str, action) -> tuple[int, bool]:
        """``action`` as an int and whether it is legal; raises as :meth:`check_action` says."""
        if self.game is None or not self.agents:
            raise GameOverError("no game is running; call reset() to play")
        if agent not in self._seat:
            raise IllegalActionError(f"unknown agent {agent!r}; agents: {self.agents}")
        n = self.n_actions
        if type(action) is not int:
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = int(action)
            if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
                raise IllegalActionError(f"{agent}'s action must be an integer in 0..{n - 1}, got {action!r}")
            action = int(action)
        if not 0 <= action < n:
            raise IllegalActionError(f"{agent}'s action {action} is out of range 0..{n - 1}")
        seat = self._seat[agent]
        message, move = divmod(action, self.n_moves)
        if rules.is_legal(self.game, seat, move):
            return action, True
        if self.illegal_action != "raise":
            return action, False
        legal = rules.legal_bits(self.game, seat)
        names = [f"{a} ({self.action_name(a)})" for a in range(self.n_moves) if legal >> a & 1]
        talk = (f" (moves; with message m the action is m * {self.n_moves} + move, and every message goes with any "
                f"legal move)" if self.config.talk else "")
        raise IllegalActionError(
            f"{agent} cannot play action {action} ({self.action_name(action)}): "
            f"{self._why_illegal(seat, move)}. Legal actions{talk}: {', '.join(names)}")

    def _final_info(self, outcome: str) -> dict[str, Any]:
        s = self.game
        info = {"outcome": outcome, "ticks": s.tick, "score": s.score if outcome == rules.WIN else 0,
                "conflicts": s.conflicts, "redirected": s.redirected, "bounced": s.bounced, "turned": s.turned,
                "peaks_left": s.present.bit_count(), "illegal_waits": self.illegal_waits}
        if self.config.talk:
            info["messages"] = self.messages_said
        return info

    # ----------------------------------------------------------------- names and errors
    def action_name(self, action: int) -> str:
        message, move = divmod(action, self.n_moves)
        said = f", saying \"{rules.MESSAGES[message]}\"" if message else ""
        if move == self.WAIT:
            return "wait" + said
        if move == self.TURN:
            return "turn own stock" + said
        pos, pile = divmod(move, self.config.players)
        s = self.game
        card = card_pretty(s.peaks[pos]) if s is not None and s.up >> pos & 1 else "card"
        return f"{card} at position {pos} onto pile {pile}{said}"

    def _why_illegal(self, seat: int, action: int) -> str:
        s = self.game
        if action == self.TURN:
            return "their stock is empty"
        pos, pile = divmod(action, self.config.players)
        if not s.present >> pos & 1:
            return f"position {pos} is empty"
        if not s.up >> pos & 1:
            return f"position {pos} is face down (covered)"
        return f"it does not fit the {card_pretty(s.tops[pile])} on pile {pile}"

    # ----------------------------------------------------------------- extras
    def state(self) -> np.ndarray:
        """The global state for centralised critics: the public table (the observation layout with the ``seat``
        piece all zeros) and the cards nobody sees (see the docstring). Train critics on it, never act on it."""
        if self.game is None:
            raise NotResetError("state() before reset(): call reset() first to start a game")
        return self.observer.state(self.game)

    def describe(self, vector: np.ndarray) -> dict[str, Any]:
        """An observation vector in words (see :meth:`Observer.describe`)."""
        return self.observer.describe(vector)

    def legal_actions(self, agent: str) -> list[int]:
        if self.game is None:
            raise NotResetError("legal_actions() before reset(): call reset() first to start a game")
        if agent not in self._seat:
            raise IllegalActionError(f"unknown agent {agent!r}; agents: {self.possible_agents}")
        bits = rules.legal_bits(self.game, self._seat[agent])
        moves = [a for a in range(self.n_moves) if bits >> a & 1]
        return [m * self.n_moves + a for m in range(self.config.n_messages) for a in moves]

    def game_record(self) -> dict[str, Any]:
        """The game so far as plain JSON-ready data: env name, kind, options, seed, reset options, tick actions."""
        if self._record is None:
            raise NotResetError("game_record() before reset(): no game has been started; call reset() first")
        record = plain(self._record)
        record["actions"] = [dict(zip(self.possible_agents, tick, strict=True)) for tick in record["actions"]]
        return record

    def render(self):
        return show(self.render_mode, self.game is not None, lambda: render.text(self.game),
                    lambda: render.image(self.game))

    def close(self) -> None:
        pass


def parallel_env(**options) -> SummitRushEnv:
    return SummitRushEnv(**options)


def describe(vector: np.ndarray, **options) -> dict[str, Any]:
    """An observation vector in words, like the other games' ``describe``. Summit Rush's layout depends on the
    options (players, stock, clock, talk), so pass the ones the game was made with (none for the default game)."""
    observer = Observer(make_config(**{k: v for k, v in options.items() if k in _CONFIG_OPTIONS}))
    vector = np.asarray(vector)
    if vector.shape != (observer.size,):
        raise OptionError(f"an observation of shape {vector.shape} is not one of a game with options {options} "
                          f"(those have {observer.size} entries): pass the options the game was made with")
    return observer.describe(vector)


class SummitRushAEC(parallel_to_aec_wrapper):
    """PettingZoo's ``parallel_to_aec`` conversion, checking each action as it is given: a bad action raises at
    once, naming its agent, instead of when the last agent of the tick has acted, and leaves the tick as it was."""

    def observe(self, agent):
        if self.env.game is None:  # PettingZoo's conversion has no observations yet: an AttributeError
            raise NotResetError("observe() before reset(): call reset() first to start a game")
        return super().observe(agent)

    def last(self, observe: bool = True):
        if self.env.game is None:
            raise NotResetError("last() before reset(): call reset() first to start a game")
        return super().last(observe)

    def step(self, action) -> None:
        if self.env.game is None:
            raise NotResetError("step() before reset(): call reset() first to start a game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise GameOverError(f"the game is over ({self.env.outcome_info.get('outcome')}); {agent} may only "
                                    "step(None) to leave, or call reset() to play again")
        elif action is None:
            raise IllegalActionError(f"{agent} is to act in this tick and must choose an action (wait is "
                                     f"{self.env.WAIT}); None is only for agents whose game is over")
        elif self.env.check_action(agent, action) is None and self.env.illegal_action == "penalize":
            # PettingZoo's convention ends the game at the illegal move: the agents still to act in this tick
            # wait, which cannot change the penalised ending.
            super().step(action)
            while self.env.agents:
                super().step(self.env.WAIT)
            return
        super().step(action)


def raw_env(**options) -> SummitRushAEC:
    return SummitRushAEC(SummitRushEnv(**options))


def env(**options) -> OrderEnforcing:
    return OrderEnforcing(raw_env(**options))


# Every constructor's help() is the environment's documentation page, as for the other games' raw_env.
_FORMS = {
    parallel_env: "``parallel_env(**options)``: the Parallel environment (every player acts every tick).",
    raw_env: "``raw_env(**options)``: the AEC form of ``parallel_env`` (no order enforcing): players act one after "
             "another within a tick, and the tick resolves when the last of them has acted.",
    env: "``env(**options)``: the AEC form in an order-enforcing wrapper (errors for a step before reset or after "
         "the end).",
}
for _constructor, _form in _FORMS.items():
    _constructor.__doc__ = f"{_form}\n\n{__doc__}"
