"""Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, ollama, llama.cpp's server, ...) through the
``openai`` client.

The key is read from the environment only (``api_key_env``, default ``OPENAI_API_KEY``; a local server that wants
none gets the placeholder ``"EMPTY"``); it is never an argument, never recorded and never in a ``repr``. It goes to
whatever endpoint the spec names: before a key is sent over plain http to a host that is not this machine, a
``KeyInTheClearWarning`` says so (``warn_if_key_in_clear``). The client's
own retries are off: ``retries`` failed requests (a timeout, a refused connection, HTTP 408/409/429/5xx, a malformed
response) are tried again here, at once, each one recorded by the seat as part of its decision's time; other HTTP
errors (400, 401, 403, 404, ...) are not retried. A request waits at most ``timeout`` seconds (less when the seat's
decision budget has less left).
"""

from __future__ import annotations

import os
import warnings
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from cardzoo.envs.common.addresses import is_loopback

from .seat import BackendError, Reply

RETRIED_STATUS = {408, 409, 429}  # and every 5xx


def _shown_url(url: str | None) -> str | None:
    """``url`` without any user:password part (a URL may carry one; records and reprs never do)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class KeyInTheClearWarning(UserWarning):
    """An API key is about to go to an endpoint on another machine over plain http, readable on the way."""


def warn_if_key_in_clear(url: str | None, api_key_env: str) -> None:
    """Warn (before any request) when the key in ``api_key_env`` would go to ``url`` unencrypted on the network:
    plain ``http://`` to a host that is not this machine. A local server over http is fine; so is any https."""
    parts = urlsplit(url or "")
    if parts.scheme == "http" and not is_loopback(parts.hostname or ""):
        warnings.warn(KeyInTheClearWarning(
            f"the key in {api_key_env} will be sent to {_shown_url(url)} over plain http, readable by anyone on the "
            "network between: use https, a local endpoint, or unset the variable (api_key_env=) if that server "
            "needs no key"), stacklevel=3)


class OpenAIChat:
    """Chat completions from ``model`` at ``base_url`` (None: the client's default, ``OPENAI_BASE_URL`` or OpenAI)."""

    def __init__(self, model: str, base_url: str | None = None, *, temperature: float = 0.0, max_tokens: int = 64,
                 timeout: float = 30.0, retries: int = 1, api_key_env: str = "OPENAI_API_KEY"):
        try:
            import openai
        except ImportError as err:
            raise ImportError("llm: agents need the openai client: pip install -e '.[llm]'") from err
        self.model, self.base_url, self.temperature, self.max_tokens = model, base_url, temperature, max_tokens
        self.timeout, self.retries, self.api_key_env = timeout, retries, api_key_env
        self._openai = openai
        key = os.environ.get(api_key_env)
        if key:
            warn_if_key_in_clear(base_url or os.environ.get("OPENAI_BASE_URL"), api_key_env)
        self._client = openai.OpenAI(api_key=key or "EMPTY", base_url=base_url, max_retries=0, timeout=timeout)

    def __repr__(self) -> str:
        return f"OpenAIChat(model={self.model!r}, base_url={_shown_url(self.base_url)!r})"

    def __deepcopy__(self, memo):  # a client holds sockets and locks: a copy gets a client of its own
        return OpenAIChat(self.model, self.base_url, temperature=self.temperature, max_tokens=self.max_tokens,
                          timeout=self.timeout, retries=self.retries, api_key_env=self.api_key_env)

    def describe(self) -> dict[str, Any]:
        return {"kind": "openai", "model": self.model, "base_url": _shown_url(self.base_url),
                "temperature": self.temperature, "max_tokens": self.max_tokens, "timeout": self.timeout,
                "retries": self.retries, "api_key_env": self.api_key_env}

    def complete(self, messages: list[dict[str, str]], timeout: float | None) -> Reply:
        openai = self._openai
        wait = self.timeout if timeout is None else min(self.timeout, timeout)
        problem = ""
        for _ in range(self.retries + 1):
            try:
                response = self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=self.temperature, max_tokens=self.max_tokens,
                    timeout=wait)
                return self._reply(response)
            except openai.APITimeoutError:
                problem = f"no answer within {wait:.2g} s"
            except openai.APIStatusError as err:
                problem = f"HTTP {err.status_code} from the endpoint"
                if err.status_code not in RETRIED_STATUS and err.status_code < 500:
                    break
            except openai.APIConnectionError as err:
                problem = f"cannot reach the endpoint ({type(err.__cause__ or err).__name__})"
            except (openai.APIResponseValidationError, BackendError, ValueError, TypeError, AttributeError) as err:
                problem = f"a malformed response ({type(err).__name__})"
        raise BackendError(f"{problem} (after {self.retries + 1} request{'s' * (self.retries > 0)})")

    @staticmethod
    def _reply(response) -> Reply:
        choices = getattr(response, "choices", None)
        if not choices:
            raise BackendError("the response has no choices")
        content = choices[0].message.content
        if content is not None and not isinstance(content, str):
            raise BackendError("the response's content is not text")
        usage = getattr(response, "usage", None)

        def count(name):
            value = getattr(usage, name, None)
            return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

        return Reply(content or "", count("prompt_tokens"), count("completion_tokens"))
