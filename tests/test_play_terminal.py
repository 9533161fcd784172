"""A person in the terminal (``cardzoo play GAME --agents human ...``), driven through a pipe as a script would:
a whole game of each game, the move names people type, the bad-input table (garbage, illegal cards, unknown
messages, end of input, Ctrl-C), and the saved games replaying to the ending the terminal printed."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cardzoo.envs.common.cards import CARD_NAMES
from cardzoo.envs.common.record import replay
from cardzoo.evaluation.cli import build_parser
from cardzoo.play import records
from cardzoo.play.table import Table
from cardzoo.play.views import Move, card_aliases, outcome_text, pick

CLI = [sys.executable, "-m", "cardzoo.evaluation.cli"]


def play(tmp_path, argv: list[str], lines: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    data = tmp_path / "data"
    return subprocess.run([*CLI, "play", *argv, "--data", str(data), "--save", str(tmp_path / "game.json")],
                          input="".join(line + "\n" for line in lines), capture_output=True, text=True,
                          timeout=timeout)


def saved(tmp_path) -> list[dict]:
    return [entry for _, entry in records.read(tmp_path / "data" / records.GAMES_FILE)]


def person_moves(record: dict, seat: int) -> list[tuple[int, list[int]]]:
    """Each of ``seat``'s moves in a record with the legal moves it had (replayed from the record)."""
    env = replay({**record, "actions": []})
    out = []
    for action in record["actions"]:
        if record.get("kind") == "parallel":
            obs = env._observations()[f"player_{seat}"]
            out.append((action[f"player_{seat}"], list(np.flatnonzero(obs["action_mask"]))))
            env.step(action)
        else:
            if env.agent_selection == f"player_{seat}":
                out.append((action, list(np.flatnonzero(env.observe(env.agent_selection)["action_mask"]))))
            env.step(action)
    return out


@pytest.mark.parametrize("game, options, agents, seat", [
    ("rope_team", ["-o", "level=hard"], ["human", "learned"], 0),
    ("rook", ["-o", "rounds=1"], ["heuristic", "human"], 1),
    ("summit_rush", [], ["human", "learned"], 0),
])
def test_a_whole_game_through_a_pipe(tmp_path, game, options, agents, seat):
    """Typing "1" at every prompt plays the first legal move each time, to the end; the game is saved, replays to
    the ending the terminal printed, and holds exactly those moves."""
    result = play(tmp_path, [game, "--seed", "11", *options, "--agents", *agents], ["1"] * 400)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    [entry] = saved(tmp_path)
    assert entry["finished"] and entry["where"] == "terminal"
    assert entry["seats"][f"player_{seat}"] == {"player": "human"}
    env = records.replay_entry(entry, "saved game")
    ending = outcome_text(entry["record"]["env"], records.final_info(env), seat)
    assert f"\n{ending}\n" in result.stdout and "game saved: " in result.stdout
    moves = person_moves(entry["record"], seat)
    assert moves and all(action == min(legal) for action, legal in moves)  # "1" is the first legal move
    assert json.loads((tmp_path / "game.json").read_text()) == entry["record"]  # --save: the same record
    assert result.stdout.count("your move> 1") == len(moves)  # each line echoed: a readable transcript


def rope_team_position(seed: int = 0):
    """Player_1's first decision in a Rope Team game (the partner has led): its hand, the led card, a card of
    another suit it holds while holding the led suit, and a card it does not hold."""
    for s in range(seed, seed + 50):
        table = Table.open("rope_team_v0", {}, ["simple", "human"], s)
        table.advance()
        t = table.views[1].table
        led, hand = t["led"], t["hand"]
        if any(c[1] == led[1] for c in hand) and any(c[1] != led[1] for c in hand):
            off = next(c for c in hand if c[1] != led[1])
            missing = next(c for c in CARD_NAMES if c not in hand and c != led)
            return s, table, off, missing
    raise AssertionError("no such deal")


