"""Summit Rush rules: the layout, playing, the tick resolution, the end, and each ruling in seeds/summit_rush.md."""

from __future__ import annotations

import pytest

from cardzoo.envs.common.cards import CARD_NAMES, STANDARD_CARDS, card_str
from cardzoo.envs.summit_rush import rules
from cardzoo.envs.summit_rush.rules import N_PEAKS, Config

# ----------------------------------------------------------------------------------------------- helpers (shared)


def c(name: str) -> int:
    return STANDARD_CARDS[name]


def make_deck(peaks: dict[int, str] | None = None, stocks: list[list[str]] | None = None,
              config: Config | None = None) -> list[str]:
    """A 52-card deck of strings with the given peak positions and stock openings; the rest filled in card order."""
    config = config or Config()
    peaks = peaks or {}
    stocks = stocks or [[] for _ in range(config.players)]
    used = set(peaks.values()) | {x for st in stocks for x in st}
    assert len(used) == len(peaks) + sum(len(st) for st in stocks), "a card is used twice"
    spare = [n for n in CARD_NAMES if n not in used]
    deck = [peaks[p] if p in peaks else spare.pop(0) for p in range(N_PEAKS)]
    for st in stocks:
        st = list(st)
        while len(st) < config.stock:
            st.append(spare.pop(0))
        deck += st
    deck += spare
    assert len(deck) == 52 and len(set(deck)) == 52
    return deck


def game(deck: list[str], config: Config | None = None, order_seed: int = 0) -> rules.State:
    return rules.new_game(config or Config(), [c(n) for n in deck], order_seed)


def act(s: rules.State, pos_or_name: int | str, pile: int) -> int:
    """The action that plays the card at ``pos`` (or the peak card named ``name``) onto ``pile``."""
    pos = pos_or_name if isinstance(pos_or_name, int) else s.peaks.index(c(pos_or_name))
    return pos * s.config.players + pile


def turn(s: rules.State) -> int:
    return N_PEAKS * s.config.players


def wait(s: rules.State) -> int:
    return N_PEAKS * s.config.players + 1


def tick(s: rules.State, *actions: int, order: tuple[int, ...] | None = None) -> None:
    for seat, a in enumerate(actions):
        assert rules.is_legal(s, seat, a), f"seat {seat}: action {a} is not legal"
    rules.play_tick(s, list(actions), order or tuple(range(len(actions))))


def free_names(s: rules.State) -> set[str]:
    return {card_str(s.peaks[p]) for p in rules.free_positions(s)}


def tops(s: rules.State) -> list[str]:
    return [card_str(t) for t in s.tops]


# The document's worked example. Anna is player_0 (pile 0, opening 4S), Ben player_1 (pile 1, opening 9C, next 3H).
# Bottom row (positions 18..27): 3C QS 5H 6D TS JH 2S KD 8H 7C; row 2 (positions 9..17) holds 4D at 10, 7D at 11,
# 2C at 12, QC at 13 and 9S at 16. The other cards are free to choose: the example never shows them.
EXAMPLE_PEAKS = {18: "3C", 19: "QS", 20: "5H", 21: "6D", 22: "TS", 23: "JH", 24: "2S", 25: "KD", 26: "8H", 27: "7C",
                 10: "4D", 11: "7D", 12: "2C", 13: "QC", 16: "9S"}
EXAMPLE_DECK = make_deck(EXAMPLE_PEAKS, [["4S"], ["9C", "3H"]])
# Ticks as (Anna, Ben); "wait" and "turn" by name, plays as (card, pile).
EXAMPLE_TICKS = [
    (("5H", 0), ("TS", 1)),
    (("6D", 0), ("JH", 1)),
    (("7D", 0), ("QC", 1)),
    ("wait", ("KD", 1)),
    ("wait", ("8H", 0)),  # "The 8H lies right in front of Ben - it fits Anna's 7D, so he plays it onto her pile"
    (("9S", 0), ("QS", 1)),
    ("wait", "turn"),  # "I'll turn!": Ben's 3H
    ("wait", ("4D", 1)),
    (("3C", 1), "wait"),
    (("2S", 1), "wait"),
]


