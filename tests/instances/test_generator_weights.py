"""Weights in the generators: every generator takes ``weights=(low, high)``; asking for them
leaves the rest of the instance unchanged, and the same seed gives the same weights."""

from __future__ import annotations

import numpy as np
import pytest

from coflowlab.instances import concurrent_open_shop, fb_like, single_port, uniform

GENERATORS = {
    "uniform": lambda weights, seed: uniform(4, 6, density=0.4, weights=weights, seed=seed),
    "cos": lambda weights, seed: concurrent_open_shop(3, 5, weights=weights, seed=seed),
    "single_port": lambda weights, seed: single_port(5, weights=weights, seed=seed),
    "fb_like": lambda weights, seed: fb_like(30, weights=weights, seed=seed),
}


@pytest.mark.parametrize("name", list(GENERATORS))
def test_weights_are_reproducible_and_in_range(name):
    """Tests that the same seed gives the same whole weights in [1, 4], and another seed may
    give others."""
    make = GENERATORS[name]
    a, b = make((1, 4), 3), make((1, 4), 3)
    assert a == b
    w = a.coflow_weight
    assert np.all((w >= 1) & (w <= 4) & (w == np.round(w)))
    draws = {tuple(make((1, 4), s).coflow_weight.tolist()) for s in range(5)}
    assert len(draws) > 1


@pytest.mark.parametrize("name", ["uniform", "cos", "fb_like"])
def test_weights_do_not_change_the_coflows(name):
    """Tests that asking for weights leaves ports, sizes and releases as without them (the
    weights are drawn after everything else)."""
    make = GENERATORS[name]
    plain, weighted = make(None, 11), make((1, 4), 11)
    assert np.all(plain.coflow_weight == 1)
    assert weighted.replace(coflow_weight=np.ones(plain.num_coflows)) == plain


def test_fb_like_rejects_bad_weight_ranges():
    """Tests that a bad range is refused, naming ``weights``."""
    for bad in ((3, 1), (-1, 2), (1.5, 2)):
        with pytest.raises(ValueError, match="weights"):
            fb_like(10, weights=bad, seed=0)
