"""The ``hf:`` seat: a tiny randomly initialised transformers causal LM built here (a tiny config and a byte-level
BPE tokenizer trained on the games' rules, saved to tmp_path; nothing downloaded) plays a whole game of each game."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from cardzoo.agents.llm.tiny import build_tiny_model  # noqa: E402
from cardzoo.agents.loops import play_env_game  # noqa: E402
from cardzoo.agents.registry import make_agent  # noqa: E402
from cardzoo.envs.common.record import make_env  # noqa: E402

OPTIONS = {"rope_team_v0": {}, "rook_v0": {"rounds": 1}, "summit_rush_v0": {"level": "hard"}}


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # a download attempt fails instead of reaching out


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny"), seed=0)


@pytest.mark.parametrize("game", list(OPTIONS))
def test_the_tiny_model_plays_a_whole_game(tiny, game):
    env = make_env(game, illegal_action="raise", **OPTIONS[game])
    spec = f"hf:{tiny}?max_tokens=6&max_retries=1&threads=1"
    agents = [make_agent(spec, env, seed=seat, seat=seat) for seat in (0, 1)]
    record = play_env_game(env, agents, seed=11)
    assert record["outcome"]
    for agent in agents:
        s = agent.summary()
        assert s["decisions"] > 0 and s["failed"] == 0
        assert s["first_legal"] + sum(len(d["attempts"]) > 1 or d["default"] is not None
                                      for d in agent.decisions) == s["decisions"]
        for d in agent.decisions:
            assert 1 <= len(d["attempts"]) <= 2
            assert (d["default"] is not None) == all(a["error"] for a in d["attempts"])
            for a in d["attempts"]:
                assert a["prompt_tokens"] > 0 and 0 < a["completion_tokens"] <= 6
        assert s["prompt_tokens"] == sum(a["prompt_tokens"] for d in agent.decisions for a in d["attempts"])
        json.dumps(agent.decisions)  # records are plain JSON
    assert agents[0].backend._load()[0] is agents[1].backend._load()[0]  # one copy of the weights per process
    assert agents[0].settings()["backend"] == {"kind": "transformers", "path": str(tiny), "temperature": 0.0,
                                               "max_tokens": 6, "device": "cpu", "timeout": None, "threads": 1}


def test_greedy_replies_are_the_same_for_the_same_game(tiny):
    runs = []
    for _ in range(2):
        env = make_env("rope_team_v0", illegal_action="raise")
        agents = [make_agent(f"hf:{tiny}?max_tokens=4&max_retries=0&threads=1", env, seed=s) for s in (0, 1)]
        env.reset(seed=2)
        for agent in agents:
            agent.reset(seed=7)
        for _ in range(4):
            obs = env.observe(env.agent_selection)
            env.step(agents[env.possible_agents.index(env.agent_selection)].act(obs["observation"], obs["action_mask"]))
        runs.append([a["reply"] for agent in agents for d in agent.decisions for a in d["attempts"]])
    assert runs[0] == runs[1] and len(runs[0]) == 4


def test_a_prompt_longer_than_the_context_keeps_its_end_and_says_so(tmp_path):
    folder = build_tiny_model(tmp_path / "short", context=64)
    env = make_env("rope_team_v0", illegal_action="raise")
    env.reset(seed=0)
    agent = make_agent(f"hf:{folder}?max_tokens=4&max_retries=0&threads=1", env, seed=0)
    obs = env.observe(env.agent_selection)
    agent.act(obs["observation"], obs["action_mask"])
    [attempt] = agent.decisions[0]["attempts"]
    assert attempt["prompt_tokens"] == 60
    assert attempt["note"].startswith("the prompt's first ") and "context is 64" in attempt["note"]


def test_a_chat_template_writes_the_prompt(tmp_path):
    template = "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}<|assistant|>"
    folder = build_tiny_model(tmp_path / "chat", chat_template=template)
    agent = make_agent(f"hf:{folder}?threads=1", "rope_team")
    text = agent.backend.prompt_text([{"role": "system", "content": "rules"}, {"role": "user", "content": "state"}])
    assert text == "<|system|>rules<|user|>state<|assistant|>"


def test_sampling_is_seeded_by_the_seat(tiny):
    def replies(seed):
        env = make_env("rope_team_v0", illegal_action="raise")
        env.reset(seed=0)
        agent = make_agent(f"hf:{tiny}?temperature=1.5&max_tokens=8&max_retries=2&threads=1", env, seed=seed)
        obs = env.observe(env.agent_selection)
        agent.act(obs["observation"], obs["action_mask"])
        return [a["reply"] for a in agent.decisions[0]["attempts"]]

    first = replies(3)
    assert first == replies(3) and first != replies(4)
    assert len(set(first)) > 1  # sampled, not the same greedy reply each time


def test_describe_names_a_language_model(tiny):
    from cardzoo.agents.registry import describe

    assert describe(f"hf:{tiny}", "rope_team") == f"hf:{tiny}: a local transformers language model"
    assert describe("llm:m", "rook").endswith("a language model behind an OpenAI-compatible endpoint")


def test_a_pickled_checkpoint_is_refused_before_anything_is_loaded(tmp_path, tiny):
    """A folder whose weights are only ``pytorch_model.bin`` (a pickle: loading it runs what it carries) is refused
    with an error naming safetensors, and the pickle's code never runs; the same folder with safetensors plays."""
    import pickle
    import shutil

    from cardzoo.envs.common.errors import OptionError

    marker = tmp_path / "the pickle ran"

    class Payload:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    folder = tmp_path / "pickled"
    shutil.copytree(tiny, folder)
    for weights in folder.glob("*.safetensors"):
        weights.unlink()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps(Payload()))
    with pytest.raises(OptionError, match=r"no safetensors weights .*only pytorch_model.bin \(pickle"):
        make_agent(f"hf:{folder}", "rope_team", seed=0)
    assert not marker.exists()
    (folder / "pytorch_model.bin").unlink()
    with pytest.raises(OptionError, match="no safetensors weights"):  # and a folder with no weights at all
        make_agent(f"hf:{folder}", "rope_team", seed=0)
    assert make_agent(f"hf:{tiny}", "rope_team", seed=0).backend.path == tiny


