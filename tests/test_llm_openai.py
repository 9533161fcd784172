"""The ``llm:`` seat with the real ``openai`` client against a local OpenAI-compatible server (tests/fake_openai.py,
127.0.0.1, a free port) replaying scripted replies: good, malformed, illegal, empty, slow past the timeout, HTTP
errors, malformed bodies, hostile replies. Retries, the reasons sent back, the default, the records and the key."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

pytest.importorskip("openai")

from cardzoo.agents.llm.openai_chat import KeyInTheClearWarning  # noqa: E402
from cardzoo.agents.llm.seat import REPLY_CHARS, LanguageSeat, bound_text  # noqa: E402
from cardzoo.agents.loops import play_env_game  # noqa: E402
from cardzoo.agents.registry import make_agent  # noqa: E402
from cardzoo.envs import rope_team_v0  # noqa: E402
from cardzoo.envs.common.errors import OptionError  # noqa: E402
from cardzoo.envs.common.record import make_env  # noqa: E402
from tests.fake_openai import FakeOpenAI, Step  # noqa: E402

SECRET = "sk-test-0123456789-do-not-record"


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.delenv("CARDZOO_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def first_decision(script, query="", seed=1):
    """The seat's first decision of Rope Team game 1 (player_0 leads, every card in hand legal) against ``script``."""
    env = rope_team_v0.env()
    env.reset(seed=1)
    with FakeOpenAI(script).running() as fake:
        agent = make_agent(f"llm:scripted?base_url={fake.base_url}{query}", env, seed=seed)
        agent.reset(seed=seed)
        obs = env.observe(env.agent_selection)
        action = agent.act(obs["observation"], obs["action_mask"])
    assert obs["action_mask"][action] == 1
    return agent, action, fake, obs


def test_a_good_reply_is_played_and_recorded():
    agent, action, fake, obs = first_decision([Step("[play] 2C")])
    assert agent.view.move_name(action) == "2C"
    [decision] = agent.decisions
    assert decision["default"] is None and decision["move"] == "2C"
    assert [m["role"] for m in decision["prompt"]] == ["system", "user"]
    assert "Rope Team" in decision["prompt"][0]["content"] and "Legal moves: 1) 2C" in decision["prompt"][1]["content"]
    [attempt] = decision["attempts"]
    assert attempt["reply"] == "[play] 2C" and attempt["error"] is None
    assert attempt["prompt_tokens"] == 102 and attempt["completion_tokens"] == 2  # the server's usage, read back
    assert decision["seconds"] >= attempt["seconds"] > 0
    body = fake.requests[0]["body"]
    assert body["model"] == "scripted" and body["temperature"] == 0 and body["max_tokens"] == 64
    assert body["messages"] == decision["prompt"]
    assert agent.summary() == {"decisions": 1, "attempts": 1, "invalid": 0, "failed": 0, "first_legal": 1,
                               "defaults": 0, "prompt_tokens": 102, "completion_tokens": 2,
                               # the likelihood mode's counts: an endpoint that generates never says them
                               "new_prompt_tokens": None, "candidate_tokens": None,
                               "seconds": decision["seconds"]}


def test_refused_replies_are_answered_with_the_reason_and_asked_again():
    # malformed, then a card not in the hand (legal as a name, not as a move), then empty, then a good one
    agent, action, fake, obs = first_decision([Step("I am not sure what to do"), Step("7H"), Step(""),
                                               Step("3")], query="&max_retries=3")
    assert agent.view.move_name(action) == "9C"  # legal move number 3
    [decision] = agent.decisions
    errors = [a["error"] for a in decision["attempts"]]
    assert errors[3] is None and all(errors[:3])
    assert "names no move" in errors[0]
    assert "7H" in errors[1] and "hand" in errors[1]  # the view's reason: not your card
    assert errors[2] == "the reply was empty"
    # each new request carries the whole exchange so far: the refused reply and the reason sent back
    assert [len(r["body"]["messages"]) for r in fake.requests] == [2, 4, 6, 8]
    last = fake.requests[-1]["body"]["messages"]
    assert last[2] == {"role": "assistant", "content": "I am not sure what to do"}
    assert last[3]["role"] == "user" and last[3]["content"].startswith(f"That is not a legal move: {errors[0]}")
    assert errors[1] in last[5]["content"] and errors[2] in last[7]["content"]
    assert agent.summary()["invalid"] == 3 and agent.summary()["first_legal"] == 0


def test_after_max_retries_the_default_is_a_seeded_random_legal_move():
    defaults = []
    for seed in (5, 5, 6):
        agent, action, fake, obs = first_decision([Step("no idea")], query="&max_retries=2", seed=seed)
        [decision] = agent.decisions
        assert len(fake.requests) == 3 and len(decision["attempts"]) == 3
        assert decision["default"] == "3 replies refused" and decision["action"] == action
        defaults.append(action)
    rng = np.random.default_rng(5)
    legal = np.flatnonzero(obs["action_mask"])
    assert defaults[0] == defaults[1] == int(legal[rng.integers(len(legal))])  # the documented rule, seeded


