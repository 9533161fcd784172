"""Exporting a MaskablePPO MLP policy's actor to a numpy ``.npz`` file for ``cardzoo.agents.learned``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch.nn as nn

ACTIVATION_NAMES = {nn.Tanh: "tanh", nn.ReLU: "relu"}


def export_policy(model, path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the actor of ``model`` (a MaskablePPO with an MLP policy on a flat observation) to ``path``."""
    policy = model.policy
    linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
    activations = {type(m) for m in policy.mlp_extractor.policy_net if not isinstance(m, nn.Linear)}
    if len(activations) > 1 or (activations and next(iter(activations)) not in ACTIVATION_NAMES):
        raise ValueError(f"cannot export activations {activations}; supported: tanh, relu")
    activation = ACTIVATION_NAMES[next(iter(activations))] if activations else "tanh"
    arrays = {}
    for i, layer in enumerate(linears):
        arrays[f"w{i}"] = layer.weight.detach().cpu().numpy().T.astype(np.float32)
        arrays[f"b{i}"] = layer.bias.detach().cpu().numpy().astype(np.float32)
    arrays["action_w"] = policy.action_net.weight.detach().cpu().numpy().T.astype(np.float32)
    arrays["action_b"] = policy.action_net.bias.detach().cpu().numpy().astype(np.float32)
    full_meta = {**meta, "layers": len(linears), "activation": activation,
                 "observation_size": int(arrays["w0"].shape[0] if linears else arrays["action_w"].shape[0]),
                 "actions": int(arrays["action_b"].shape[0])}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, meta=np.array(json.dumps(full_meta)), **arrays)
    return path