def test_a_reply_reuses_the_previous_prompts_cache_and_is_the_reply_read_afresh(tiny):
    from cardzoo.agents.llm.local import LocalChat
    from cardzoo.agents.llm.seat import ANSWER, bound_text

    env = make_env("rope_team_v0", illegal_action="raise")
    agents = [make_agent(f"hf:{tiny}?max_tokens=6&max_retries=1&threads=1", env, seed=s, seat=s) for s in (0, 1)]
    play_env_game(env, agents, seed=5)
    attempts = [(d, a) for d in agents[0].decisions for a in d["attempts"]]
    assert len(attempts) > 5
    later = [a for _, a in attempts[1:]]
    assert attempts[0][1]["new_prompt_tokens"] == attempts[0][1]["prompt_tokens"]  # nothing to reuse yet
    assert all(a["new_prompt_tokens"] < a["prompt_tokens"] for a in later)  # the rules came from the cache
    fresh = LocalChat(tiny, max_tokens=6, threads=1)
    for decision, attempt in attempts:
        messages = list(decision["prompt"])
        for earlier in decision["attempts"]:
            if earlier is attempt:
                break
            messages += [{"role": "assistant", "content": earlier["reply"]},
                         {"role": "user", "content": f"That is not a legal move: {earlier['error']}. {ANSWER}"}]
        fresh._prefix = None  # read the whole prompt: the reply must not depend on what was cached
        assert bound_text(fresh.complete(messages, None).text) == attempt["reply"]
