import numpy as np
import pytest

from agents.tools.measure import Arrays, _median, measure

WAVE = np.arange(4000.0, 5000.0, 1.0)


def gaussian_line(depth, sigma, center=4500.0):
    return 1.0 - depth * np.exp(-0.5 * ((WAVE - center) / sigma) ** 2)


def test_depth_ew_and_width_of_a_known_gaussian():
    a = Arrays.from_arrays(WAVE, 2.0 * gaussian_line(0.5, 10.0))  # continuum level must not matter
    win = dict(core=[4440, 4560], blue=[4400, 4430], red=[4570, 4600])
    assert measure(a, "line_depth", **win) == pytest.approx(0.5, abs=0.01)
    assert measure(a, "equivalent_width", **win) == pytest.approx(0.5 * 10 * np.sqrt(2 * np.pi), rel=0.02)
    assert measure(a, "emission_ew", **win) == pytest.approx(-0.5 * 10 * np.sqrt(2 * np.pi), rel=0.02)
    assert measure(a, "balmer_width", **win) == pytest.approx(2.3548 * 10, abs=1.5)


def test_band_depth_slope_and_snr():
    flux = np.where(WAVE > 4500, 0.7, 1.0)
    a = Arrays.from_arrays(WAVE, flux)
    assert measure(a, "band_depth", band=[4510, 4600], side=[4400, 4490]) == pytest.approx(0.3)
    assert measure(a, "continuum_slope", blue=[4000, 4100], red=[4900, 4999]) == pytest.approx(1 / 0.7)
    rng = np.random.default_rng(1)
    noisy = Arrays.from_arrays(WAVE, 10 + rng.normal(0, 0.5, WAVE.size), ivar=np.full(WAVE.size, 4.0))
    assert measure(noisy, "local_snr", window=[4100, 4900]) == pytest.approx(20, rel=0.05)
    no_ivar = Arrays.from_arrays(WAVE, 10 + rng.normal(0, 0.5, WAVE.size))
    assert measure(no_ivar, "local_snr", window=[4100, 4900]) == pytest.approx(20, rel=0.15)


def test_masked_or_missing_pixels_make_it_not_measurable():
    flux = gaussian_line(0.5, 10.0)
    mask = (WAVE > 4390) & (WAVE < 4440)  # the whole blue side band is bad
    a = Arrays.from_arrays(WAVE, flux, mask=mask)
    assert measure(a, "line_depth", core=[4440, 4560], blue=[4400, 4430], red=[4570, 4600]) is None
    assert measure(a, "line_depth", core=[6000, 6100], blue=[5900, 5950], red=[6200, 6250]) is None
    with pytest.raises(KeyError, match="known"):
        measure(a, "no_such_measure")


@pytest.mark.parametrize("n", [5, 6, 7, 40, 41, 1000, 1001])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_fast_median_is_numpys(n, dtype):
    x = np.random.default_rng(n).normal(size=n).astype(dtype)
    assert _median(x) == float(np.median(x))


@pytest.mark.parametrize("size", [3, 5, 7])
def test_the_running_median_is_np_median_over_each_window(size):
    """The min/max networks give the very numbers np.median gives on each edge-padded window, ties,
    NaN and infinities included, on one profile and on a stack of rows."""
    from agents.tools.measure import running_median

    rng = np.random.default_rng(size)
    x = rng.integers(0, 4, size=(40, 23)).astype(float)  # small integers: many ties
    x[rng.random(x.shape) < 0.05] = np.nan
    x[rng.random(x.shape) < 0.05] = np.inf
    x[rng.random(x.shape) < 0.05] = -np.inf
    x = np.vstack([x, rng.normal(size=(10, 23))])
    pad = size // 2
    windows = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((0, 0), (pad, pad)), mode="edge"), size, axis=1)
    expected = np.median(windows, axis=2)
    assert np.array_equal(running_median(x, size), expected, equal_nan=True)
    assert all(np.array_equal(running_median(row, size), want, equal_nan=True) for row, want in zip(x, expected, strict=True))


def _walk_one(w, r, sign, least):
    """The walk written out for one profile: out from the extreme while beyond the half level."""
    i = int(np.argmin(r) if sign < 0 else np.argmax(r))
    extreme = 1.0 - r[i] if sign < 0 else r[i] - 1.0
    if (extreme < least) if sign < 0 else (extreme <= least):
        return np.nan
    half = 1.0 - extreme / 2.0 if sign < 0 else 1.0 + extreme / 2.0
    beyond = (lambda v: v < half) if sign < 0 else (lambda v: v > half)
    lo = hi = i
    while lo > 0 and beyond(r[lo]):
        lo -= 1
    while hi < r.size - 1 and beyond(r[hi]):
        hi += 1
    return w[hi] - w[lo]


@pytest.mark.parametrize("sign,least", [(-1.0, 0.05), (1.0, 0.0)])
def test_walked_widths_walk_each_row_as_one_profile_is_walked(sign, least):
    """Lines at the ends, flat rows, NaN pixels and the extreme at either end, on a stack of rows."""
    from agents.tools.measure import walked_widths

    rng = np.random.default_rng(11)
    w = np.cumsum(rng.uniform(0.5, 2.0, 31)) + 4000.0
    centres = rng.integers(0, 31, (300, 1))
    r = 1.0 + sign * rng.uniform(0.0, 1.0, (300, 31)) * np.exp(-0.5 * ((np.arange(31) - centres) / 4.0) ** 2)
    r[:20] = 0.99  # too shallow a line, or no peak above the continuum
    r[20:40, 0] = 1.0 + sign * 2.0  # the extreme at an end
    r[40:60, -1] = 1.0 + sign * 2.0
    r[60:80, rng.integers(0, 31, 20)] = np.nan
    got = walked_widths(w, r, sign, least)
    expected = np.array([_walk_one(w, row, sign, least) for row in r])
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.isfinite(got).sum() > 200 and np.isnan(got[:20]).all()
