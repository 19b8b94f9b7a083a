"""Every deterministic rule: one constructed case it must catch and one it must pass."""

from agents.verify import classify
from agents.verify import feature_auditor as fa_mod
from agents.verify import result_auditor as ra
from agents.verify.feature_auditor import FeatureAudit, FeatureVerdict
from agents.verify.synthesis import synthesise

# ---- class rules ---------------------------------------------------------------------------


def test_qso_no_broad_catches_narrow_qso(make_result, make_line):
    res = make_result("QSO", 0.1, [make_line("H-beta", 4862.7, width="both", group="Balmer", fwhm_kms=400),
                                   make_line("[O III] 5008", 5008.2, group="[O III]")])
    assert classify.qso_needs_broad_line(res)[0].startswith("QSO-NO-BROAD")


def test_qso_no_broad_passes_broad_qso(make_result, make_line):
    res = make_result("QSO", 0.1, [make_line("H-beta", 4862.7, width="both", group="Balmer", fwhm_kms=4000)])
    assert classify.qso_needs_broad_line(res) == []


def test_gal_broad_catches_broad_balmer(make_result, make_line):
    res = make_result("GALAXY", 0.1, [make_line("H-alpha", 6564.6, width="both", group="Balmer", fwhm_kms=5000)])
    assert classify.galaxy_without_broad_lines(res)[0].startswith("GAL-BROAD")


def test_gal_broad_passes_narrow_galaxy(make_result, make_line):
    res = make_result("GALAXY", 0.1, [make_line("H-alpha", 6564.6, width="both", group="Balmer", fwhm_kms=300)])
    assert classify.galaxy_without_broad_lines(res) == []


def test_gal_stellar_z_catches_absorption_galaxy_at_rest(make_result, make_line):
    res = make_result("GALAXY", 0.0002, [make_line("Na D", 5895.6, kind="absorption", z=0.0002)])
    assert classify.galaxy_not_at_stellar_velocity(res)[0].startswith("GAL-STELLAR-Z")


def test_gal_stellar_z_passes_receding_galaxy(make_result, make_line):
    res = make_result("GALAXY", 0.05, [make_line("Na D", 5895.6, kind="absorption", z=0.05)])
    assert classify.galaxy_not_at_stellar_velocity(res) == []


def _feature(kind, wl, snr=30.0, fwhm_kms=200.0):
    from agents.tools.features import Feature, width_class
    return Feature(kind, wl, 1.0, fwhm_kms / 3e5 * wl, fwhm_kms, 5.0, 0.7, snr, 8, width_class(fwhm_kms))


def test_star_nebular_catches_forbidden_lines(make_result):
    res = make_result("STAR", 0.0, [])
    feats = [_feature("emission", 5008.2), _feature("emission", 6585.3)]
    assert classify.star_without_nebular_lines(res, feats)[0].startswith("STAR-NEBULAR")


def test_star_nebular_passes_absorption_star(make_result):
    res = make_result("STAR", 0.0, [])
    assert classify.star_without_nebular_lines(res, [_feature("absorption", 5008.2)]) == []


# ---- feature auditor ------------------------------------------------------------------------


def _one(make_result, make_pixels, lines, spectype="GALAXY", z=0.1, pix_lines=(), **pix):
    res = make_result(spectype, z, lines)
    audit = fa_mod.audit([res], make_pixels(lines=pix_lines, **pix), [])
    return {v.line: v for v in audit.verdicts}


def test_fa_sky_removes_airglow(make_result, make_pixels, make_line):
    ln = make_line("H-beta", 4862.7, width="both", observed=5578.0)
    assert _one(make_result, make_pixels, [ln])["H-beta"].rule == "FA-SKY"
    assert ln.audit == "REMOVE"


def test_fa_sky_keeps_clean_line(make_result, make_pixels, make_line):
    assert _one(make_result, make_pixels, [make_line("H-beta", 4862.7, width="both")])["H-beta"].value == "KEEP"


