"""A local OpenAI-compatible chat-completions server for the tests: a real HTTP server on 127.0.0.1 (a free port,
a thread of this process) that answers ``POST /v1/chat/completions`` from a script.

Each request takes the next step of the script (the last step repeats): a ``Step`` says what to answer (a reply's
text, an HTTP status, a body that is not JSON) and how long to wait first. A step may also be a function of the
request's messages returning the reply's text (a scripted player). Every request is kept (``requests``: its JSON
body and its headers) so tests can read what the client sent: the messages, the model, the key.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    content: str | None = ""  # the reply's text (None: a null content)
    delay: float = 0.0  # seconds to wait before answering
    status: int = 200
    raw: bytes | None = None  # a body sent as is (a malformed response)
    usage: bool = True  # send token counts


class FakeOpenAI:
    def __init__(self, script: list[Step | Callable[[list[dict]], str]]):
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def next_step(self, body: dict) -> Step:
        with self.lock:
            step = self.script[min(len(self.requests) - 1, len(self.script) - 1)]
        return Step(step(body["messages"])) if callable(step) else step

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @contextmanager
    def running(self) -> Iterator[FakeOpenAI]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    fake.requests.append({"path": self.path, "body": body, "headers": headers})
                step = fake.next_step(body)
                time.sleep(step.delay)
                if step.raw is not None:
                    data = step.raw
                elif step.status != 200:
                    data = json.dumps({"error": {"message": "scripted failure", "type": "server_error"}}).encode()
                else:
                    words = len((step.content or "").split())
                    data = json.dumps({
                        "id": f"chatcmpl-{len(fake.requests)}", "object": "chat.completion", "created": 0,
                        "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": step.content}}],
                        **({"usage": {"prompt_tokens": 100 + len(body["messages"]), "completion_tokens": words,
                                      "total_tokens": 100 + len(body["messages"]) + words}} if step.usage else {}),
                    }).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout step)
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        server.block_on_close = False
        self.server = server
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            server.shutdown()
            server.server_close()
