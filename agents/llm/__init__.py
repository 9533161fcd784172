"""Language models at the table: an agent that reads a game's text view and answers with a move.

``LanguageSeat`` (``seat.py``) follows the agent protocol (``reset``, ``act(observation, action_mask)``): it writes
the seat's observation as text with the game's text view (``cardzoo.envs.text``), asks a chat backend for a move,
parses the reply, sends a refused move's reason back and asks again up to ``max_retries`` times, then plays the
documented default (a random legal move from the agent's seeded generator). Every decision is recorded: the
prompts, the replies (bounded), the tokens, the latency, the invalid attempts and whether the default was played.

Backends: ``OpenAIChat`` (``openai_chat.py``; any OpenAI-compatible chat-completions endpoint) and ``LocalChat``
(``local.py``; a ``transformers`` causal LM from a folder on disk), and ``CallableChat`` (``text_loop.py``) for any
``__call__(str) -> str`` agent. The agent specs ``llm:MODEL?...`` and ``hf:PATH?...`` (``specs.py``) make them from a
string wherever an agent name is taken. The seat contract and the recipe against a served model: docs/llm.md.
"""

from .seat import BackendError, LanguageSeat, Reply, bound_text

__all__ = ["BackendError", "LanguageSeat", "Reply", "bound_text"]
