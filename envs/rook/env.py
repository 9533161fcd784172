"""Rook for Two as a PettingZoo AEC environment.

Rook for Two is a bidding and trick-taking game for two players with 45 cards: 4 to Ace in four suits and the Rook,
a joker that is the lowest trump. The players bid for the right to name trumps and take the three-card Nest; then
21 tricks are played, and after each of the first ten the trick winner chooses between the face-up card of the draw
pile and the hidden card under it. 5s score 5, 10s and Aces 10, the Rook 20 and the most tricks 20: 140 points a
round. A bidder short of her bid loses the bid instead of scoring. First to 500 wins. Full rules and rulings:
``seeds/rook_for_two.md``.

Construction::

    from cardzoo.envs import rook_v0
    env = rook_v0.env()                       # wrapped (order enforcing), a whole game to 500
    raw = rook_v0.raw_env(rounds=1)           # unwrapped, one round per episode

Agents: ``player_0`` and ``player_1``. Both act in turn; ``agent_selection`` is the one to move (the bid winner
moves twice in a row when she names trumps and discards, the trick winner when she draws and then leads).

Action space: ``Discrete(79)`` in every phase; the action mask allows only the current phase's legal actions::

    0..52   play a card (play phase) or discard it (discard phase): card id suit*13+rank, suits C D H S, ranks
            2..A (the 2s and 3s, ids with rank < 2, are never legal: they are not in the deck); 52 is the Rook
    53..71  bid 50, 55, ..., 140 (action 53 + (amount - 50) / 5)
    72      pass
    73..76  name trumps: clubs, diamonds, hearts, spades
    77      take the face-up card (draw phase; the opponent gets the top of the face-down pile)
    78      take the top of the face-down pile (the opponent gets the face-up card)

``raw_env.action_name(a)`` names an action; ``cardzoo.envs.rook.rules`` has the constants (``BID0``, ``PASS``, ...).

Observation space: ``Dict(observation=Box(0, 1, (662,), int8), action_mask=Box(0, 1, (79,), int8))``. The mask
marks the legal actions of the player to move (all zeros for the other player and after the end). The vector is
seat-relative ("self" is the viewer, "opp" the opponent) and holds exactly what the viewer may see; it never holds
the opponent's unknown cards, the face-down draw pile or, for anyone but the bid winner who has taken them, the Nest
and the discards. Card pieces have 53 entries indexed by card id (entry 52 the Rook). Only the current round's
cards are shown: every round is dealt afresh from all 45 cards. ``describe(obs["observation"])`` gives the same in
words. Slices::

    slice     piece            meaning
       0:53   hand             cards in the viewer's hand
      53:58   phase            the phase: bid, trump, discard, play, draw (all 0 once the episode is over)
      58:77   bids_self        amounts 50, 55, ..., 140 the viewer has bid this round
      77:96   bids_opp         amounts the opponent has bid this round (bids only rise, so this is the whole history)
      96:97   passed_self      1 if the viewer passed (ending the bidding)
      97:98   passed_opp       1 if the opponent passed
      98:117  high_bid         the highest bid so far, one-hot over 50..140 (the contract once bidding is over)
     117:118  bidder_self      1 if the viewer won the bid
     118:119  bidder_opp       1 if the opponent won the bid
     119:123  trumps           trumps: clubs, diamonds, hearts, spades (all 0 until named)
     123:176  nest             the 3 Nest cards, for the bid winner once she has taken them; zeros for everyone else
     176:229  discards         the cards the viewer discarded as bid winner; zeros for the other player
     229:282  face_up          the face-up card on the draw pile, if any
     282:335  opp_known        cards the opponent is known to hold: face-up cards she took or was given, until played
     335:388  self_known       the viewer's cards the opponent knows of (face-up cards the viewer got), until played
     388:441  played_self      cards the viewer has played this round
     441:494  played_opp       cards the opponent has played this round
     494:547  led              the card led to the current trick, if one has been led
     547:548  led_by_self      1 if the viewer led that card
     548:570  tricks_self      tricks the viewer has won this round, one-hot 0..21
     570:592  tricks_opp       tricks the opponent has won this round, one-hot 0..21
     592:617  points_self      card points in the viewer's tricks this round, one-hot 0, 5, ..., 120
     617:642  points_opp       card points in the opponent's tricks this round, one-hot 0, 5, ..., 120
     642:643  total_self_neg   1 if the viewer's running total is negative
     643:651  total_self       |viewer's running total| / 5 in binary, least significant bit first (max 255)
     651:652  total_opp_neg    1 if the opponent's running total is negative
     652:660  total_opp        |opponent's running total| / 5 in binary, least significant bit first
     660:661  self_dealt       1 if the viewer dealt this round (the other player opens the bidding)
     661:662  self_to_move     1 if it is the viewer's turn
    (662 entries in all)

The points pieces count the cards in tricks won so far; the 20 for most tricks (and any point cards the bid winner
had to discard, see the rulings) are added when the round is scored. Which cards a trick holds, and who led it, is
not kept beyond ``played_self``/``played_opp`` and the current ``led``.

State: ``state()`` is the global state for centralised critics, ``state_space`` a ``Box(0, 1, (1536,), int8)``:
player_0's observation, player_1's observation, then the hidden cards: the Nest while set aside, the discards, the
face-down draw pile and its top card (53 entries each; ``STATE_LAYOUT`` in the observer has the slices). It holds
hidden cards: train critics on it, never act on it.

Rewards (zero-sum):
    whole game (default, ``rounds=None``): +1 to the winner and -1 to the loser on the step that ends the game,
        0 on every other step.
    ``rounds=k``: at the end of every round, each player gets her own change of running total minus the
        opponent's (e.g. bidder made 80, opponent 60: +20 / -20; bidder set at 100 with 60, opponent 80:
        -180 / +180). The episode ends after ``k`` rounds, or earlier if the game ends.
    an illegal move (the default ``illegal_action="penalize"``): the episode ends at once with -1 to the mover
        and 0 to the opponent (PettingZoo's classic-game convention); with ``rounds=k`` the mover gets -280
        instead, the worst change a round can bring, so an illegal move never pays better than a legal one.

Truncation: a whole game still going after ``max_rounds`` rounds (200 by default; random play needs about 9, at
most 23 in 300 games) is cut off: ``truncations`` True for both, reward 0, outcome "round_limit", winner None.
Nothing in the rules guarantees an end (totals can cycle), so every episode ends within ``max_rounds`` rounds.

Info: when a round ends (and the game goes on) both agents' info is ``{"last_round": summary}``; at the end it
holds ``outcome`` ("win": a total reached ``target_score``; "bidder_fell": a set bidder's total fell to
-``target_score``; "rounds_done": the ``rounds`` limit; "round_limit": cut off at ``max_rounds``; "illegal" under
penalize), ``winner`` ("player_0",
"player_1", or None for a tie after ``rounds``), ``totals`` [player_0, player_1], ``rounds`` played and
``history``, one summary per round. A summary has ``round``, ``dealer`` (seat), ``bids`` ([seat, amount or None
for a pass] in order), ``bidder``, ``bid``, ``trumps`` (0..3 = C D H S), ``tricks``, ``points`` (per seat,
including most tricks), ``made``, ``score`` (the change of each total), ``totals`` after the round and
``last_trick_winner`` (seat).

Options (keyword arguments; unknown names raise ``OptionError``):

    target_score   50..1000, default 500: reaching it wins; a set bidder falling to -target_score loses
    rounds         None (default: play the whole game) or 1..1000 rounds per episode (1: single-round episodes)
    max_rounds     1..10000, default 200: a game still going after this many rounds is cut off (truncated)
    illegal_action "penalize" (default): an in-range action the mask forbids ends the game with the penalty
                   above and an IllegalActionWarning (PettingZoo's classic-game convention); the record keeps it;
                   "raise": it raises IllegalActionError and changes nothing (the strict mode)
    render_mode    "ansi", "human" or "rgb_array"
    render_viewer  "player_0"/"player_1": whose view is rendered; default the player to move

Reset options:
    deck    45 two-character card strings, rank from "456789TJQKA" then suit from "CDHS", and "XR" for the Rook:
            ``deck[0:3]`` the Nest, ``deck[3:14]`` player_0's hand, ``deck[14:25]`` player_1's hand,
            ``deck[25:45]`` the draw pile from the top (``deck[25]`` is the first face-up card). Only the first
            round; later rounds are dealt from the seed.
    dealer  "player_1" (default, so player_0 opens the bidding) or "player_0"
    totals  [player_0, player_1] starting running totals, multiples of 5 strictly between -target_score and
            target_score (default [0, 0]); for training on end-game positions

An unknown reset option is an ``OptionError`` naming it; only the key ``"options"`` (PettingZoo's API-test probe of
``reset``'s signature) is ignored, with an ``UnknownResetOptionWarning``.

Same seed, same options and same actions give the same game, also across processes; ``game_record()`` and
``cardzoo.envs.replay`` save and rebuild a game.

Version history:
    v0 (cardzoo 0.2): illegal moves follow PettingZoo's classic-game convention by default
        (``illegal_action="penalize"``; before, "raise" was the default); ``state()`` and ``state_space``;
        records keep a penalised illegal move, so replays end the same way; ``max_rounds`` (200) cuts off a whole
        game that has not ended (a truncation, reward 0), so every episode ends.
    v0 (cardzoo 0.1): first release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from ..common.aec import CardGameAEC
from ..common.cards import SUIT_NAMES, mask_to_bits, parse_deck
from ..common.errors import DeckError, OptionError
from ..common.options import check_reset_options, int_in, one_of, reject_unknown
from ..common.wrappers import OrderEnforcing
from . import render, rules
from .observer import LAYOUT, STATE_LAYOUT, describe, observe_bits, state_bits

AGENTS = ("player_0", "player_1")
ACTION_SIZES = frozenset({rules.N_ACTIONS})  # the action space of every variant
ENV_OPTIONS = ("target_score", "rounds", "max_rounds", "illegal_action", "render_mode", "render_viewer")
RESET_OPTIONS = ("deck", "dealer", "totals")
_NO_REWARDS = (0.0, 0.0)  # the reward of almost every step, shared rather than allocated


def env(**options) -> OrderEnforcing:
    """The environment in an order-enforcing wrapper (errors for a step before reset or after the end)."""
    return OrderEnforcing(raw_env(**options))


def parse_rook_deck(cards) -> list[int]:
    """A 45-card deck option as card ints (see the reset options); raises :class:`DeckError` naming the problem."""
    try:
        return parse_deck(cards, rules.NAMES)
    except DeckError as err:
        raise DeckError(f"{err} (a Rook for Two deck is 4..A of C D H S, no 2s or 3s, plus the Rook 'XR')") from None


CONFIG_OPTIONS = ("target_score", "rounds", "max_rounds")  # the options that make the rules' Config


def make_config(target_score=500, rounds=None, max_rounds=200) -> rules.Config:
    """The rules' Config of the options, checked (shared with the batched engine)."""
    target = int_in("target_score", target_score, 50, 1000)
    if rounds is not None:
        rounds = int_in("rounds", rounds, 1, 1000)
    return rules.Config(target_score=target, rounds=rounds, max_rounds=int_in("max_rounds", max_rounds, 1, 10_000))


