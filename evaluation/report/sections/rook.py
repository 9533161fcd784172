"""The Rook for Two section of the evaluation report.

The heuristic player (``cardzoo.agents.rook_heuristic``) against random legal play and against itself, every deal
played twice with the seats swapped (``(A, B)`` then ``(B, A)`` on the same seeds), in two formats:

- *whole games* to 500 (the default env). A game runs to several rounds, so the section plays
  ``settings.games // 10`` deals of them per seating to keep the quick report quick;
- *single rounds* (``rounds=1``): ``settings.games`` deals per seating. A round is won by the player whose total
  gained more (a set bid winner's loss counts); equal gains are ties.

Reported: game and round win rates with Wilson 95 % intervals; the bids (who wins the bidding, the contracts, how
often the bid winner makes the contract); the points taken per round (card points plus the 20 for most tricks);
and the first-seat and dealer advantage of the heuristic against itself. The Rook document reports no figures, so
there is nothing to compare with.
"""

from __future__ import annotations

from collections import Counter

from cardzoo.envs.common.charts import Bar, bar_chart
from cardzoo.envs.common.stats import paired, wilson

from .. import search as search_report
from ..model import Row, Section, Settings, play, section

ENV = "rook_v0"
GAME = "rook"
SEATS = ("player_0", "player_1")
GAMES_DIVISOR = 10  # whole games per seating = settings.games // GAMES_DIVISOR


def _play(settings: Settings, agents: tuple[str, str], games: int, **options) -> list[dict]:
    return play(settings, ENV, agents, games, **options)


def _seat_records(settings: Settings, a: str, b: str, games: int, **options) -> list[tuple[int, dict]]:
    """Each deal played as (a, b) and as (b, a): (seat of ``a``, record) pairs."""
    first = _play(settings, (a, b), games, **options)
    if a == b:
        return [(0, r) for r in first]
    second = _play(settings, (b, a), games, **options)
    return [(0, r) for r in first] + [(1, r) for r in second]


def _won(seat: int, record: dict) -> bool:
    return record.get("winner") == SEATS[seat]


def _tie(record: dict) -> bool:
    return record.get("winner") is None


def _rounds(pairs: list[tuple[int, dict]]) -> list[tuple[int, dict]]:
    """(seat of the first agent, round summary) for every round played."""
    return [(seat, summary) for seat, record in pairs for summary in record["history"]]


def _bucket(amount: int) -> str:
    if amount <= 50:
        return "50"
    if amount >= 100:
        return "100+"
    low = (amount - 5) // 10 * 10 + 5
    return f"{low}-{low + 5}"


BUCKETS = ("50", "55-60", "65-70", "75-80", "85-90", "95-100", "100+")


