"""Sign codes of rotated vectors: the share of differing bits estimates the angle, for dense
and for sparse vectors alike, and every process computes the same codes."""

from __future__ import annotations

import numpy as np
import pytest

from signet.store.sign_codes import SAMPLE_STEP, hamming, nearest, rotation, sign_codes


def _unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def test_the_rotation_is_orthogonal_and_the_same_in_every_process() -> None:
    r = rotation(384)
    assert np.allclose(r @ r.T, np.eye(384), atol=1e-4)
    rotation.cache_clear()
    assert np.array_equal(rotation(384), r)


def test_the_share_of_differing_bits_estimates_the_angle() -> None:
    rng = np.random.default_rng(3)
    base = _unit(rng.standard_normal((200, 384)))
    # Partners from nearly the same direction to nearly orthogonal.
    mix = np.linspace(0.05, 1.0, 200, dtype=np.float32)[:, None]
    other = _unit((1 - mix) * base + mix * _unit(rng.standard_normal((200, 384))))
    codes, partner = sign_codes(base), sign_codes(other)
    assert codes.shape == (200, 48) and codes.dtype == np.uint8
    shares = np.array([hamming(partner[i], codes[i : i + 1])[0] for i in range(200)]) / 384
    angles = np.arccos(np.clip(np.sum(base * other, axis=1), -1, 1)) / np.pi
    assert np.abs(shares - angles).max() < 0.1
    assert np.corrcoef(shares, angles)[0, 1] > 0.97


def test_sparse_vectors_get_informative_codes() -> None:
    # Feature-hashed bags of words are mostly zeros: unrotated, two unrelated ones would share
    # nearly every sign bit; rotated, they differ in about half, as unrelated vectors should.
    rng = np.random.default_rng(4)
    sparse = np.zeros((2, 384), dtype=np.float32)
    sparse[0, rng.choice(192, 12, replace=False)] = 1.0
    sparse[1, 192 + rng.choice(192, 12, replace=False)] = 1.0
    unrotated = np.packbits(sparse > 0, axis=1)
    assert hamming(unrotated[0], unrotated[1:])[0] <= 24
    codes = sign_codes(_unit(sparse))
    assert 150 <= hamming(codes[0], codes[1:])[0] <= 234


@pytest.mark.parametrize("order", ["random", "ascending", "descending", "flat", "few"])
def test_nearest_finds_the_smallest_distances_whatever_their_order(order: str) -> None:
    # The sample's histogram only places a first threshold: when it falls short (the
    # sampled rows were the nearest, "few") the threshold rises until `keep` are in.
    rng = np.random.default_rng(6)
    random = rng.binomial(384, 0.5, 50_000).astype(np.uint16)
    few = np.full(50_000, 300, dtype=np.uint16)
    few[::SAMPLE_STEP] = 10
    distances = {"random": random, "ascending": np.sort(random),
                 "descending": np.sort(random)[::-1].copy(),
                 "flat": np.full(50_000, 192, dtype=np.uint16), "few": few}[order]
    for keep in (1, 100, 4_000, 49_999, 50_000, 60_000):
        chosen = nearest(distances, keep)
        assert len(chosen) == min(keep, 50_000) == len(set(chosen.tolist()))
        assert distances[chosen].max() <= np.sort(distances)[min(keep, 50_000) - 1]


def test_distances_past_255_bits_do_not_wrap() -> None:
    codes = np.zeros((2, 48), dtype=np.uint8)
    codes[1] = 255  # every one of 384 bits differs from row 0
    assert hamming(codes[0], codes).tolist() == [0, 384]