def example_action(s: rules.State, spec) -> int:
    if spec == "wait":
        return wait(s)
    if spec == "turn":
        return turn(s)
    return act(s, spec[0], spec[1])


# ----------------------------------------------------------------------------------------------- layout


def test_cover_map_is_standard_tripeaks():
    """Each pyramid t: row-0 card t over row-1 cards 2t, 2t+1; row-1 card 2t+m over row-2 cards 3t+m, 3t+m+1;
    row-2 card k over bottom cards k, k+1 (the bottom row is shared). Written per pyramid, independently."""
    expected = {}
    for t in range(3):
        expected[t] = (3 + 2 * t, 4 + 2 * t)
        for m in range(2):
            expected[3 + 2 * t + m] = (9 + 3 * t + m, 10 + 3 * t + m)
    for k in range(9):
        expected[9 + k] = (18 + k, 19 + k)
    for b in range(18, 28):
        expected[b] = ()
    assert rules.COVERED_BY == tuple(expected[p] for p in range(N_PEAKS))
    # The pyramids meet only at the base: no row-1 card is covered by row-2 cards 11 and 12 or 14 and 15.
    assert all(set(rules.COVERED_BY[p]) not in ({11, 12}, {14, 15}) for p in range(3, 9))
    # Every covered position has exactly two covers in the row below it; a card covers one or two cards.
    assert [len(rules.COVERS[p]) for p in range(N_PEAKS)] == [0] * 3 + [1] * 6 + [1, 2, 1] * 3 + [1] + [2] * 8 + [1]


def test_rows_and_start():
    assert rules.ROWS == (3, 6, 9, 10) and sum(rules.ROWS) == N_PEAKS
    s = game(make_deck())
    assert rules.free_positions(s) == list(range(18, 28))
    assert s.present == rules.ALL_PEAKS


def test_deck_mapping():
    deck = make_deck()
    s = game(deck)
    assert [card_str(x) for x in s.peaks] == deck[:28]
    assert [card_str(x) for x in s.stocks[0]] == deck[28:40]
    assert [card_str(x) for x in s.stocks[1]] == deck[40:52]
    assert tops(s) == [deck[28], deck[40]]  # the first stock card of each starts the pile
    assert s.stock_left == [11, 11] and s.aside == []
    hard = Config(stock=10, time_limit=120.0)
    s = game(make_deck(config=hard), hard)
    assert s.stock_left == [9, 9] and len(s.aside) == 4
    assert [card_str(x) for x in s.aside] == make_deck(config=hard)[48:]


# ----------------------------------------------------------------------------------------------- playing


def test_worked_example():
    s = game(EXAMPLE_DECK)
    assert tops(s) == ["4S", "9C"]
    seen_up = s.up
    newly = []
    for spec in EXAMPLE_TICKS:
        tick(s, *(example_action(s, x) for x in spec))
        newly.append({card_str(s.peaks[p]) for p in range(N_PEAKS) if (s.up & ~seen_up) >> p & 1})
        seen_up |= s.up
        if len(newly) == 6:
            # "Now nothing fits: the piles show the 9S and the QS, the free cards are 7C, 2S, 2C, 3C and 4D."
            assert tops(s) == ["9S", "QS"]
            assert free_names(s) == {"7C", "2S", "2C", "3C", "4D"}
            assert rules.play_bits(s) == 0
            assert rules.legal_bits(s, 0) == 1 << turn(s) | 1 << wait(s)
    # Four neighbouring bottom cards gone -> three turned up: 7D, 2C, QC.
    assert newly[1] == {"7D", "2C", "QC"}
    assert newly[0] == newly[2] == newly[3] == set()
    assert newly[4] == {"9S"}  # the card the KD and the 8H covered
    assert newly[5] == {"4D"}  # uncovered by the QS
    assert tops(s)[1] == "2S" and s.stock_left == [11, 10]
    assert len(newly[7] | newly[8] | newly[9]) == 4  # "these three cards uncover four more face-down cards"
    assert s.conflicts == s.bounced == s.redirected == 0 and s.outcome is None


