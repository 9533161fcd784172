"""Rope Team's suit relabellings are symmetries of the game, and other-play sees the game through them."""

from __future__ import annotations

import numpy as np
import pytest

from cardzoo.envs.rope_team import rules, symmetry
from cardzoo.envs.rope_team.observer import LAYOUT, observe


class _Relabelled:
    """A generator whose shuffles are another's with every card relabelled: the later deals of the relabelled game."""

    def __init__(self, rng: np.random.Generator, card_map):
        self.rng, self.card_map = rng, np.asarray(card_map)

    def permutation(self, n: int) -> np.ndarray:
        return self.card_map[self.rng.permutation(n)]


def _replay(config: rules.Config, seed: int, card_map, choose_seed: int, views: bool = True
            ) -> tuple[rules.State, rules.State, dict]:
    """Play one game with random legal cards, and beside it the game dealt from the relabelled deck with the
    relabelled cards; assert after every card that the games agree, and (``views``) at every decision that the
    second shows each seat the relabelled observation and legal cards."""
    card_map = np.asarray(card_map)
    sigma = tuple(int(card_map[13 * s]) // 13 for s in range(4))
    rng = np.random.default_rng(seed)
    deck = rules.shuffled_deck(rng)
    relabelled_rng = np.random.default_rng(seed)
    rules.shuffled_deck(relabelled_rng)  # the same stream position as the original's after its deck
    a = rules.new_game(config, deck, rng)
    b = rules.new_game(config, [int(card_map[c]) for c in deck], _Relabelled(relabelled_rng, card_map))
    chooser = np.random.default_rng(choose_seed)
    seen = {"trumps": set(), "deals": 1}
    while not a.done:
        assert not b.done and a.to_move == b.to_move
        legal = rules.legal_mask(a)
        if views:
            for seat in (0, 1):
                assert np.array_equal(observe(b, seat), symmetry.permute_observation(observe(a, seat), sigma))
            assert rules.legal_mask(b) == symmetry.permute_mask(legal, sigma)
        cards = [c for c in range(52) if legal >> c & 1]
        card = cards[chooser.integers(len(cards))]
        rules.play(a, card)
        rules.play(b, int(card_map[card]))
        assert (a.coin, a.ropes, a.uncovered, a.deal) == (b.coin, b.ropes, b.uncovered, b.deal), "coin"
        assert b.trumps == symmetry.permute_suit(a.trumps, sigma)
        seen["trumps"].add(a.trumps)
        seen["deals"] = max(seen["deals"], a.deal)
    assert rules.summary(a) == rules.summary(b) and b.done, "summary"
    return a, b, seen


def test_a_relabelled_game_replays_to_the_relabelled_outcome():
    """Whole games on every level (and four ropes, for long games with later deals and many trump changes)
    replayed with the suits relabelled: every observation, legal set, coin, trumps and the outcome follow."""
    rng = np.random.default_rng(5)
    outcomes, trumps, deals = set(), set(), 1
    configs = [*rules.LEVELS.values(), rules.Config(ropes=4)]
    for game in range(40):
        sigma = symmetry.SUIT_PERMUTATIONS[1 + rng.integers(23)]
        a, _, seen = _replay(configs[game % len(configs)], 1000 + game, symmetry.card_permutation(sigma), game)
        outcomes.add(a.outcome)
        trumps |= seen["trumps"]
        deals = max(deals, seen["deals"])
    # the games exercised what the symmetry must carry: every trump suit, a later deal, a win and a fall
    assert trumps == {-1, 0, 1, 2, 3} and deals >= 2 and {rules.WIN, rules.FALL} <= outcomes


def test_relabelling_ranks_is_not_a_symmetry():
    """The replay can fail: swapping the ace and the two of every suit changes the steps and the trick winners, so
    the coin (or the outcome) of the relabelled game departs from the original's."""
    card_map = np.arange(52)
    for s in range(4):
        card_map[13 * s], card_map[13 * s + 12] = 13 * s + 12, 13 * s
    with pytest.raises(AssertionError, match="coin|summary"):
        for game in range(10):
            _replay(rules.LEVELS["normal"], 2000 + game, card_map, game, views=False)


def test_observation_relabelling_is_a_group_action():
    """Relabelling by sigma then by its inverse gives back the observation; the masks move with the hand."""
    rng = np.random.default_rng(0)
    obs = (rng.random((20, LAYOUT.size)) < 0.3).astype(np.int8)
    hand = LAYOUT.offsets["hand"]
    for sigma in symmetry.SUIT_PERMUTATIONS:
        back = symmetry.permute_observation(symmetry.permute_observation(obs, sigma), symmetry.inverse(sigma))
        assert np.array_equal(back, obs)
        moved = symmetry.permute_observation(obs, sigma)
        assert np.array_equal(moved[:, hand : hand + 52], symmetry.permute_action_mask(obs[:, hand : hand + 52], sigma))
    assert symmetry.card_permutation((1, 0, 3, 2))[:13].tolist() == list(range(13, 26))  # clubs become diamonds


def test_otherplay_relabels_observation_and_action_consistently():
    """The wrapper shows each seat the relabelled observation and mask of the real game (the mask of the relabelled
    observation is the relabelled mask), and maps each choice back to the real card it names: the engine, told to
    raise on an illegal card, plays whole games of random relabelled choices."""
    pytest.importorskip("torch")
    from cardzoo.training.otherplay import OtherPlay
    from cardzoo.training.ppo_batched import BatchedConfig, Engines

    class Spy:
        """The trainer's engines, keeping the real observations and masks they return."""

        def __init__(self, engines):
            self.engines, self.real = engines, None

        def reset(self):
            self.real = self.engines.reset()
            return self.real

        def step(self, actions):
            self.real = self.engines.step(actions)
            return self.real

        def inputs(self, obs, mask):
            return obs

        def wins(self, done):
            return self.engines.wins(done)

    cfg = BatchedConfig(levels=("easy", "expert"), num_envs=32, out="unused")
    inner = Engines(cfg, 32, 123)
    for engine in inner.engines:
        engine.illegal_action = "raise"
    spy = Spy(inner)
    wrapper = OtherPlay(spy, "rope_team", seed=1)
    obs, mask, seat = wrapper.reset()
    rng = np.random.default_rng(2)
    ended, relabelled = 0, 0
    for _ in range(200):
        real_obs, real_mask, real_seat = spy.real[:3]
        assert np.array_equal(seat, real_seat)
        for i in range(len(seat)):
            sigma = symmetry.SUIT_PERMUTATIONS[wrapper.draws[i, seat[i]]]
            relabelled += sigma != symmetry.SUIT_PERMUTATIONS[0]
            assert np.array_equal(obs[i], symmetry.permute_observation(real_obs[i], sigma))
            assert np.array_equal(mask[i], symmetry.permute_action_mask(real_mask[i], sigma))
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        obs, mask, seat, _, done = wrapper.step(actions)
        ended += int(done.sum())
    assert ended >= 20 and relabelled > 0.9 * 200 * 32


def test_otherplay_fine_tuning_run_writes_a_checked_policy(tmp_path):
    """A tiny run from the shipped policy with other-play: the critic warm-up leaves the actor exactly as loaded,
    the next rollout's update moves it, and the files are policies the numpy reader accepts."""
    pytest.importorskip("torch")
    from cardzoo.agents.learned import shipped_policy
    from cardzoo.agents.policy_file import read_policy
    from cardzoo.training import ppo_batched

    def run(name: str, steps: int):
        cfg = ppo_batched.BatchedConfig(
            levels=("hard",), steps=steps, num_envs=32, num_steps=8, minibatch_size=128, features="rope_team_scores",
            init="rope_team_v2", critic_warmup=1, otherplay=True, eval_games=8, eval_every=10**9, threads=1,
            out=str(tmp_path / name))
        ppo_batched.train(cfg, command="test")
        return read_policy(tmp_path / name / "final.npz")

    start = read_policy(shipped_policy("rope_team_v2"))
    warm, tuned = run("warm", 256), run("tuned", 512)
    assert warm.meta["config"]["otherplay"] and warm.meta["config"]["init"] == "rope_team_v2"
    for (w0, b0), (w1, b1) in zip([*start.weights, start.action], [*warm.weights, warm.action], strict=True):
        assert np.array_equal(w0, w1) and np.array_equal(b0, b1)
    assert not np.array_equal(start.action[0], tuned.action[0])


def test_bad_otherplay_options():
    pytest.importorskip("torch")
    from cardzoo.training import ppo_batched

    with pytest.raises(ValueError, match="--init and --imitate"):
        ppo_batched.BatchedConfig(init="rope_team_v2", imitate="simple")
    with pytest.raises(ValueError, match="symmetries"):
        ppo_batched.BatchedConfig(game="rook", otherplay=True)
    with pytest.raises(ValueError, match="features"):
        from cardzoo.training.cleanrl_ppo import Agent

        ppo_batched.load_actor(Agent(464, 52, (128, 128)), "rope_team_v2", None)


def test_partner_play_seats_the_simple_strategy_beside_the_learner():
    """With every game partnered, one seat per game is the learner (``learner`` rows: its seat to move) and the
    other plays the simple strategy's card as the features name it; the engine raises on an illegal card."""
    pytest.importorskip("torch")
    from cardzoo.agents.features import rope_team_scores
    from cardzoo.training.partners_batched import PartnerEngines
    from cardzoo.training.ppo_batched import BatchedConfig, Engines

    inner = Engines(BatchedConfig(levels=("normal", "hard"), num_envs=16, features="rope_team_scores", out="x"),
                    16, 77)
    played = []
    for engine in inner.engines:
        engine.illegal_action = "raise"
    step = inner.step
    inner.step = lambda actions: played.append(np.array(actions)) or step(actions)
    engines = PartnerEngines(inner, share=1.0, seed=3)
    obs, mask, seat = engines.reset()
    rng = np.random.default_rng(0)
    partner_moves = 0
    for _ in range(60):
        assert np.array_equal(engines.learner, seat == engines.me)
        engines.inputs(obs, mask)
        theirs = np.flatnonzero(~engines.learner)
        expected = [int(np.argmax(rope_team_scores(obs[i], mask[i])[-52:])) for i in theirs[:3]]
        obs, mask, seat, _, _ = engines.step(np.argmax(rng.random(mask.shape) * mask, axis=1))
        assert played[-1][theirs[:3]].tolist() == expected
        partner_moves += len(theirs)
    assert partner_moves > 0.4 * 60 * 16
