"""The core's copy of NumPy's ``default_rng(seed)`` (``src/util/numpy_rng.h``), from which the
local best response's roll-outs draw in the core: the same doubles as NumPy's generator, for
any seed below 2**64 and any count (a differential test against NumPy itself)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envs import _stud_core


@pytest.mark.parametrize("seed", [0, 1, 12345, 2 ** 32 - 1, 2 ** 32, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1])
def test_the_edges_of_one_and_two_seed_words(seed):
    # A seed below 2**32 is one 32-bit word of SeedSequence's entropy, one above it two.
    assert np.array_equal(_stud_core.numpy_random(seed, 5000), np.random.default_rng(seed).random(5000))


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2 ** 64 - 1), count=st.integers(0, 300))
def test_any_seed_gives_numpys_doubles(seed, count):
    assert np.array_equal(_stud_core.numpy_random(seed, count), np.random.default_rng(seed).random(count))


def test_a_seed_out_of_range_is_refused():
    with pytest.raises(TypeError):
        _stud_core.numpy_random(-1, 3)
    with pytest.raises(TypeError):
        _stud_core.numpy_random(2 ** 64, 3)
    with pytest.raises(ValueError, match="count"):
        _stud_core.numpy_random(0, -1)