def test_fa_oh_zone_flags_red_line(make_result, make_pixels, make_line):
    v = _one(make_result, make_pixels, [make_line("[S II] 6718", 6718.3, z=0.2)])["[S II] 6718"]
    assert (v.value, v.rule) == ("FLAG", "FA-OH-ZONE")


def test_fa_oh_zone_passes_green_line(make_result, make_pixels, make_line):
    assert _one(make_result, make_pixels, [make_line("[O III] 5008", 5008.2, z=0.1, key=True)],
                )["[O III] 5008"].rule != "FA-OH-ZONE"


def test_fa_edge_removes_weak_blue_line(make_result, make_pixels, make_line):
    v = _one(make_result, make_pixels, [make_line("[O II]", 3728.5, z=0.05, snr=6, ridge=3)])["[O II]"]
    assert (v.value, v.rule) == ("REMOVE", "FA-EDGE")


def test_fa_edge_flags_dominant_blue_line(make_result, make_pixels, make_line):
    v = _one(make_result, make_pixels, [make_line("[O II]", 3728.5, z=0.05, snr=40, ridge=9)])["[O II]"]
    assert (v.value, v.rule) == ("FLAG", "FA-EDGE")


def test_fa_width_flags_broad_forbidden_line(make_result, make_pixels, make_line):
    v = _one(make_result, make_pixels, [make_line("[O III] 5008", 5008.2, fwhm_kms=3000)])["[O III] 5008"]
    assert v.rule == "FA-WIDTH"


def test_fa_width_passes_narrow_forbidden_line(make_result, make_pixels, make_line):
    verdicts = _one(make_result, make_pixels, [make_line("[O III] 5008", 5008.2, fwhm_kms=300)])
    assert verdicts["[O III] 5008"].value == "KEEP"


def _o3(a4960, a5008, z=0.1, fwhm_kms=300.0):
    """Pixels holding [O III] 4960 and 5008 with these peak heights (on a continuum of 10, S/N 20)."""
    return [(r * (1 + z), fwhm_kms / 299792.458 * r * (1 + z), a) for r, a in ((4960.3, a4960), (5008.2, a5008)) if a]


def test_fa_doublet_ratio_removes_4960_without_5008(make_result, make_pixels, make_line):
    """4960/5008 = 1/2.98: a 4960 whose 5008 is absent from the pixels cannot be [O III] (issue 50)."""
    lines = [make_line("[O III] 4960", 4960.3), make_line("[O III] 5008", 5008.2, status="NOT_FOUND")]
    v = _one(make_result, make_pixels, lines, pix_lines=_o3(5.0, 0.0))["[O III] 4960"]
    assert (v.value, v.rule) == ("REMOVE", "FA-DOUBLET-RATIO"), v


def test_fa_orphan_passes_lone_strong_member(make_result, make_pixels, make_line):
    lines = [make_line("[O III] 4960", 4960.3, status="NOT_FOUND"), make_line("[O III] 5008", 5008.2)]
    assert _one(make_result, make_pixels, lines)["[O III] 5008"].value == "KEEP"


def test_fa_doublet_ratio_flags_reversed_oiii(make_result, make_pixels, make_line):
    lines = [make_line("[O III] 4960", 4960.3, amplitude=9.0), make_line("[O III] 5008", 5008.2, amplitude=3.0)]
    assert _one(make_result, make_pixels, lines, pix_lines=_o3(9.0, 3.0))["[O III] 5008"].rule == "FA-DOUBLET-RATIO"


def test_fa_doublet_ratio_passes_three_to_one(make_result, make_pixels, make_line):
    lines = [make_line("[O III] 4960", 4960.3, amplitude=3.0), make_line("[O III] 5008", 5008.2, amplitude=9.0)]
    assert {v.value for v in _one(make_result, make_pixels, lines, pix_lines=_o3(3.0, 9.0)).values()} == {"KEEP"}


def test_fa_doublet_spacing_flags_wrong_separation(make_result, make_pixels, make_line):
    lines = [make_line("[O III] 4960", 4960.3, amplitude=3.0, observed=4960.3 * 1.1 - 12),
             make_line("[O III] 5008", 5008.2, amplitude=9.0)]
    assert _one(make_result, make_pixels, lines)["[O III] 4960"].rule == "FA-DOUBLET-SPACING"