def test_bad_input_is_refused_with_the_reason_and_asked_again(tmp_path):
    seed, table, off_suit, missing = rope_team_position()
    led = table.views[1].table["led"]
    n = len(table.views[1].legal)
    ten = next((c for c in CARD_NAMES if c[0] == "T" and c in table.views[1].table["hand"]), None)
    lines = ["xyz", "99", "0", off_suit.lower(), missing, "", "?", "7h > hello", "##", "q"]
    result = play(tmp_path, ["rope_team", "--seed", str(seed), "--agents", "simple", "human"], lines)
    assert result.returncode == 0 and result.stderr == ""
    out = result.stdout
    suit = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}[led[1]]
    expected = [
        "your move> xyz\n  ! 'xyz' names no move. Type a card (QS, 10h, th) or its number.",
        f"your move> 99\n  ! there is no move 99: choose 1..{n}",
        f"your move> 0\n  ! there is no move 0: choose 1..{n}",
        f"your move> {off_suit.lower()}\n  ! not now: you must follow {suit}",
        f"your move> {missing}\n  ! not now: that card is not in your hand",
        "your move> \nType a card (QS, 10h, th) or its number. ? help, q quit.",
        "your move> ?\nAt each of the person's turns",
        "your move> 7h > hello\n  ! nothing can be said in this game (it is silent): drop the '>' part",
        "your move> ##\n  ! '##' names no move.",
        "your move> q\n\nyou left the game\ngame saved (unfinished, after 1 move)",
    ]
    at = 0
    for text in expected:
        found = out.find(text, at)
        assert found >= 0, f"missing, in order: {text!r}\n{out[at:at + 2000]}"
        at = found + len(text)
    [entry] = saved(tmp_path)
    assert not entry["finished"] and entry["record"]["actions"] == table.env.unwrapped.game_record()["actions"]
    if ten:  # a ten by both of its names is the same legal move
        assert pick(table.views[1].legal, ten.lower()) == pick(table.views[1].legal, "10" + ten[1].lower())


def test_card_names_are_forgiving():
    assert set(card_aliases("QS")) == {"qs", "q♠"}
    assert set(card_aliases("TH")) == {"th", "10h", "t♥", "10♥"}
    assert card_aliases("XR") == ("xr", "rook")
    moves = [Move(10, "QC", "Q♣", "card", card_aliases("QC")), Move(21, "TD", "10♦", "card", card_aliases("TD"))]
    for typed, action in [("QC", 10), ("qc", 10), (" q c ", 10), ("10d", 21), ("Td", 21), ("10 D", 21), ("2", 21),
                          ("1", 10)]:
        assert pick(moves, typed).action == action, typed
    for typed in ("3", "0", "QD", "q", "10", "xyz", ""):
        assert pick(moves, typed) is None, typed


def test_rook_moves_by_name(tmp_path):
    """Bids by amount, a pass, trumps by suit name, draws by up/hidden: a whole round typed by name."""
    table = Table.open("rook_v0", {"rounds": 1}, ["human", "heuristic"], 2)
    typed = []
    while not table.over:
        table.advance()
        if table.over:
            break
        legal = table.views[0].legal
        move = next((m for m in legal if m.kind == "pass"), legal[0]) if legal[0].kind == "bid" else legal[-1]
        if move.kind == "bid":
            typed.append(move.code.split()[1])  # "50"
        elif move.kind == "card":
            typed.append("rook" if move.code == "XR" else move.code.replace("T", "10").lower())
        else:
            typed.append(move.code)  # pass, a suit's name, hidden
        typed[-1] = typed[-1].upper() if len(typed) % 2 else typed[-1]
        table.play(0, move.action)
    result = play(tmp_path, ["rook", "--seed", "2", "-o", "rounds=1", "--agents", "human", "heuristic"], typed)
    assert result.returncode == 0, result.stderr
    [entry] = saved(tmp_path)
    assert entry["finished"] and entry["record"]["actions"] == table.env.unwrapped.game_record()["actions"]
    assert f"\n{table.outcome(0)}\n" in result.stdout


SUMMIT_BAD = [
    ("7h > nonsense", "unknown message 'nonsense': type ?? for the messages"),
    ("zz", "'zz' names no move"),
    ("kh", "is not a face-up card of the peaks"),
]


def test_summit_rush_in_the_terminal_moves_messages_and_bad_input(tmp_path):
    """Turn-paced: one tick per line. A message after '>' is said with the move; bad lines are asked again."""
    table = Table.open("summit_rush_v0", {}, ["human", "simple"], 5)
    peaks = table.views[0].table["peaks"]
    gone = next(c for c in CARD_NAMES if c not in peaks and c not in table.views[0].table["piles"])
    lines = ["7h > nonsense", "zz", gone.lower(), "1 > need 9", "> don't turn", "w > #29", "q"]
    result = play(tmp_path, ["summit_rush", "--seed", "5", "--agents", "human", "simple"], lines)
    out = result.stdout
    assert result.returncode == 0 and "unknown message 'nonsense'" in out and "'zz' names no move" in out
    assert "is not a face-up card of the peaks" in out
    assert 'You said "I need a 9"' in out and 'You said "don\'t turn"' in out
    [entry] = saved(tmp_path)
    ticks = entry["record"]["actions"]
    n_moves = table.env.n_moves
    first = table.views[0].legal[0].action
    assert [t["player_0"] for t in ticks] == [10 * n_moves + first, 2 * n_moves + n_moves - 1,
                                              29 * n_moves + n_moves - 1]
    silent = play(tmp_path / "silent", ["summit_rush", "--seed", "5", "-o", "talk=false", "--agents", "human",
                                        "simple"], ["w > turn", "q"])
    assert "nothing can be said in this game (it is silent)" in silent.stdout