def final_info(s: rules.State) -> dict[str, Any]:
    """The final ``infos`` entry of every agent of the game ``s`` that has ended by its rules."""
    return {"outcome": s.outcome, "winner": None if s.winner is None else AGENTS[s.winner],
            "totals": list(s.totals), "rounds": len(s.history), "history": list(s.history)}


class raw_env(CardGameAEC):  # noqa: N801 - PettingZoo's naming convention
    __doc__ = __doc__
    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "name": "rook_v0",
                "is_parallelizable": False, "render_fps": 2}
    env_name = "rook_v0"
    possible_agents = list(AGENTS)

    def __init__(self, **options: Any):
        reject_unknown(options, ENV_OPTIONS, "option")
        self.config = make_config(**{k: options[k] for k in CONFIG_OPTIONS if k in options})
        super().__init__(options)
        obs_space = spaces.Dict({
            "observation": spaces.Box(0, 1, (LAYOUT.size,), np.int8),
            "action_mask": spaces.Box(0, 1, (rules.N_ACTIONS,), np.int8),
        })
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(rules.N_ACTIONS) for a in AGENTS}
        self.state_space = spaces.Box(0, 1, (STATE_LAYOUT.size,), np.int8)

    # ------------------------------------------------------------------ hooks
    def _deal(self, rng: np.random.Generator, reset_options: dict[str, Any]) -> rules.State:
        check_reset_options(reset_options, RESET_OPTIONS)
        dealer = AGENTS.index(one_of("dealer", reset_options.get("dealer", "player_1"), AGENTS))
        totals = self._parse_totals(reset_options.get("totals", [0, 0]))
        deck = parse_rook_deck(reset_options["deck"]) if "deck" in reset_options else None
        state = rules.deal(self.config, rng, dealer, deck)
        state.totals = totals
        return state

    def _parse_totals(self, totals) -> list[int]:
        target = self.config.target_score
        if isinstance(totals, (str, bytes)) or not hasattr(totals, "__len__") or len(totals) != 2:
            raise OptionError(f"reset option totals must be [player_0, player_1], got {totals!r}")
        out = [int_in("totals", t, -target + 1, target - 1) for t in totals]
        if any(t % 5 for t in out):
            raise OptionError(f"reset option totals must be multiples of 5 (every score is), got {out}")
        return out

    def _seat_to_move(self) -> int:
        return self.game.to_move

    def _legal_mask(self) -> np.ndarray:
        return mask_to_bits(rules.legal_actions(self.game), rules.N_ACTIONS)

    def _is_legal(self, action: int) -> bool:
        return bool(rules.legal_actions(self.game) >> action & 1)

    def _apply(self, action: int) -> list[float] | tuple[float, float]:
        s = self.game
        delta = rules.apply(s, action)
        if delta is None:
            return _NO_REWARDS
        if s.outcome is None:
            for a in AGENTS:
                self.infos[a] = {"last_round": s.last_round}
        if self.config.rounds is not None:
            d = delta[0] - delta[1]
            return [d, -d]
        if s.outcome is not None and s.winner is not None:
            return [1.0, -1.0] if s.winner == 0 else [-1.0, 1.0]
        return [0.0, 0.0]  # a game cut off at max_rounds is neither won nor lost

    def _observation(self, seat: int) -> np.ndarray:
        return LAYOUT.to_array(observe_bits(self.game, seat))

    def _state_vector(self) -> np.ndarray:
        return STATE_LAYOUT.to_array(state_bits(self.game))

    def _is_over(self) -> bool:
        return self.game.outcome is not None

    def _is_cut_off(self) -> bool:
        return self.game.outcome == rules.ROUND_LIMIT

    def _final_info(self) -> dict[str, Any]:
        return final_info(self.game)

    def _illegal_rewards(self, seat: int) -> list[float]:
        penalty = -1.0 if self.config.rounds is None else -2.0 * rules.ROUND_POINTS
        return [penalty if i == seat else 0.0 for i in range(2)]

    def action_name(self, action: int) -> str:
        if 0 <= action < rules.N_CARDS:
            verb = "discard" if self.game is not None and self.game.phase == rules.DISCARD else "play"
            return f"{verb} {rules.card_pretty(action)}"
        if rules.BID0 <= action < rules.PASS:
            return f"bid {rules.BID_AMOUNTS[action - rules.BID0]}"
        if action == rules.PASS:
            return "pass"
        if rules.TRUMP0 <= action < rules.TAKE_UP:
            return f"trumps {SUIT_NAMES[action - rules.TRUMP0]}"
        if action == rules.TAKE_UP:
            return "take the face-up card"
        if action == rules.TAKE_HIDDEN:
            return "take the hidden card"
        return str(action)

    def _why_illegal(self, action: int) -> str:
        s = self.game
        phase = rules.PHASE_NAMES[s.phase]
        if s.phase == rules.BID:
            if action == rules.PASS:
                return "the opening bid is compulsory: the non-dealer must bid at least 50"
            if rules.BID0 <= action < rules.PASS:
                return f"a bid must be higher than {s.high_bid}"
        elif s.phase in (rules.PLAY, rules.DISCARD) and action < rules.N_CARDS:
            if action % 13 < 2 and action != rules.ROOK:
                return "the 2s and 3s are not in the Rook deck"
            if not s.hands[s.to_move] >> action & 1:
                return "that card is not in their hand"
            if s.phase == rules.DISCARD:
                return "point cards (5s, 10s, Aces, the Rook) may be discarded only when no other card is left"
            suit = rules.effective_suit(s.led, s.trumps)
            return f"they must follow {SUIT_NAMES[suit]}" + (" (the Rook is a trump)" if suit == s.trumps else "")
        return f"it is the {phase} phase"

    # ------------------------------------------------------------------ extras
    describe = staticmethod(describe)

    def _render_text(self, viewer: int) -> str:
        return render.text(self.game, viewer)

    def _render_image(self, viewer: int) -> np.ndarray:
        return render.image(self.game, viewer)
