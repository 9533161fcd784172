"""Exporting a trained MLP actor to a numpy ``.npz`` policy file for ``cardzoo.agents.learned``.

``export_layers`` writes any torch MLP actor (hidden layers with one kind of activation, then a linear action
layer); ``export_policy`` is the MaskablePPO (sb3-contrib) case and ``cardzoo.training.rllib.export`` the RLlib one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch.nn as nn

ACTIVATION_NAMES = {nn.Tanh: "tanh", nn.ReLU: "relu"}


def export_layers(hidden: Iterable[nn.Module], action: nn.Linear, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write an actor to ``path``: ``hidden`` its hidden part in order (``nn.Linear`` layers, each followed by the
    same supported activation), ``action`` its output layer (the action logits)."""
    hidden = list(hidden)
    linears, activations = hidden[0::2], {type(m) for m in hidden[1::2]}
    if len(hidden) % 2 or not all(isinstance(m, nn.Linear) for m in linears) or nn.Linear in activations:
        raise ValueError(f"cannot export {[type(m).__name__ for m in hidden]}: expected Linear layers, each followed "
                         "by its activation")
    if len(activations) > 1 or (activations and next(iter(activations)) not in ACTIVATION_NAMES):
        raise ValueError(f"cannot export activations {activations}; supported: tanh, relu")
    activation = ACTIVATION_NAMES[next(iter(activations))] if activations else "tanh"
    arrays = {}
    for i, layer in enumerate(linears):
        arrays[f"w{i}"] = layer.weight.detach().cpu().numpy().T.astype(np.float32)
        arrays[f"b{i}"] = layer.bias.detach().cpu().numpy().astype(np.float32)
    arrays["action_w"] = action.weight.detach().cpu().numpy().T.astype(np.float32)
    arrays["action_b"] = action.bias.detach().cpu().numpy().astype(np.float32)
    full_meta = {**meta, "layers": len(linears), "activation": activation,
                 "observation_size": int(arrays["w0"].shape[0] if linears else arrays["action_w"].shape[0]),
                 "actions": int(arrays["action_b"].shape[0])}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, meta=np.array(json.dumps(full_meta)), **arrays)
    return path


def export_policy(model, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the actor of ``model`` (a MaskablePPO with an MLP policy on a flat observation) to ``path``."""
    policy = model.policy
    return export_layers(policy.mlp_extractor.policy_net, policy.action_net, path, meta)