@pytest.mark.parametrize(("top", "fits", "fits_no_wrap"), [
    ("KS", {"Q", "A"}, {"Q"}),
    ("AS", {"K", "2"}, {"2"}),
    ("2S", {"A", "3"}, {"A", "3"}),
    ("7S", {"6", "8"}, {"6", "8"}),
    ("QS", {"J", "K"}, {"J", "K"}),
])
def test_fits_wrap_and_no_wrap(top, fits, fits_no_wrap):
    for wrap, want in ((True, fits), (False, fits_no_wrap)):
        table = rules.FITS[wrap][c(top)]
        got = {CARD_NAMES[x][0].replace("T", "10") for x in range(52) if table >> x & 1}
        assert got == want
        assert bin(table).count("1") == 4 * len(want)  # suits ignored


def test_no_wrap_game_refuses_ace_on_king():
    cfg = Config(wrap=False)
    s = game(make_deck({18: "AH"}, [["KS"], ["2C"]], cfg), cfg)
    assert not rules.is_legal(s, 0, act(s, 18, 0))  # A onto K: round the corner is off
    assert rules.is_legal(s, 0, act(s, 18, 1))  # A onto 2: always
    s = game(make_deck({18: "AH"}, [["KS"], ["2C"]]))
    assert rules.is_legal(s, 0, act(s, 18, 0))


def test_peak_card_onto_either_pile_stock_only_onto_own():
    s = game(make_deck({18: "5H"}, [["4S"], ["6C", "JD"]]))
    tick(s, act(s, 18, 1), turn(s))  # player_0 plays onto player_1's pile; player_1 turns afterwards
    assert tops(s) == ["4S", "JD"] and s.piles[1][-2] == c("5H")
    tick(s, turn(s), wait(s))
    assert s.piles[0][-1] == s.stocks[0][1] and s.stock_left == [10, 10]


def test_stock_card_goes_on_whether_it_fits_or_not():
    s = game(make_deck({}, [["4S", "KD"], ["9C"]]))
    tick(s, turn(s), wait(s))
    assert tops(s)[0] == "KD"


def test_face_down_turns_up_when_both_covers_gone():
    s = game(make_deck({18: "5H", 19: "6D", 20: "7C", 9: "QH", 10: "KH"}, [["4S"], ["9C"]]))
    tick(s, act(s, 18, 0), wait(s))
    assert not s.up >> 9 & 1  # one cover left
    tick(s, act(s, 19, 0), wait(s))
    assert s.up >> 9 & 1 and not s.up >> 10 & 1
    tick(s, act(s, 20, 0), wait(s))
    assert s.up >> 10 & 1


def test_card_uncovered_this_tick_is_playable_from_the_next_tick():
    s = game(make_deck({18: "5H", 19: "6D", 9: "7C"}, [["4S"], ["9C"]]))
    tick(s, act(s, 18, 0), wait(s))
    assert not rules.is_legal(s, 1, act(s, 9, 0))
    tick(s, act(s, 19, 0), wait(s))
    assert rules.is_legal(s, 1, act(s, 9, 0))


# ----------------------------------------------------------------------------------------------- the tick


def test_same_card_conflict_first_toucher_plays_it():
    for order, winner in (((0, 1), 0), ((1, 0), 1)):
        s = game(make_deck({18: "5H"}, [["4S"], ["6C"]]))
        tick(s, act(s, 18, 0), act(s, 18, 1), order=order)
        assert s.conflicts == 1 and s.bounced == 0
        assert s.tops[winner] == c("5H") and s.tops[1 - winner] != c("5H")
        assert len(s.piles[0]) + len(s.piles[1]) == 3


def test_bounced_card_goes_back():
    # Pile 1 shows 8C; player_1 lands first with 9D on it, so player_0's 7H no longer fits there nor on the KS.
    s = game(make_deck({18: "7H", 19: "9D"}, [["KS"], ["8C"]]))
    tick(s, act(s, "7H", 1), act(s, "9D", 1), order=(1, 0))
    assert s.bounced == 1 and s.redirected == 0
    assert tops(s) == ["KS", "9D"] and s.present >> 18 & 1 and s.up >> 18 & 1


def test_redirected_card_goes_to_the_other_pile():
    s = game(make_deck({18: "7H", 19: "9D"}, [["6S"], ["8C"]]))
    tick(s, act(s, "7H", 1), act(s, "9D", 1), order=(1, 0))
    assert s.redirected == 1 and s.bounced == 0
    assert tops(s) == ["7H", "9D"]