def _bid_stats(rounds: list[tuple[int, dict]], who: int | None) -> dict:
    """Bids won by the agent in seat ``who`` relative to the first agent (0: first agent, 1: the other; None:
    either seat, for an agent against itself)."""
    mine = [s for seat, s in rounds if who is None or (s["bidder"] == seat) == (who == 0)]
    made = sum(1 for s in mine if s["made"])
    contracts = Counter(_bucket(s["bid"]) for s in mine)
    return {"won": len(mine), "of": len(rounds), "made": wilson(made, len(mine)),
            "contracts": contracts, "mean_bid": sum(s["bid"] for s in mine) / len(mine) if mine else float("nan"),
            "bidder_points": sum(s["points"][s["bidder"]] for s in mine) / len(mine) if mine else float("nan")}


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _learned_lines(settings: Settings, out: Section) -> list[str]:
    """The shipped learned policy against the heuristic and random, single rounds, seats swapped."""
    from cardzoo.agents.registry import make_agent
    from cardzoo.envs.common.errors import OptionError

    try:
        make_agent("learned", ENV)
    except OptionError:
        return ["", "No learned Rook policy is shipped."]
    lines = ["", "**Learned policies** (MaskablePPO after cloning the heuristic, with the heuristic's choice as an "
             "extra input, self-play against a pool of its earlier snapshots, the heuristic and random play; see "
             "`agents/policies/README.md`; `learned`: 4.5M steps at smaller step sizes, "
             "`learned_v1`, the previous `learned`: 300k), single rounds with seats swapped:", "",
             "| matchup | single rounds won | ties |", "|---|---:|---:|"]
    against_heuristic = {}
    for name in ("learned", "learned_v1"):
        try:
            make_agent(name, ENV)
        except OptionError:
            continue
        for opponent in ("heuristic", "random"):
            pairs = _seat_records(settings, name, opponent, settings.games, rounds=1)
            if opponent == "heuristic":
                against_heuristic[name] = [_won(seat, r) for seat, r in pairs]
            rate = wilson(sum(_won(seat, r) for seat, r in pairs), len(pairs))
            ties = sum(_tie(r) for _, r in pairs)
            out.rows.append(Row(GAME, "single round", f"{name} vs {opponent}", rate.rate, rate.low, rate.high,
                                len(pairs), f"{ties} ties"))
            lines.append(f"| {name} vs {opponent} | {100 * rate.rate:.1f}% [{100 * rate.low:.1f}, "
                         f"{100 * rate.high:.1f}] of {len(pairs)} | {ties} |")
    if len(against_heuristic) == 2:
        lines += ["", "`learned` minus `learned_v1` against the heuristic, same deals and seats: "
                  f"{paired(against_heuristic['learned'], against_heuristic['learned_v1'])}."]
    return lines