def test_a_slow_server_times_out_and_the_default_is_played():
    agent, action, fake, obs = first_decision([Step("1", delay=1.5)], query="&timeout=0.3&retries=1")
    [decision] = agent.decisions
    assert len(fake.requests) == 2  # the request and one retry, both given up after 0.3 s
    assert decision["default"] == "no reply: no answer within 0.3 s (after 2 requests)"
    [attempt] = decision["attempts"]
    assert attempt["reply"] is None and 0.5 < attempt["seconds"] < 1.5
    assert agent.summary()["failed"] == 1 and agent.summary()["invalid"] == 0


def test_a_decision_budget_cuts_the_request_short():
    agent, action, fake, obs = first_decision([Step("1", delay=1.5)], query="&timeout=30&retries=0&budget=0.4")
    [decision] = agent.decisions
    assert decision["default"].startswith("no reply: no answer within 0.4 s")
    assert decision["seconds"] < 1.2


def test_server_errors_are_retried_and_client_errors_are_not():
    agent, action, fake, obs = first_decision([Step(status=500), Step("2C")], query="&retries=1")
    assert agent.decisions[0]["default"] is None and len(fake.requests) == 2
    agent, action, fake, obs = first_decision([Step(status=401), Step("2C")], query="&retries=3")
    assert len(fake.requests) == 1
    assert agent.decisions[0]["default"] == "no reply: HTTP 401 from the endpoint (after 4 requests)"


@pytest.mark.parametrize("step", [Step(raw=b"this is not json"), Step(raw=b'{"choices": []}'),
                                  Step(raw=b'{"choices": [{"message": {"content": 7}}]}')])
def test_a_malformed_response_is_a_failed_request(step):
    agent, action, fake, obs = first_decision([step], query="&retries=0")
    [decision] = agent.decisions
    assert decision["default"].startswith("no reply: ") and decision["attempts"][0]["reply"] is None


def test_a_reply_without_usage_has_no_token_counts():
    agent, *_ = first_decision([Step("2C", usage=False)])
    assert agent.summary()["prompt_tokens"] is None and agent.decisions[0]["attempts"][0]["prompt_tokens"] is None


def test_hostile_replies_are_bounded_and_kept_as_text():
    huge = "<script>alert(1)</script>\x1b[2J\u202e" + "A" * 100_000
    agent, action, fake, obs = first_decision([Step(huge), Step("\x1b]0;pwned\x07<b>2C</b>")], query="&max_retries=1")
    first, second = agent.decisions[0]["attempts"]
    assert len(first["reply"]) < REPLY_CHARS + 60
    assert re.search(r"\[\.\.\. truncated: \d+ more characters\]$", first["reply"])
    assert "<script>alert(1)</script>" in first["reply"]  # markup is text: kept as written, never interpreted
    assert "\x1b" not in first["reply"] and "\\u001b" in first["reply"] and "\\u202e" in first["reply"]
    assert "4000" in first["error"]  # the view refuses a huge reply unread and says so
    sent_back = fake.requests[1]["body"]["messages"][2]["content"]
    assert sent_back == first["reply"]  # the model is shown its reply bounded, never the raw bytes
    assert second["error"] is None and agent.view.move_name(action) == "2C"
    assert "\x1b" not in second["reply"] and "\x07" not in second["reply"]


def test_bound_text_marks_every_cut():
    assert bound_text("abc", 10) == "abc"
    assert bound_text("a" * 12, 10) == "a" * 10 + "[... truncated: 2 more characters]"
    assert bound_text("tab\tand\nnewline\x00") == "tab\tand\nnewline\\u0000"


def test_the_key_comes_from_the_environment_and_is_never_recorded():
    agent, action, fake, obs = first_decision([Step("2C")])
    assert fake.requests[0]["headers"]["authorization"] == f"Bearer {SECRET}"
    shown = json.dumps([agent.decisions, agent.settings(), agent.summary()]) + repr(agent) + repr(agent.backend)
    assert SECRET not in shown
    with pytest.raises(OptionError, match="never part of a spec"):
        make_agent(f"llm:m?api_key={SECRET}", "rope_team")


