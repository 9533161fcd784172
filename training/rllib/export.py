"""An RLlib PPO module's actor as a numpy policy file, the same format as the SB3 path (``training.export``), so
it plays through the torch-free ``LearnedAgent``, ``cardzoo play`` and ``cardzoo evaluate``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch.nn as nn

from ..export import export_layers


def actor_layers(module) -> list[nn.Module]:
    """The actor of a PPO module in order: its encoder's MLP (the actor's own, or the shared one), then the pi
    head. The last is the linear action layer; RLlib applies the action mask after it."""
    encoder = module.encoder
    actor = getattr(encoder, "actor_encoder", None) or encoder.encoder
    return [m for part in (actor, module.pi) for m in part.modules() if not list(m.children())]


def export_module(module, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the actor of ``module`` (``algo.get_module(policy_id)``) to ``path`` with ``meta``."""
    *hidden, action = actor_layers(module)
    if not isinstance(action, nn.Linear):
        raise ValueError(f"the pi head ends in {type(action).__name__}, not a linear action layer")
    return export_layers(hidden, action, path, {"library": "rllib", **meta})