def test_the_order_decides_which_card_bounces():
    s = game(make_deck({18: "7H", 19: "9D"}, [["6S"], ["8C"]]))
    tick(s, act(s, "7H", 1), act(s, "9D", 1), order=(0, 1))  # now the 7H lands first on the 8C ...
    assert tops(s) == ["6S", "7H"]  # ... and the 9D fits neither the 7H nor the 6S: back it goes
    assert s.bounced == 1 and s.redirected == 0 and s.present >> 19 & 1


def test_card_still_fitting_a_changed_pile_stays_there():
    # player_0 turns its stock (8S -> 6D); player_1's 7H was aimed at the 8S and fits the 6D too.
    s = game(make_deck({18: "7H"}, [["8S", "6D"], ["KC"]]))
    tick(s, turn(s), act(s, "7H", 0), order=(0, 1))
    assert tops(s)[0] == "7H" and s.redirected == 0 and s.bounced == 0


def test_redirect_prefers_own_pile_then_seat_order():
    cfg = Config(players=3, stock=8)
    s = game(make_deck({18: "7H", 19: "9D"}, [["6S"], ["6C"], ["8C"]], cfg), cfg)
    # player_2 aims 7H at pile 2 (8C); player_0 lands first with 9D there; 7H fits piles 0 and 1 -> its own? No:
    # its own pile is the one that changed, so it goes round from its own seat: pile 0 before pile 1.
    tick(s, act(s, "9D", 2), wait(s), act(s, "7H", 2), order=(0, 1, 2))
    assert tops(s) == ["7H", "6C", "9D"] and s.redirected == 1
    s = game(make_deck({18: "7H", 19: "9D"}, [["8C"], ["6C"], ["6S"]], cfg), cfg)
    # player_1 aims 7H at pile 0; player_2 lands 9D there first; piles 1 (own) and 2 both take it -> own pile 1.
    tick(s, wait(s), act(s, "7H", 0), act(s, "9D", 0), order=(2, 1, 0))
    assert tops(s) == ["9D", "7H", "6S"] and s.redirected == 1


REDIRECT_CONFIG = Config(players=3, stock=8)
# player_1 aims 7H at pile 2 (8C) while player_0 lands 9D there; piles 0 (6S) and 1 (6C) both take the 7H.
REDIRECT_DECK = make_deck({18: "7H", 19: "9D"}, [["6S"], ["6C"], ["8C"]], REDIRECT_CONFIG)


def redirect_actions(s: rules.State) -> list[int]:
    return [act(s, "9D", 2), act(s, "7H", 2), wait(s)]


@pytest.mark.parametrize("order", rules.ORDERS[3], ids=lambda order: "order" + "".join(map(str, order)))
def test_redirect_starts_from_the_players_own_pile(order):
    # Pile 0 comes first in seat order, but the search starts at the player's own pile: pile 1.
    s = game(REDIRECT_DECK, REDIRECT_CONFIG)
    tick(s, *redirect_actions(s), order=order)
    if order.index(0) < order.index(1):  # the 9D lands first: the 7H is redirected
        assert tops(s) == ["6S", "7H", "9D"] and s.redirected == 1 and s.bounced == 0
    else:  # the 7H lands first on the 8C, and the 9D fits no pile now
        assert tops(s) == ["6S", "6C", "7H"] and s.redirected == 0 and s.bounced == 1


def test_simultaneous_stock_turns_each_go_to_own_pile():
    s = game(make_deck({}, [["4S", "KD"], ["9C", "2H"]]))
    tick(s, turn(s), turn(s), order=(1, 0))
    assert tops(s) == ["KD", "2H"] and s.stock_left == [10, 10] and s.turned == 2


def test_order_is_seeded_and_fair():
    s = game(make_deck(), order_seed=7)
    other = game(make_deck(), order_seed=7)
    orders = [rules.draw_order(s) for _ in range(4000)]
    assert orders == [rules.draw_order(other) for _ in range(4000)]
    first_zero = sum(o[0] == 0 for o in orders) / len(orders)
    assert 0.45 < first_zero < 0.55
    assert set(orders) == {(0, 1), (1, 0)}


