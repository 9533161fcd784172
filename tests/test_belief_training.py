"""The belief trainer (torch): the exported file's numpy inference is the torch model's, and a tiny run's data and
file are what the belief reads."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cardzoo.agents import rope_team_belief as belief  # noqa: E402
from cardzoo.training import belief as trainer  # noqa: E402
from cardzoo.training.export import export_layers  # noqa: E402


@pytest.mark.parametrize("hidden", [(32,), (24, 16)])
def test_numpy_inference_equals_the_torch_model(tmp_path, hidden):
    torch.manual_seed(1)
    net = trainer.Net(hidden)
    for p in net.parameters():  # larger weights than the initialisation's, so that ReLUs cut
        p.data.normal_(0, 0.5)
    path = export_layers(list(net.hidden), net.action, tmp_path / "b.npz",
                         {"env": "rope_team_v0", "kind": belief.KIND})
    x = np.random.default_rng(0).integers(0, 2, (64, belief.SIZE)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.as_tensor(x)).numpy()
    np.testing.assert_allclose(belief.BeliefNet(path).logits(x), expected, rtol=1e-4, atol=1e-4)


def test_self_play_data_hold_the_partners_true_hand():
    """Each row's partner hand lies in the row's allowed cards and has the hand size the observation implies."""
    packed, hands = trainer.play("simple", "hard", trainer.DATA_BASE_SEED, 40)
    x = np.unpackbits(packed, axis=1, count=belief.SIZE)
    allowed = belief._mask(x[:, -52:])
    assert len(hands) > 500
    assert np.all(hands & ~allowed == 0)
    sizes = np.array([int(h).bit_count() for h in hands])
    assert np.array_equal(sizes, belief.hand_sizes(x[:, : belief.OBS].astype(np.int8)))


def test_a_tiny_run_writes_a_belief_the_search_reads(tmp_path):
    cfg = trainer.BeliefConfig(blueprint="simple", levels=("hard",), games=30, held_out=10, hidden=(16,), epochs=1,
                               out=str(tmp_path / "tiny.npz"))
    meta = trainer.train(cfg, "test")
    net = belief.BeliefNet(cfg.out)
    assert net.meta["data"]["decisions"] == meta["data"]["decisions"] > 0
    assert set(net.meta["held_out"]["all"]) == {"loss", "uniform_loss", "accuracy", "uniform_accuracy"}