def test_a_base_url_with_credentials_is_recorded_without_them(monkeypatch):
    with pytest.raises(OptionError, match="without user:password"):
        make_agent("llm:m?base_url=http://user:hunter2@127.0.0.1:9/v1", "rope_team")
    monkeypatch.setenv("CARDZOO_LLM_BASE_URL", "http://user:hunter2@127.0.0.1:9/v1")
    agent = make_agent("llm:m", "rope_team")
    assert "hunter2" not in json.dumps(agent.settings()) and "hunter2" not in repr(agent.backend)
    assert agent.settings()["backend"]["base_url"] == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(("spec", "problem"), [
    ("llm:", "expected llm:NAME"),
    ("llm:m?temperature=hot", "temperature='hot', expected a finite float >= 0 and <= 2"),
    ("llm:m?temperature=3", "expected a finite float >= 0 and <= 2"),
    ("llm:m?temperature=nan", "temperature='nan', expected a finite float"),  # nan passed every comparison
    ("hf:/x?temperature=NaN", "temperature='NaN', expected a finite float"),
    ("llm:m?budget=inf", "budget='inf', expected a finite float > 0"),
    ("llm:m?timeout=-inf", "timeout='-inf'"),
    ("llm:m?max_retries=-1", "max_retries='-1'"),
    ("llm:m?colour=red", "unknown setting 'colour'"),
    ("llm:m?timeout=1&timeout=2", "timeout is given twice"),
    ("llm:m?base_url=ftp://x", "expected an http:// or https:// URL"),
    ("llm:m?legal_moves=maybe", "expected 1 or 0"),
    ("llm:m?device=cpu", "unknown setting 'device'"),
    ("llm:m?justtext", "key=value pairs"),
    ("hf:/no/such/folder", "not a folder holding a saved model"),
])
def test_bad_specs_say_what_is_wrong(spec, problem):
    with pytest.raises(OptionError, match=re.escape(problem)):
        make_agent(spec, "rope_team")


@pytest.mark.parametrize(("url", "warned"), [
    ("http://10.1.2.3:8000/v1", True), ("http://models.example.org/v1", True),
    ("https://models.example.org/v1", False), ("http://127.0.0.1:8000/v1", False), ("http://localhost:1/v1", False),
    ("http://[::1]:8000/v1", False),
])
def test_a_key_bound_for_plain_http_on_another_machine_is_warned_of_first(monkeypatch, url, warned):
    """The key goes wherever the spec points: sent in the clear across a network, it is warned of before any request
    (making the seat sends none), naming the variable and the endpoint but never the key."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_agent(f"llm:m?base_url={url}", "rope_team")
        monkeypatch.delenv("OPENAI_API_KEY")
        make_agent(f"llm:m?base_url={url}", "rope_team")  # no key, nothing to warn of
    found = [w for w in caught if issubclass(w.category, KeyInTheClearWarning)]
    assert len(found) == warned, [str(w.message) for w in caught]
    if warned:
        assert "OPENAI_API_KEY" in str(found[0].message) and "plain http" in str(found[0].message)
        assert SECRET not in str(found[0].message)


def test_the_key_warning_covers_the_base_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("MY_KEY", SECRET)
    monkeypatch.setenv("CARDZOO_LLM_BASE_URL", "http://192.0.2.7/v1")
    with pytest.warns(KeyInTheClearWarning, match="MY_KEY will be sent to http://192.0.2.7/v1"):
        make_agent("llm:m?api_key_env=MY_KEY", "rope_team")
    monkeypatch.delenv("CARDZOO_LLM_BASE_URL")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://192.0.2.8/v1")  # the client's own default
    with pytest.warns(KeyInTheClearWarning, match="192.0.2.8"):
        make_agent("llm:m?api_key_env=MY_KEY", "rope_team")


def test_the_base_url_may_come_from_the_environment(monkeypatch):
    with FakeOpenAI([Step("1")]).running() as fake:
        monkeypatch.setenv("CARDZOO_LLM_BASE_URL", fake.base_url)
        agent = make_agent("llm:from-env", "rope_team", seed=0)
        assert agent.settings()["backend"]["base_url"] == fake.base_url
    monkeypatch.setenv("CARDZOO_LLM_BASE_URL", "not a url")
    with pytest.raises(OptionError, match="CARDZOO_LLM_BASE_URL"):
        make_agent("llm:from-env", "rope_team")


def first_listed(messages):
    """A scripted player: the first legal move listed in the last state text (Summit Rush: waits)."""
    state = next(m["content"] for m in reversed(messages) if m["role"] == "user" and "Legal moves" in m["content"])
    return "1"if "Legal moves: 1)" in state else "wait"


@pytest.mark.parametrize("game", ["rope_team_v0", "rook_v0", "summit_rush_v0"])
def test_a_whole_game_through_the_runner_loop(game):
    options = {"rounds": 1} if game == "rook_v0" else {"level": "hard"} if game == "summit_rush_v0" else {}
    env = make_env(game, illegal_action="raise", **options)
    with FakeOpenAI([first_listed]).running() as fake:
        agents = [make_agent(f"llm:player?base_url={fake.base_url}", env, seed=s, seat=s) for s in (0, 1)]
        record = play_env_game(env, agents, seed=3)
    assert record["outcome"]
    for agent in agents:
        summary = agent.summary()
        assert summary["decisions"] > 0 and summary["defaults"] == 0 and summary["invalid"] == 0
        assert summary["first_legal"] == summary["decisions"] == summary["attempts"]
    assert len(fake.requests) == sum(a.summary()["attempts"] for a in agents)


def test_the_seat_checks_its_limits():
    with pytest.raises(ValueError, match="max_retries"):
        LanguageSeat(None, "rope_team", max_retries=-1)
    with pytest.raises(ValueError, match="budget"):
        LanguageSeat(None, "rope_team", budget=0)