def test_fa_cahk_depth_flags_shallow_k(make_result, make_pixels, make_line):
    lines = [make_line("Ca K", 3934.8, kind="absorption", z=0.1, amplitude=-1.0),
             make_line("Ca H", 3969.6, kind="absorption", z=0.1, amplitude=-4.0)]
    assert _one(make_result, make_pixels, lines)["Ca K"].rule == "FA-CAHK-DEPTH"


def test_fa_cahk_depth_passes_deeper_k(make_result, make_pixels, make_line):
    lines = [make_line("Ca K", 3934.8, kind="absorption", z=0.1, amplitude=-4.0),
             make_line("Ca H", 3969.6, kind="absorption", z=0.1, amplitude=-3.0)]
    assert _one(make_result, make_pixels, lines)["Ca K"].rule != "FA-CAHK-DEPTH"


# ---- result auditor -------------------------------------------------------------------------


def _galaxy(make_result, make_line, n=4, **kw):
    names = [("[O II]", 3728.5, "[O II]"), ("H-beta", 4862.7, "Balmer"), ("[O III] 5008", 5008.2, "[O III]"),
             ("H-alpha", 6564.6, "Balmer"), ("[N II] 6585", 6585.3, "[N II]")][:n]
    lines = [make_line(a, b, group=g, width="narrow" if g != "Balmer" else "both") for a, b, g in names]
    for ln in lines:
        ln.audit = "KEEP"
    return make_result("GALAXY", 0.1, lines, **kw)


def _audit(best, rival=None, snr=20.0, make_pixels=None, removed=()):
    results = [best] + ([rival] if rival else [])
    syn = synthesise(results)
    fa = FeatureAudit([FeatureVerdict(best.idx, n, 5000.0, "REMOVE", "FA-SKY", "test") for n in removed])
    return {o.rule: o for o in ra.audit_result(syn, fa, make_pixels(snr=snr), []).outcomes}, syn


def test_ra_support_catches_unsupported(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line, n=1)
    assert _audit(best, make_pixels=make_pixels)[0]["RA-SUPPORT"].cap == "LOW"


def test_ra_support_passes_supported(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line), make_pixels=make_pixels)[0]["RA-SUPPORT"].cap == "HIGH"


def test_ra_lines_caps_two_lines_at_medium(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line, n=2), make_pixels=make_pixels)[0]["RA-LINES"].cap == "MEDIUM"


def test_ra_lines_passes_many_lines(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line, n=5), make_pixels=make_pixels)[0]["RA-LINES"].cap == "HIGH"


def test_ra_snr_catches_noise(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line), snr=1.0, make_pixels=make_pixels)[0]["RA-SNR"].cap == "LOW"


def test_ra_snr_passes_clean(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line), snr=30.0, make_pixels=make_pixels)[0]["RA-SNR"].cap == "HIGH"


def test_ra_zscatter_catches_inconsistent_lines(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line)
    best.lines[1].observed += 30.0  # H-beta 30 A off: z disagrees by 0.006
    from agents.verify.analysis import _systemic
    _systemic(best)
    assert _audit(best, make_pixels=make_pixels)[0]["RA-ZSCATTER"].cap == "MEDIUM"


def test_ra_zscatter_passes_consistent_lines(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line), make_pixels=make_pixels)[0]["RA-ZSCATTER"].cap == "HIGH"


def test_ra_rival_catches_close_supported_rival(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line, delta_chi2=0.0)
    rival = _galaxy(make_result, make_line, idx=1, delta_chi2=5.0)
    rival.hypothesis.z = 0.3
    assert _audit(best, rival, make_pixels=make_pixels)[0]["RA-RIVAL"].cap == "LOW"


