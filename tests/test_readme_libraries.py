"""The "Train with your own library" page's snippets (docs/tutorials/train-with-your-library.md) run as written, and
on every game: each is a tiny real training with the real library that must end with a finite loss, without one
illegal move (an ``IllegalActionWarning`` is an error here, so a library that ignored the mask would fail)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

PAGE = Path(__file__).resolve().parents[1] / "docs" / "tutorials" / "train-with-your-library.md"
GAMES = ("rope_team", "summit_rush", "rook")


def library_snippets() -> dict[str, str]:
    """The Python blocks of the page, named by the bold library name that introduces each."""
    blocks = re.findall(r"\*\*([^*]+)\*\*(?:(?!\*\*).)*?```python\n(.*?)```", PAGE.read_text(), re.S)
    return dict(blocks)


# AgileRL cannot share an environment with the other libraries (see the page): its snippets carry the `agilerl`
# marker, which the default test run deselects, and CI runs them in a venv of their own (`pytest -m agilerl`).
OWN_VENV = {"AgileRL": pytest.mark.agilerl}
# Ray RLlib pins an older gymnasium: its snippet carries the `rllib` marker, for a run without it
# (-m "not rllib and not agilerl": a -m of one's own replaces the default one, which leaves AgileRL out).
MARKS = {**OWN_VENV, "Ray RLlib": pytest.mark.rllib}


def cases() -> list:
    params = []
    for name, code in library_snippets().items():
        marks = [MARKS[name]] if name in MARKS else []
        if 'game = "rope_team"' in code:
            for game in GAMES:
                params.append(pytest.param(code.replace('game = "rope_team"', f'game = "{game}"'),
                                           id=f"{name}-{game}", marks=marks))
        else:
            params.append(pytest.param(code, id=name, marks=marks))
    return params


@pytest.fixture(autouse=True)
def one_thread():
    """2 shared cores: torch's default threads spin against each other and slow tiny networks tenfold."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_the_section_has_a_snippet_per_library():
    assert set(library_snippets()) == {"Stable-Baselines3 / sb3-contrib", "SuperSuit + MaskablePPO", "Tianshou 2",
                                       "TorchRL", "AgileRL", "Ray RLlib"}


@pytest.mark.filterwarnings("error::cardzoo.envs.common.errors.IllegalActionWarning")
@pytest.mark.parametrize("code", cases())
def test_snippet_trains_with_a_finite_loss(code, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what a snippet writes (an exported policy) stays out of the checkout
    torch.manual_seed(0)
    namespace: dict = {}
    exec(compile(code, PAGE.name, "exec"), namespace)
    loss = namespace["loss"]
    assert math.isfinite(loss.item() if isinstance(loss, torch.Tensor) else float(loss))
    assert "loss" in capsys.readouterr().out
