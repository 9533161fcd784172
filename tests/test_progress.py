"""Progress output: a live bar on a terminal, one line per finished task in logs, nothing when switched off."""

import io

from cardzoo.envs.common import progress
from cardzoo.envs.common.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_off_a_terminal_one_line_at_the_end():
    out = io.StringIO()
    with Progress("rope_team normal", 10, stream=out) as p:
        for _ in range(10):
            p.update()
            assert out.getvalue() == ""  # nothing piles up in a log while the work runs
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "\r" not in out.getvalue()
    assert lines[0].startswith("  rope_team normal: 10/10 games in ")


def test_on_a_terminal_a_live_bar():
    out = Terminal()
    with Progress("rope_team normal", 4, stream=out) as p:
        p.update(2)
        p.update(2)
    text = out.getvalue()
    assert "\r" in text and "rope_team normal" in text and "4/4" in text


def test_on_a_terminal_without_tqdm_the_plain_line(monkeypatch):
    monkeypatch.setattr(progress, "_bar_class", lambda: None)
    out = Terminal()
    with Progress("rook", 3, unit="rounds", stream=out, initial=1) as p:
        p.update(2)
    assert out.getvalue().splitlines()[0].startswith("  rook: 3/3 rounds in ")


def test_disabled_prints_nothing_and_close_is_idempotent():
    for stream in (io.StringIO(), Terminal()):
        p = Progress("x", 5, stream=stream, enabled=False)
        p.update(5)
        p.close()
        p.close()
        assert stream.getvalue() == ""
    out = io.StringIO()
    p = Progress("x", 1, stream=out)
    p.close()
    p.close()
    assert len(out.getvalue().splitlines()) == 1


def test_counts_never_pass_the_total_and_notes_ride_along(monkeypatch):
    out = io.StringIO()
    with Progress("training", 256, unit="steps", stream=out) as p:
        p.set(128, note="loss 0.5")
        p.set(300, note="loss 0.25")  # a trainer that overshoots its rounded total still shows 256/256
    assert out.getvalue().startswith("  training: 256/256 steps in ") and out.getvalue().endswith(", loss 0.25\n")
    bar = Terminal()
    with Progress("training", 10, unit="steps", stream=bar) as p:
        p.set(5, note="loss 1.5")
    assert "loss 1.5" in bar.getvalue()


def test_lines_every_so_often_off_a_terminal(monkeypatch):
    clock = iter([0.0, 10.0, 20.0, 70.0, 80.0, 80.0])
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    with Progress("rllib", 4, unit="iterations", stream=out, every=60) as p:
        p.update()  # t = 10: too soon
        p.update()  # t = 20: too soon
        p.update()  # t = 70: a line
        p.update()  # t = 80: the work is done; only the closing line
    lines = out.getvalue().splitlines()
    assert lines == ["  rllib: 3/4 iterations so far 70.0 s", "  rllib: 4/4 iterations in 80.0 s"]
