import pytest

from agents.tools.lines import lines_in_window, stagger_labels


def test_emission_lines_shift_with_redshift_and_sky_lines_do_not():
    z = 0.1
    got = {ln["name"]: ln["x"] for ln in lines_in_window(5000, 8000, z=z, kinds=("emission", "sky"))}
    assert got["H-alpha"] == pytest.approx(6564.6 * 1.1)
    assert got["[O I] 5577"] == pytest.approx(5577.3)


def test_rest_frame_axis_puts_lines_at_rest_and_moves_sky_lines():
    z = 0.1
    got = {ln["name"]: ln["x"] for ln in lines_in_window(4000, 7000, z=z, kinds=("emission", "sky"), rest_frame=True)}
    assert got["H-alpha"] == pytest.approx(6564.6)
    assert got["[O I] 6300"] == pytest.approx(6300.3 / 1.1)


def test_major_only_and_kinds_filter():
    all_abs = lines_in_window(3000, 10000, kinds=("absorption",))
    major = lines_in_window(3000, 10000, kinds=("absorption",), major_only=True)
    assert 0 < len(major) < len(all_abs)
    assert all(ln["kind"] == "absorption" for ln in all_abs)


def test_stagger_keeps_labels_on_one_level_apart():
    xs = [6549.8, 6564.6, 6585.3, 6718.3, 6732.7]
    names = ["[N II] 6550", "H-alpha", "[N II] 6585", "[S II] 6718", "[S II] 6733"]
    span, width = 400.0, 800
    levels = stagger_labels(xs, names, x_span=span, width_px=width)
    per_px = span / width
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            if levels[i] is not None and levels[i] == levels[j]:
                half_i = 0.5 * (len(names[i]) * 7 + 6) * per_px
                half_j = 0.5 * (len(names[j]) * 7 + 6) * per_px
                assert xs[i] + half_i <= xs[j] - half_j
    assert len(set(levels)) > 1  # these crowd: they cannot all share one level


def test_labels_that_fit_nowhere_are_dropped_not_overlapped():
    xs = [5000.0 + i for i in range(20)]  # twenty labels within 20 Å on a 5000 Å axis
    levels = stagger_labels(xs, ["[O III] 5008"] * 20, x_span=5000.0, width_px=800, levels=3)
    assert levels[:3] == [0, 1, 2] and all(lvl is None for lvl in levels[3:])