def test_ra_rival_passes_distant_rival(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line, delta_chi2=0.0)
    rival = _galaxy(make_result, make_line, idx=1, delta_chi2=500.0)
    rival.hypothesis.z = 0.3
    assert _audit(best, rival, make_pixels=make_pixels)[0]["RA-RIVAL"].cap == "HIGH"


def test_ra_removed_catches_two_removals(make_result, make_line, make_pixels):
    out, _ = _audit(_galaxy(make_result, make_line), make_pixels=make_pixels, removed=("H-beta", "H-alpha"))
    assert out["RA-REMOVED"].cap == "MEDIUM" and out["RA-REMOVED"].revision


def test_ra_removed_passes_none_removed(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line), make_pixels=make_pixels)[0]["RA-REMOVED"].cap == "HIGH"


def test_ra_anchor_catches_flagged_anchor(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line)
    best.lines[0].audit, best.lines[0].audit_rule = "FLAG", "FA-EDGE"  # [O II] is the anchor
    assert _audit(best, make_pixels=make_pixels)[0]["RA-ANCHOR"].cap == "MEDIUM"


def test_ra_anchor_passes_kept_anchor(make_result, make_line, make_pixels):
    assert _audit(_galaxy(make_result, make_line), make_pixels=make_pixels)[0]["RA-ANCHOR"].cap == "HIGH"


def test_ra_balmer_catches_missing_stronger_line(make_result, make_line, make_pixels):
    lines = [make_line("H-gamma", 4341.7, width="both", group="Balmer"),
             make_line("H-beta", 4862.7, width="both", group="Balmer", status="NOT_FOUND"),
             make_line("[O III] 5008", 5008.2, group="[O III]")]
    out, _ = _audit(make_result("QSO", 0.1, lines), make_pixels=make_pixels)
    assert out["RA-BALMER"].cap == "LOW"


def test_ra_balmer_passes_full_series(make_result, make_line, make_pixels):
    lines = [make_line("H-gamma", 4341.7, width="both", group="Balmer"),
             make_line("H-beta", 4862.7, width="both", group="Balmer")]
    out, _ = _audit(make_result("QSO", 0.1, lines), make_pixels=make_pixels)
    assert out["RA-BALMER"].cap == "HIGH"


def test_ra_explained_catches_unexplained_features(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line)
    feats = [_feature("emission", w) for w in (4500.0, 6000.0, 7000.0, 7400.0, 8000.0)]
    out = ra.rule_explained(best, synthesise([best]), FeatureAudit(), make_pixels(), feats)
    assert out.cap == "LOW"


def test_ra_explained_passes_explained_features(make_result, make_line, make_pixels):
    best = _galaxy(make_result, make_line)
    feats = [_feature("emission", ln.observed) for ln in best.lines]
    assert ra.rule_explained(best, synthesise([best]), FeatureAudit(), make_pixels(), feats).cap == "HIGH"


def test_credibility_is_the_lowest_cap(make_result, make_line, make_pixels):
    from agents.verify.analysis import _systemic
    best = _galaxy(make_result, make_line, n=5)
    for ln in best.lines:  # centred to 0.1 A: a z within the 25 km/s that HIGH needs (RA-ZPREC)
        ln.observed_err = 0.1
    _systemic(best)
    rival = _galaxy(make_result, make_line, idx=1, delta_chi2=500.0)
    rival.hypothesis.z = 0.3
    feats = [_feature("emission", ln.observed) for ln in best.lines]
    res = ra.audit_result(synthesise([best, rival]), FeatureAudit(), make_pixels(snr=30), feats)
    # every rule passes but the z's precision: five lines' 26 km/s (their scatter about systemic and
    # the galaxy floor) are more than the 25 km/s HIGH asks (RA-ZPREC), so the lowest cap is MEDIUM
    assert [o.rule for o in res.outcomes if o.cap != "HIGH"] == ["RA-ZPREC"], res.outcomes
    assert (res.verdict, res.credibility) == ("CONFIRM", "MEDIUM")
    res_noisy = ra.audit_result(synthesise([best, rival]), FeatureAudit(), make_pixels(snr=1.5), feats)
    assert res_noisy.credibility == "LOW"
