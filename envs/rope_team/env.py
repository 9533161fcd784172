"""Rope Team as a PettingZoo AEC environment.

Rope Team is a cooperative trick-taking game for two. A coin starts on the middle card (the camp) of a ridge of
nine cards; the winner of each trick pulls it towards their own end by the steps of both cards (2-7: 0, 8-J: 1,
Q-A: 2). A face-down card the coin stops on is turned up and its suit becomes trumps; pulling beyond an end is a
fall unless a safety rope is left. The team wins when all eight ridge cards are face up, within three deals.
Full rules and rulings: ``seeds/rope_team.md``.

Construction::

    from cardzoo.envs import rope_team_v0
    env = rope_team_v0.env(level="hard")          # wrapped (order enforcing)
    raw = rope_team_v0.raw_env(open_hands=True)   # unwrapped

Agents: ``player_0`` and ``player_1``. Ridge position 0 is ``player_0``'s end, position 8 is ``player_1``'s end.

Action space: ``Discrete(52)``; action ``c`` plays card ``c`` (``suit * 13 + rank``, suits C D H S, ranks 2..A;
``cardzoo.envs.common.cards.card_str(c)`` names it). Only the player to move acts.

Observation space: ``Dict(observation=Box(0, 1, (464,), int8), action_mask=Box(0, 1, (52,), int8))``. The mask
marks the legal cards of the player to move (all zeros for the other player, and for both once the game is over,
a penalised illegal move included). The vector holds exactly what the
viewer may see, from the viewer's side of the table (position 0 = the viewer's own end); earlier deals' cards are
not in it because they are all reshuffled into the next deal. ``describe(obs["observation"])`` gives the same in
words. Slices::

    slice     piece            meaning
       0:52   hand             cards in the viewer's hand
      52:104  partner_hand     cards in the partner's hand (open_hands only; zeros otherwise)
     104:156  played_self      cards the viewer has played in this deal
     156:208  played_partner   cards the partner has played in this deal
     208:260  led              the card led to the current trick, if one has been led
     260:261  led_by_self      1 if the viewer led that card
     261:270  ridge_up         face-up ridge cards, from the viewer's end (0) to the partner's end (8)
     270:387  ridge_rank       rank 2..A of each face-up ridge card (13 per position; zeros if face down)
     387:423  ridge_suit       suit C,D,H,S of each face-up ridge card (4 per position)
     423:432  coin             the coin's position, from the viewer's end
     432:437  trumps           trumps: none, clubs, diamonds, hearts, spades
     437:442  ropes            safety ropes left: 0..4
     442:445  deal             the current deal: 1..3
     445:446  last_deal        1 if this is the last deal allowed
     446:459  trick            tricks completed in this deal: 0..12
     459:460  self_dealt       1 if the viewer dealt this deal
     460:461  self_leads       1 if the viewer leads the current trick
     461:462  self_to_move     1 if it is the viewer's turn
     462:463  trumps_rule      1 if uncovered cards make trumps (0 on Expert)
     463:464  open_hands       1 in the open-hands variant
    (464 entries in all)

State: ``state()`` is the global state for centralised critics, ``state_space`` a ``Box(0, 1, (1133,), int8)``:
player_0's observation, player_1's observation, then what neither sees: every ridge card by position from player_0's
end (rank 13 + suit 4 each, face-down cards too) and the 17 cards set aside (``STATE_LAYOUT`` in the observer has
the slices). It holds hidden cards: train critics on it, never act on it.

Rewards: the team's outcome to both players when the game ends, +1 win, -1 loss (fall or out of deals), 0 on
every other step. Optional shaping: ``shaping=x`` adds ``x`` to both players for every card uncovered (off by
default; documented shaping, not part of the game).

Info: at the end every agent's info holds ``outcome`` ("win", "fall", "out_of_deals"; "illegal" under
``illegal_action="penalize"``), ``win_deal`` (1..3 or None), ``uncovered`` (0..8), ``ropes_used``, ``deals`` and
``tricks`` played.

Options (keyword arguments; unknown names raise ``OptionError``):

    level          "easy" (2 ropes), "normal" (1, default), "hard" (0), "expert" (0 ropes, no trumps)
    ropes          safety ropes 0..4, overriding the level
    trumps         True/False: uncovered cards make trumps, overriding the level
    max_deals      1..3 deals (2 is the "two deals" variant)
    open_hands     True: each player also sees the partner's hand (the "open hands" variant)
    shaping        reward per card uncovered, default 0.0
    illegal_action "penalize" (default): an in-range action the mask forbids ends the game with -1 to both
                   players (the team loses) and an IllegalActionWarning (PettingZoo's classic-game convention);
                   the record keeps the move, so a replay ends the same way;
                   "raise": it raises IllegalActionError and changes nothing (the strict mode)
    render_mode    "ansi", "human" or "rgb_array"
    render_viewer  "player_0"/"player_1": whose view is rendered; default the player to move

Reset options: ``deck`` (52 two-character card strings such as "TS": ``deck[0:9]`` the ridge from position 0 to 8,
``deck[4]`` the camp, ``deck[9:22]`` player_0's hand, ``deck[22:35]`` player_1's hand, ``deck[35:]`` the 17
aside; later deals come from the seed), ``dealer`` ("player_1" by default, so player_0 leads the first trick).
An unknown option or reset option is an ``OptionError`` naming it; only the key ``"options"`` (PettingZoo's API-test
probe of ``reset``'s signature) is ignored, with an ``UnknownResetOptionWarning``.

Version history:
    v0 (cardzoo 0.2): illegal moves follow PettingZoo's classic-game convention by default
        (``illegal_action="penalize"``; before, "raise" was the default); ``state()`` and ``state_space``;
        records keep a penalised illegal move, so replays end the same way.
    v0 (cardzoo 0.1): first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ..common.aec import CardGameAEC
from ..common.cards import N_CARDS, SUIT_NAMES, card_pretty, mask_to_bits, parse_deck
from ..common.options import check_reset_options, flag, int_in, number, one_of, reject_unknown
from ..common.wrappers import OrderEnforcing
from . import render, rules
from .observer import LAYOUT, MAX_ROPES, STATE_LAYOUT, describe, observe_bits, state_bits

AGENTS = ("player_0", "player_1")
ACTION_SIZES = frozenset({N_CARDS})  # action c plays card c, in every variant
CONFIG_OPTIONS = ("level", "ropes", "trumps", "max_deals", "open_hands")  # the options that make the rules' Config
ENV_OPTIONS = (*CONFIG_OPTIONS, "shaping", "illegal_action", "render_mode", "render_viewer")
RESET_OPTIONS = ("deck", "dealer")


def env(**options) -> OrderEnforcing:
    """The environment in an order-enforcing wrapper (errors for a step before reset or after the end)."""
    return OrderEnforcing(raw_env(**options))


def make_config(level: str = "normal", ropes=None, trumps=None, max_deals=None, open_hands=None) -> rules.Config:
    base = rules.LEVELS[one_of("level", level, rules.LEVELS)]
    return rules.Config(
        ropes=base.ropes if ropes is None else int_in("ropes", ropes, 0, MAX_ROPES),
        trumps=base.trumps if trumps is None else flag("trumps", trumps),
        max_deals=base.max_deals if max_deals is None else int_in("max_deals", max_deals, 1, 3),
        open_hands=base.open_hands if open_hands is None else flag("open_hands", open_hands),
    )


class raw_env(CardGameAEC):  # noqa: N801 - PettingZoo's naming convention
    __doc__ = __doc__
    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "rope_team_v0",
                "is_parallelizable": False, "render_fps": 2}
    env_name = "rope_team_v0"
    possible_agents = list(AGENTS)

    def __init__(self, **options: Any):
        reject_unknown(options, ENV_OPTIONS, "option")
        game = {k: options[k] for k in CONFIG_OPTIONS if k in options}
        self.config = make_config(**game)
        self.shaping = number("shaping", options.get("shaping", 0.0))
        super().__init__(options)
        obs_space = spaces.Dict({
            "observation": spaces.Box(0, 1, (LAYOUT.size,), np.int8),
            "action_mask": spaces.Box(0, 1, (52,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(52) for a in AGENTS}
        self.state_space = spaces.Box(0, 1, (STATE_LAYOUT.size,), np.int8)

    # ------------------------------------------------------------------ hooks
    def _deal(self, rng: np.random.Generator, reset_options: dict[str, Any]) -> rules.State:
        check_reset_options(reset_options, RESET_OPTIONS)
        dealer = AGENTS.index(one_of("dealer", reset_options.get("dealer", "player_1"), AGENTS))
        deck = parse_deck(reset_options["deck"]) if "deck" in reset_options else None
        return rules.deal(self.config, rng, dealer, deck)

    def _seat_to_move(self) -> int:
        return self.game.to_move

    def _legal_mask(self) -> np.ndarray:
        return mask_to_bits(rules.legal_mask(self.game))

    def _is_legal(self, action: int) -> bool:
        return bool(rules.legal_mask(self.game) >> action & 1)

    def _apply(self, action: int) -> list[float]:
        s = self.game
        before = s.uncovered
        rules.play(s, action)
        r = self.shaping * (s.uncovered - before) + rules.rewards(s)
        return [r, r]

    def _observation(self, seat: int) -> np.ndarray:
        return LAYOUT.to_array(observe_bits(self.game, seat))

    def _state_vector(self) -> np.ndarray:
        return STATE_LAYOUT.to_array(state_bits(self.game))

    def _is_over(self) -> bool:
        return self.game.outcome is not None

    def _final_info(self) -> dict[str, Any]:
        return rules.summary(self.game)

    def _illegal_rewards(self, seat: int) -> list[float]:
        return [-1.0, -1.0]  # a cooperative team loses together

    def action_name(self, action: int) -> str:
        return card_pretty(action)

    def _why_illegal(self, action: int) -> str:
        s = self.game
        if not s.hands[s.to_move] >> action & 1:
            return "that card is not in their hand"
        return f"they must follow {SUIT_NAMES[s.led // 13]}"

    # ------------------------------------------------------------------ extras
    describe = staticmethod(describe)

    def _render_text(self, viewer: int) -> str:
        return render.text(self.game, viewer)

    def _render_image(self, viewer: int) -> np.ndarray:
        return render.image(self.game, viewer)