@section(GAME)
def rook(settings: Settings) -> Section:
    out = Section(GAME)
    n_games = max(1, settings.games // GAMES_DIVISOR)
    n_rounds = settings.games

    games_hr = _seat_records(settings, "heuristic", "random", n_games)
    games_hh = _seat_records(settings, "heuristic", "heuristic", n_games)
    rounds_hr = _seat_records(settings, "heuristic", "random", n_rounds, rounds=1)
    rounds_hh = _seat_records(settings, "heuristic", "heuristic", n_rounds, rounds=1)

    # Win rates of the heuristic against random.
    game_rate = wilson(sum(_won(seat, r) for seat, r in games_hr), len(games_hr))
    round_rate = wilson(sum(_won(seat, r) for seat, r in rounds_hr), len(rounds_hr))
    round_ties = sum(_tie(r) for _, r in rounds_hr)
    fell = Counter(r["outcome"] for _, r in games_hr)
    random_fell = sum(1 for seat, r in games_hr if r["outcome"] == "bidder_fell" and _won(seat, r))
    game_rounds = _mean([r["rounds"] for _, r in games_hr])
    out.rows += [
        Row(GAME, "whole game", "heuristic vs random", game_rate.rate, game_rate.low, game_rate.high,
            len(games_hr), f"{n_games} deals x 2 seatings"),
        Row(GAME, "single round", "heuristic vs random", round_rate.rate, round_rate.low, round_rate.high,
            len(rounds_hr), f"{round_ties} ties"),
    ]

    # Seat and dealer advantage, heuristic against itself (the same agent in both seats).
    seat_game = wilson(sum(_won(0, r) for _, r in games_hh), len(games_hh))
    seat_round = wilson(sum(_won(0, r) for _, r in rounds_hh), len(rounds_hh))
    hh_ties = sum(_tie(r) for _, r in rounds_hh)
    # player_1 deals the first round (ruling 15), so in single rounds player_0 is the non-dealer who opens.
    hh_game_rounds = _rounds(games_hh)
    dealer_round_wins = sum(1 for _, s in hh_game_rounds if s["score"][s["dealer"]] > s["score"][1 - s["dealer"]])
    dealer_round_ties = sum(1 for _, s in hh_game_rounds if s["score"][0] == s["score"][1])
    dealer_rate = wilson(dealer_round_wins, len(hh_game_rounds))
    non_dealer_rate = wilson(len(hh_game_rounds) - dealer_round_wins - dealer_round_ties, len(hh_game_rounds))
    dealer_single = wilson(sum(_won(1, r) for _, r in rounds_hh), len(rounds_hh))
    out.rows += [
        Row(GAME, "whole game", "heuristic vs itself: player_0", seat_game.rate, seat_game.low, seat_game.high,
            len(games_hh), "player_0 opens the bidding of round 1"),
        Row(GAME, "single round", "heuristic vs itself: player_0 (non-dealer)", seat_round.rate, seat_round.low,
            seat_round.high, len(rounds_hh), f"{hh_ties} ties"),
        Row(GAME, "rounds of whole games", "heuristic vs itself: dealer", dealer_rate.rate, dealer_rate.low,
            dealer_rate.high, len(hh_game_rounds), f"round won by the dealer; {dealer_round_ties} ties"),
    ]

    # Bids.
    hr_rounds = _rounds(rounds_hr)
    hh_rounds = _rounds(rounds_hh)
    bids_h = _bid_stats(hr_rounds, 0)
    bids_r = _bid_stats(hr_rounds, 1)
    bids_hh = _bid_stats(hh_rounds, None)
    non_dealer_bids = sum(1 for _, s in hh_rounds if s["bidder"] != s["dealer"])
    for label, stats in (("heuristic vs random: heuristic bids", bids_h), ("heuristic vs random: random bids", bids_r),
                         ("heuristic vs itself", bids_hh)):
        made = stats["made"]
        out.rows.append(Row(GAME, "single round: bid made", label, made.rate, made.low, made.high, made.games,
                            f"mean contract {stats['mean_bid']:.1f}"))

    # Points per round (card points + most tricks), first agent and second agent.
    def points(rounds: list[tuple[int, dict]], first: bool) -> float:
        return _mean([s["points"][seat if first else 1 - seat] for seat, s in rounds])

    def gains(rounds: list[tuple[int, dict]], first: bool) -> float:
        return _mean([s["score"][seat if first else 1 - seat] for seat, s in rounds])

    pts_h, pts_r = points(hr_rounds, True), points(hr_rounds, False)
    gain_h, gain_r = gains(hr_rounds, True), gains(hr_rounds, False)
    hh_bidder = _mean([s["points"][s["bidder"]] for _, s in hh_rounds])
    hh_gain_bidder = _mean([s["score"][s["bidder"]] for _, s in hh_rounds])
    hh_gain_other = _mean([s["score"][1 - s["bidder"]] for _, s in hh_rounds])

    def pct(rate) -> str:
        return f"{100 * rate.rate:.1f}% [{100 * rate.low:.1f}, {100 * rate.high:.1f}]"

    def dist(stats: dict) -> str:
        won = stats["won"] or 1
        return " / ".join(f"{100 * stats['contracts'][b] / won:.0f}%" for b in BUCKETS)

    lines = [
        "## Rook for Two",
        "",
        "The heuristic player (`cardzoo.agents.rook_heuristic`: hand-strength bidding to a computed limit, longest "
        "suit as trumps, card counting in play, face-up card taken when it beats the average hidden card) against "
        "random legal play and against itself. Every deal is played twice with the seats swapped. *The Rook "
        "document reports no figures*, so there is no document column or comparison.",
        "",
        f"Whole games to 500 are long (about {game_rounds:.1f} rounds against random), so the quick report plays "
        f"`--games` / {GAMES_DIVISOR} = {n_games} deals of them per seating ({len(games_hr)} games per matchup); "
        f"single rounds (`rounds=1`) use {n_rounds} deals per seating ({len(rounds_hr)} rounds).",
        "",
        "| matchup | whole games won | single rounds won |",
        "|---|---:|---:|",
        f"| heuristic vs random | {pct(game_rate)} of {len(games_hr)} | {pct(round_rate)} of {len(rounds_hr)} "
        f"({round_ties} ties) |",
        f"| heuristic vs itself: player_0 | {pct(seat_game)} of {len(games_hh)} | {pct(seat_round)} of "
        f"{len(rounds_hh)} ({hh_ties} ties) |",
        "",
        "How the whole games against random ended: " + ", ".join(f"{k} {v}" for k, v in sorted(fell.items()))
        + f" (`bidder_fell`: a set bid winner fell to -500; random play, which overbids, in {random_fell} of "
        f"{fell['bidder_fell']}).",
        "",
        "**Bids** (single rounds). Contracts by amount: " + " / ".join(BUCKETS) + ".",
        "",
        "| bid winner | bids won | contract made | mean contract | contracts |",
        "|---|---:|---:|---:|---|",
    ]
    for label, stats in (("heuristic (vs random)", bids_h), ("random (vs heuristic)", bids_r),
                         ("heuristic (vs itself)", bids_hh)):
        lines.append(f"| {label} | {stats['won']} of {stats['of']} | {pct(stats['made'])} | "
                     f"{stats['mean_bid']:.1f} | {dist(stats)} |")
    lines += [
        "",
        f"**Points per round** (card points and the 20 for most tricks; 140 in all). Heuristic vs random: "
        f"heuristic {pts_h:.1f}, random {pts_r:.1f}; change of running total per round: heuristic {gain_h:+.1f}, "
        f"random {gain_r:+.1f}. Heuristic vs itself: the bid winner takes {hh_bidder:.1f} points; totals change "
        f"by {hh_gain_bidder:+.1f} for the bid winner and {hh_gain_other:+.1f} for the other player.",
        "",
        f"**Seat and dealer advantage** (heuristic vs itself). `player_0` opens the bidding of the first round "
        f"(`player_1` deals) and wins {pct(seat_game)} of whole games; in single rounds the non-dealer "
        f"(`player_0`) wins {pct(seat_round)}, the dealer {pct(dealer_single)} ({hh_ties} ties), and the "
        f"non-dealer wins the bidding in {non_dealer_bids} of {len(hh_rounds)} rounds. Over all "
        f"{len(hh_game_rounds)} rounds of the whole games the dealer wins {pct(dealer_rate)} and the non-dealer "
        f"{pct(non_dealer_rate)} ({dealer_round_ties} ties). A round is won by the larger change of total; the two "
        "samples are different deals, so their dealer figures differ by sampling noise as well.",
    ]
    lines += [
        "",
        "Chart: *vs random* is the heuristic against random play, *vs itself* is `player_0` of the heuristic against "
        "itself (50 % means no seat advantage); under *bid made*, *vs itself* counts both seats and *random* is "
        "random play as bid winner against the heuristic.",
    ]
    lines += _learned_lines(settings, out)
    lines += search_report.rook(out)
    out.markdown = "\n".join(lines)

    groups = {
        "game": [Bar("vs random", game_rate.rate, game_rate.low, game_rate.high),
                 Bar("vs itself", seat_game.rate, seat_game.low, seat_game.high)],
        "round": [Bar("vs random", round_rate.rate, round_rate.low, round_rate.high),
                  Bar("vs itself", seat_round.rate, seat_round.low, seat_round.high)],
        "bid made": [Bar("vs random", bids_h["made"].rate, bids_h["made"].low, bids_h["made"].high),
                     Bar("vs itself", bids_hh["made"].rate, bids_hh["made"].low, bids_hh["made"].high),
                     Bar("random", bids_r["made"].rate, bids_r["made"].low, bids_r["made"].high)],
    }
    settings.out.mkdir(parents=True, exist_ok=True)
    bar_chart("Rook for Two: the heuristic player (95 % intervals)", groups, settings.out / "rook.png")
    out.charts.append("rook.png")
    return out