def test_wait_changes_nothing_but_the_clock():
    s = game(make_deck())
    before = s.copy()
    tick(s, wait(s), wait(s))
    assert s.tick == 1 and s.piles == before.piles and s.present == before.present and s.up == before.up
    assert s.stock_left == before.stock_left


# ----------------------------------------------------------------------------------------------- the end

STUCK_PEAKS = {18 + i: n for i, n in enumerate(["7C", "7D", "7H", "7S", "8C", "8D", "8H", "8S", "9C", "9D"])}


def stuck_deck(config: Config | None = None) -> list[str]:
    """Bottom row of 7s, 8s and 9s; each stock ends with a King, so after turning everything nothing fits."""
    config = config or Config()
    k = config.stock
    fill = [n for n in CARD_NAMES if n[0] in "2345JQA"]
    kings = ["KC", "KD", "KH"][: config.players]
    stocks = [fill[i * (k - 1) : (i + 1) * (k - 1)] + [king] for i, king in enumerate(kings)]
    return make_deck(STUCK_PEAKS, stocks, config)


def test_stuck_end():
    s = game(stuck_deck())
    for _ in range(10):
        tick(s, turn(s), turn(s))
        assert s.outcome is None
    tick(s, turn(s), turn(s))
    assert tops(s) == ["KC", "KD"] and s.stock_left == [0, 0]
    assert s.outcome == rules.STUCK and s.tick == 11 and rules.rewards(s) == -1.0 and s.score == 0


def test_not_stuck_while_a_stock_can_be_turned():
    s = game(stuck_deck())
    for _ in range(11):
        tick(s, turn(s), wait(s))
    assert s.stock_left == [0, 11] and rules.play_bits(s) == 0
    assert s.outcome is None and not rules.is_stuck(s)
    # player_0 has nothing to do but wait: the mask is never empty.
    assert rules.legal_bits(s, 0) == 1 << wait(s)


def test_stuck_beats_time_on_the_same_tick():
    cfg = Config(time_limit=33.0)  # 11 ticks
    s = game(stuck_deck(cfg), cfg)
    for _ in range(11):
        tick(s, turn(s), turn(s))
    assert s.tick == cfg.ticks and s.outcome == rules.STUCK


def test_timer_end():
    cfg = Config(stock=10, time_limit=120.0)
    s = game(make_deck(config=cfg), cfg)
    assert cfg.ticks == 40
    for _ in range(39):
        tick(s, wait(s), wait(s))
    assert s.outcome is None and s.ticks_left() == 1
    tick(s, wait(s), wait(s))
    assert s.outcome == rules.TIME and rules.rewards(s) == -1.0
    assert rules.legal_bits(s, 0) == 0 and not rules.is_legal(s, 0, wait(s))


def test_win_on_the_last_tick_counts():
    cfg = Config(time_limit=6.0)  # 2 ticks
    s = game(make_deck({18: "5H"}, [["4S"], ["9C"]], cfg), cfg)
    s.present = s.up = 1 << 18  # only the 5H is left
    tick(s, wait(s), wait(s))
    tick(s, act(s, 18, 0), wait(s))
    assert s.outcome == rules.WIN and s.tick == cfg.ticks
    assert s.score == 22 and rules.rewards(s) == 1.0  # 11 + 11 stock cards left


def test_score_counts_every_stock():
    cfg = Config(players=3, stock=8, time_limit=None)
    s = game(make_deck({18: "5H"}, [["4S"], ["9C"], ["2D"]], cfg), cfg)
    s.present = s.up = 1 << 18
    tick(s, turn(s), wait(s), act(s, 18, 0), order=(2, 0, 1))  # the 5H lands first: player_0's turn never does
    assert s.outcome == rules.WIN and s.score == 7 + 7 + 7 and s.turned == 0
    s = game(make_deck({18: "5H"}, [["4S"], ["9C"], ["2D"]], cfg), cfg)
    s.present = s.up = 1 << 18
    tick(s, turn(s), wait(s), act(s, 18, 0), order=(0, 2, 1))  # player_0 turns before the 5H lands
    assert s.outcome == rules.WIN and s.score == 6 + 7 + 7 and s.turned == 1