def test_end_of_input_leaves_the_game_unfinished_and_saved(tmp_path):
    result = play(tmp_path, ["rope_team", "--seed", "1", "--agents", "human", "learned"], ["1", "1"])
    assert result.returncode == 0 and result.stderr == ""
    assert "end of input: the game is left unfinished" in result.stdout
    [entry] = saved(tmp_path)
    assert not entry["finished"] and len(person_moves(entry["record"], 0)) == 2
    replayed = subprocess.run([*CLI, "replay", str(tmp_path / "data" / "games.jsonl")], capture_output=True,
                              text=True, timeout=60)
    assert replayed.returncode == 0 and "unfinished Replayed identically." in replayed.stdout
    assert json.loads((tmp_path / "game.json").read_text()) == entry["record"]


def test_ctrl_c_saves_the_game_and_ends_in_one_line(tmp_path):
    process = subprocess.Popen([*CLI, "play", "rook", "--seed", "4", "--agents", "human", "learned", "--data",
                                str(tmp_path / "data"), "--save", str(tmp_path / "game.json")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               # SIGINT's default even when the suite runs in the background (which ignores it)
                               preexec_fn=functools.partial(signal.signal, signal.SIGINT, signal.SIG_DFL))
    process.stdin.write("1\n")
    process.stdin.flush()
    seen = ""
    while seen.count("your move> ") < 2:  # the first move was made; the second prompt waits for input
        seen += process.stdout.read(1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err == "cardzoo play: interrupted\n"
    assert "game saved (unfinished, after" in out
    [entry] = saved(tmp_path)
    assert not entry["finished"] and person_moves(entry["record"], 0)[0][0] == 53  # bid 50, the first legal move
    assert json.loads((tmp_path / "game.json").read_text()) == entry["record"]


def test_the_play_page_commands_parse():
    section = (Path(__file__).resolve().parents[1] / "docs" / "play.md").read_text()
    commands = [line.split("#")[0].split()[1:] for line in section.splitlines() if line.startswith("cardzoo ")]
    assert len(commands) == 3
    for argv in commands:
        args = build_parser().parse_args(argv)
        assert args.func.__name__ in ("play", "serve")


def test_a_learned_partner_plays_a_talking_summit_rush_as_a_silent_one():
    """The shipped Summit Rush policies were trained on silent games: at a talking table they act on the observation
    without the heard pieces and say nothing, so with a person who only waits both games go the same way."""
    talking, silent = (Table.open("summit_rush_v0", {"talk": talk}, ["human", "learned"], 3) for talk in (True, False))
    n_moves = silent.env.n_moves
    while not silent.over:
        talking.tick({})
        silent.tick({})
    assert talking.over and talking.info["outcome"] == silent.info["outcome"]
    said = [tick["player_1"] for tick in talking.env.game_record()["actions"]]
    assert said == [tick["player_1"] for tick in silent.env.game_record()["actions"]]  # moves alone: message 0
    assert any(a < n_moves - 2 for a in said)  # it played cards


def test_a_learned_talking_partner_hears_and_speaks_at_a_talking_table():
    """``learned_talk`` was trained in talking games: at a talking table it reads the whole observation and says
    what its policy chooses (only the silent policies are made deaf); muted, it says nothing."""
    talking = Table.open("summit_rush_v0", {"level": "normal"}, ["human", "learned_talk"], 3)
    muted = Table.open("summit_rush_v0", {"level": "normal"}, ["human", "learned_talk_muted"], 3)
    for table in (talking, muted):
        while not table.over:
            table.tick({})
    n_moves = talking.env.n_moves
    assert any(tick["player_1"] >= n_moves for tick in talking.env.game_record()["actions"])  # it spoke
    assert all(tick["player_1"] < n_moves for tick in muted.env.game_record()["actions"])
    # No talking policy reads Hard's observation: learned_talk plays there as its fallback, simple_talk.
    hard = Table.open("summit_rush_v0", {"level": "hard"}, ["human", "learned_talk"], 3)
    while not hard.over:
        hard.tick({})
    learned_talk = getattr(hard.agents[1], "agent", hard.agents[1])  # the table's deaf wrapper, if any
    assert learned_talk.chosen == {"simple_talk agent (fallback, not a trained policy)"}


@pytest.mark.parametrize("game, players, title, words", [
    ("rope_team_v0", ["human", "simple"], "Rope Team", ["coin", "camp", "ropes", "fall", "2-7 pull 0 steps"]),
    ("rook_v0", ["human", "heuristic"], "Rook for Two", ["ROOK", "the Nest", "draw pile", "contract", "500"]),
    ("summit_rush_v0", ["human", "simple"], "Summit Rush", ["peaks", "pile", "stock", "round the corner", "wait"]),
])
def test_question_mark_shows_the_rules_and_legend_of_the_game_being_played(game, players, title, words):
    """``?`` prints the typing help, then this game's rules and legend: the same file the play page shows."""
    from cardzoo.play.terminal import Quit, Terminal
    from cardzoo.play.views import rules_text

    table = Table.open(game, {}, players, seed=0)
    typed, out = iter(["?\n", "q\n"]), []
    terminal = Terminal(table, read=lambda: next(typed), write=lambda *a, **k: out.append(" ".join(map(str, a))),
                        echo=False)
    with pytest.raises(Quit):
        terminal.run()
    text = "\n".join(out)
    rules = rules_text(game)
    assert "At each of the person's turns" in text and rules in text
    assert rules.startswith(title + ":")
    assert "Legend" in rules and all(word in rules for word in words), rules
    others = {g for g in ("rope_team_v0", "rook_v0", "summit_rush_v0") if g != game}
    assert not any(rules_text(other) in text for other in others)


def test_summit_rush_log_shows_the_moves_seen_on_the_table():
    """The log of a Summit Rush seat fills with what changed on the table: each peak card gone and the pile it went
    onto, each stock turned (it used to stay empty in a silent game)."""
    table = Table.open("summit_rush_v0", {"talk": False}, ["human", "simple"], seed=3)
    view = table.views[0]
    turned = False
    for _ in range(20):
        cards = [m for m in view.legal if m.kind == "card"]
        before = list(view.table["piles"])
        move = cards[0] if cards else next(m for m in view.legal if m.kind == "turn")
        turned |= move.kind == "turn"
        table.tick({0: move.action})
        if move.kind == "card":
            assert f"{move.label.split(' -> ')[0]} went onto {move.label.split(' -> ')[1]}" in view.log, view.log
        assert view.table["piles"] != before
        if table.over:
            break
    assert len(view.log) >= 10 and all(" went onto " in line or " stock: " in line for line in view.log), view.log
    assert any(line.startswith("Partner") for line in view.log) or any("partner's pile" in line for line in view.log)


def test_every_registered_game_has_its_rules_and_legend():
    """The page and the terminal's ``?`` read one rules file per game: a registered game without one fails here."""
    from cardzoo.envs.registry import GAMES
    from cardzoo.play.views import rules_text

    texts = {spec.env_id: rules_text(spec.env_id) for spec in GAMES.values()}
    assert len(texts) == len(GAMES) >= 3
    assert all("\nLegend\n" in text and max(map(len, text.splitlines())) <= 118 for text in texts.values())
    assert len(set(texts.values())) == len(texts)


def test_a_game_given_no_seed_is_dealt_from_a_64_bit_seed(tmp_path):
    """No --seed: the terminal deals from fresh_seed's 64 bits, as the server does (below 2**40 by chance once in
    16 million games; a 31-bit seed always is), and the saved game replays from it."""
    person = play(tmp_path / "person", ["rope_team", "--agents", "human", "learned"], ["1"])
    [entry] = saved(tmp_path / "person")
    agents = subprocess.run([*CLI, "play", "rope_team", "--agents", "simple", "simple", "--save",
                             str(tmp_path / "alone.json")], capture_output=True, text=True, timeout=120)
    alone = json.loads((tmp_path / "alone.json").read_text())
    assert person.returncode == 0 and agents.returncode == 0, (person.stderr, agents.stderr)
    for record in (entry["record"], alone):
        assert record["seed"] >= 2**40, record["seed"]
    assert replay(alone).terminations  # the agents' game replays whole from that seed
