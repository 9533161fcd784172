"""The other-play score of a policy: its win rate with itself when each seat sees every game through its own random
relabelling (:class:`cardzoo.training.otherplay.OtherPlay`), beside its self-play on the same held-out deals. Self-play
minus other-play is how much of a policy's play rests on conventions that name a suit; near zero, other-play
training has nothing to remove.

    python -m cardzoo.training.otherplay_score rope_team_v2 run/policy.npz --games 1000 --out score.json
"""

from __future__ import annotations

import numpy as np

from cardzoo.envs.registry import spec as game_spec

from .otherplay import OtherPlay


def other_play_rates(policy_path, levels, games: int, seed: int = 0, first_seed: int = 10_000_000
                     ) -> dict[str, float]:
    """The policy's win rate with itself when each seat sees every game through its own random relabelling (the
    other-play score; draws from ``seed``), on the deals ``first_seed + i`` of each level: how much of its
    self-play rests on conventions that name suits (self-play minus this)."""
    from cardzoo.agents.learned import NumpyPolicy

    from .ppo_batched import BatchedConfig, Engines, greedy

    policy = NumpyPolicy(policy_path)
    rates = {}
    for level in levels:
        cfg = BatchedConfig(levels=(level,), num_envs=games, features=policy.meta.get("features"), out="unused")
        engines = OtherPlay(Engines(cfg, games, first_seed), cfg.game, seed)
        obs, mask, _ = engines.reset()
        playing, won = np.ones(games, bool), np.zeros(games, bool)
        while playing.any():
            obs, mask, _, _, done = engines.step(greedy(policy, engines.inputs(obs, mask), mask))
            won |= playing & engines.wins(done)
            playing &= ~done
        rates[level] = float(won.mean())
    return rates


def main(argv: list[str] | None = None) -> dict:
    """``python -m cardzoo.training.otherplay_score POLICY... --games N --out FILE.json``: each policy's held-out
    self-play and other-play win rates per level (the same deals), one torch thread."""
    import argparse
    import json
    import shlex
    import sys
    from pathlib import Path

    import torch

    from cardzoo.agents.learned import NumpyPolicy, shipped_policy

    from .ppo_batched import BatchedConfig, evaluate

    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m cardzoo.training.otherplay_score", description=main.__doc__)
    parser.add_argument("policies", nargs="+", help="policy files (.npz) or shipped policy names")
    parser.add_argument("--games", type=int, default=1000, help="held-out deals per level")
    parser.add_argument("--draws", type=int, default=2, help="other-play scores, each with its own relabellings")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    levels = game_spec("rope_team").levels
    result = {"command": "python -m cardzoo.training.otherplay_score " + shlex.join(argv), "games": args.games,
              "policies": {}}
    for name in args.policies:
        path = Path(name) if name.endswith(".npz") else shipped_policy(name)
        features = NumpyPolicy(path).meta.get("features")
        self_play = evaluate(path, BatchedConfig(features=features, out="unused"), args.games)
        other = [other_play_rates(path, levels, args.games, seed=k) for k in range(args.draws)]
        result["policies"][name] = {"self_play": self_play, "other_play": other,
                                    "self_minus_other": {lv: self_play[lv] - float(np.mean([o[lv] for o in other]))
                                                         for lv in levels}}
        print(name, json.dumps(result["policies"][name]), flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    return result


if __name__ == "__main__":
    main()