def test_timer_ticks():
    assert Config().ticks == 60
    assert Config(time_limit=120.0).ticks == 40
    assert Config(time_limit=None).ticks is None
    assert Config(time_limit=10.0, seconds_per_action=3.0).ticks == 3  # a part of an action is no action
    assert Config(time_limit=0.3, seconds_per_action=0.1).ticks == 3


def test_levels_table():
    assert rules.LEVELS["normal"][2] == (12, 180.0) and rules.LEVELS["hard"][2] == (10, 120.0)
    assert rules.LEVELS["normal"][3] == (8, 180.0) and rules.LEVELS["hard"][3] == (6, 120.0)
    assert rules.LEVELS["expert"][3] == (6, 90.0) and rules.LEVELS["expert"][2] == (10, 90.0)
    assert Config(players=3, stock=6).aside == 6 and Config(stock=10).aside == 4
    assert Config(players=1, stock=24).aside == 0


def test_three_players():
    cfg = Config(players=3, stock=8)
    deck = make_deck({18: "5H"}, [["4S"], ["6C"], ["QD"]], cfg)
    s = game(deck, cfg)
    assert s.stock_left == [7, 7, 7] and tops(s) == ["4S", "6C", "QD"] and cfg.n_actions == 86
    assert [card_str(x) for x in s.stocks[2]] == deck[44:52]
    legal = [a for a in range(cfg.n_actions) if rules.is_legal(s, 2, a)]
    assert act(s, 18, 0) in legal and act(s, 18, 1) in legal and act(s, 18, 2) not in legal
    tick(s, act(s, 18, 1), act(s, 18, 0), turn(s), order=(2, 0, 1))
    assert s.tops[1] == c("5H") and s.conflicts == 1 and s.stock_left == [7, 7, 6]
    orders = {rules.draw_order(s) for _ in range(600)}
    assert len(orders) == 6


def test_solo_is_plain_tripeaks():
    cfg = Config(players=1, stock=24, time_limit=None)
    s = game(make_deck({18: "5H"}, [["4S"]], cfg), cfg)
    assert cfg.n_actions == 30 and s.stock_left == [23] and tops(s) == ["4S"]
    tick(s, act(s, 18, 0))
    assert tops(s) == ["5H"]


def test_copy_is_independent():
    s = game(make_deck({18: "5H"}, [["4S"], ["9C"]]))
    t = s.copy()
    tick(t, act(t, 18, 0), turn(t))
    assert s.tops == [c("4S"), c("9C")] and s.present == rules.ALL_PEAKS and s.stock_left == [11, 11]
    assert rules.draw_order(s) == rules.draw_order(s.copy())


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_the_game_ends_the_moment_the_last_card_lands(order):
    """The rest of the winning tick does not land: a later stock turn does not lower the score and a later play
    on the gone card is no conflict (the document: the team wins as soon as all 28 are gone)."""
    deck = make_deck({18: "5H"}, [["4S"], ["9C"]])
    for other in ("turn", "same card"):
        s = game(deck)
        s.present = s.up = 1 << 18  # one card left
        turn = N_PEAKS * 2
        actions = [18 * 2, turn if other == "turn" else 18 * 2 + 0]
        rules.play_tick(s, actions, order=order)
        assert s.outcome == rules.WIN and s.present == 0
        if order == (0, 1):  # the win came first: nothing after it happened
            assert s.turned == 0 and s.conflicts == 0 and s.score == 22
        elif other == "turn":
            assert s.turned == 1 and s.score == 21
        else:  # seat 1 played the last card first; seat 0's play on it is then no conflict either
            assert s.conflicts == 0 and s.score == 22


def test_untimed_game_is_cut_off_at_the_tick_limit():
    s = game(make_deck(), Config(time_limit=None, max_ticks=5))
    wait = N_PEAKS * 2 + 1
    for _ in range(4):
        rules.play_tick(s, [wait, wait])
        assert s.outcome is None
    rules.play_tick(s, [wait, wait])
    assert s.outcome == rules.TICK_LIMIT and rules.rewards(s) == 0.0
