"""torch.quasirandom.SobolEngine: Sobol' points as PyTorch draws them (same order, the first
point all zeros), checked against the definition and against SciPy's independent generator."""

from __future__ import annotations

import numpy as np
import pytest

import torch
from torch.quasirandom import SobolEngine

qmc = pytest.importorskip("scipy.stats.qmc", reason="SobolEngine's direction numbers are "
                          "SciPy's copy of Joe and Kuo's table")


def test_first_dimension_is_van_der_corput_in_gray_code_order():
    points = SobolEngine(1).draw(8, dtype=torch.float64)[:, 0].tolist()
    assert points == [0.0, 0.5, 0.75, 0.25, 0.375, 0.875, 0.625, 0.125]


@pytest.mark.parametrize("dimension", [1, 7, 40])
def test_unscrambled_points_equal_scipys(dimension):
    engine = SobolEngine(dimension)
    first = engine.draw(100, dtype=torch.float64).numpy()
    rest = engine.draw(412, dtype=torch.float64).numpy()
    expected = qmc.Sobol(dimension, scramble=False).random(512)
    np.testing.assert_array_equal(np.vstack([first, rest]), expected)
    assert engine.num_generated == 512


def test_counters_reset_fast_forward_out_and_dtype():
    engine = SobolEngine(3)
    assert engine.draw(2).dtype == torch.get_default_dtype()
    engine.reset().fast_forward(5)
    skipped = engine.draw(3, dtype=torch.float64)
    whole = SobolEngine(3).draw(8, dtype=torch.float64)
    assert torch.equal(skipped, whole[5:])
    out = torch.empty(0, dtype=torch.float64)
    assert engine.draw(2, out=out, dtype=torch.float64) is out and out.shape == (2, 3)
    assert (repr(SobolEngine(2, scramble=True, seed=3))
            == "SobolEngine(dimension=2, scramble=True, seed=3)")


def test_draw_base2_keeps_the_count_a_power_of_two():
    engine = SobolEngine(2)
    assert engine.draw_base2(2).shape == (4, 2)
    with pytest.raises(ValueError, match="require n to be a power of 2"):
        engine.draw_base2(1)  # 4 + 2 is not a power of 2
    assert engine.draw_base2(2).shape == (4, 2)  # 4 + 4 is


def test_dimension_range():
    with pytest.raises(ValueError, match=r"\[1, 21201\]"):
        SobolEngine(0)
    with pytest.raises(ValueError, match=r"\[1, 21201\]"):
        SobolEngine(21202)


def test_scrambled_points_keep_the_net_property_and_follow_the_seed():
    """A scrambled sequence's first 2^m points still put exactly one point in each interval
    [k / 2^m, (k + 1) / 2^m) of every dimension; the seed fixes the scramble."""
    points = SobolEngine(5, scramble=True, seed=7).draw_base2(6, dtype=torch.float64).numpy()
    assert ((points >= 0) & (points < 1)).all()
    for d in range(5):
        assert sorted(np.floor(points[:, d] * 64).astype(int).tolist()) == list(range(64))
    same = SobolEngine(5, scramble=True, seed=7).draw_base2(6, dtype=torch.float64).numpy()
    other = SobolEngine(5, scramble=True, seed=8).draw_base2(6, dtype=torch.float64).numpy()
    np.testing.assert_array_equal(points, same)
    assert not np.array_equal(points, other)
    # pairs of dimensions too: each of the 2^6 cells of a 2^3 x 2^3 grid holds one point
    cells = np.floor(points[:, :2] * 8).astype(int)
    assert len({tuple(c) for c in cells}) == 64
