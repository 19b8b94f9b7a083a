from datetime import UTC, datetime, timedelta

import pytest

from reviewer.services.curation import CURATION_STATES, apply_revisions, curation_state, curation_status, result_step_for

T0 = datetime(2026, 3, 1, tzinfo=UTC)


class History:
    """Curation rows in time order, as the store returns them."""

    def __init__(self):
        self.events, self.revisions, self.t = [], [], 0

    def _at(self):
        self.t += 1
        return T0 + timedelta(minutes=self.t), self.t

    def revise(self, who="rev", step=1):
        at, seq = self._at()
        self.revisions.append({"reviewer": who, "step_idx": step, "version": 1, "created_at": at, "seq": seq})
        return self

    def add(self, who, event, value=None):
        at, seq = self._at()
        self.events.append({"reviewer": who, "event": event, "value": value, "created_at": at, "seq": seq})
        return self

    def state(self, **rules):
        return curation_state(self.events, self.revisions, **rules)


def test_full_path_draft_to_accepted():
    h = History()
    assert h.state() == "draft"
    h.revise("rev")
    assert h.state() == "revised"
    h.add("aud1", "audit", "approve")
    assert h.state() == "revised"
    h.add("aud2", "audit", "approve")
    assert h.state() == "voting"
    h.add("rev", "vote", "accept").add("aud1", "vote", "accept")
    assert h.state() == "voting"  # unanimity: 2 of 3 is not enough
    assert h.state(accept_votes=2) == "accepted"
    h.add("aud2", "vote", "accept")
    assert h.state() == "accepted"
    assert set(CURATION_STATES) >= {"draft", "revised", "changes_requested", "voting", "accepted", "rejected"}


def test_request_changes_sends_it_back_and_a_new_revision_needs_fresh_audits():
    h = History().revise("rev").add("aud1", "audit", "approve").add("aud2", "audit", "request_changes")
    status = curation_status(h.events, h.revisions)
    assert status.state == "changes_requested" and status.change_requests == ["aud2"]
    h.revise("rev")
    assert h.state() == "revised"  # the earlier approval belonged to the previous round
    h.add("aud1", "audit", "approve").add("aud2", "audit", "approve")
    assert h.state() == "voting"


def test_the_reviser_cannot_audit_their_own_revision():
    h = History().revise("rev").add("rev", "audit", "approve").add("aud1", "audit", "approve")
    status = curation_status(h.events, h.revisions)
    assert status.state == "revised" and status.approvals == ["aud1"]
    assert status.ignored == ["rev: audit of their own revision"]


def test_an_auditor_changing_their_mind_counts_once():
    h = History().revise().add("aud1", "audit", "request_changes").add("aud1", "audit", "approve")
    h.add("aud2", "audit", "approve")
    assert h.state() == "voting"


def test_one_reject_vote_rejects_under_unanimity_but_not_under_majority():
    h = History().revise().add("a", "audit", "approve").add("b", "audit", "approve")
    h.add("a", "vote", "reject")
    assert h.state() == "rejected"
    assert h.state(accept_votes=2) == "voting"
    h.add("b", "vote", "reject")
    assert h.state(accept_votes=2) == "rejected"


def test_revise_event_alone_counts_as_a_revision_and_reopens_accepted_items():
    h = History().add("rev", "revise")
    assert h.state() == "revised"
    h.add("a", "audit", "approve").add("b", "audit", "approve")
    for who in ("rev", "a", "b"):
        h.add(who, "vote", "accept")
    assert h.state() == "accepted"
    h.revise("rev")
    assert h.state() == "revised"


def test_votes_must_be_valid_numbers():
    with pytest.raises(ValueError):
        curation_state([], [], accept_votes=4)


# -- revisions on a real trajectory ----------------------------------------------------------
@pytest.fixture(scope="module")
def vetted(shared_spectra, manifest):
    from agents.spectra import read_spectrum
    from agents.vet.run import vet_spectrum

    row = next(r for r in manifest if r["survey"].startswith("LAMOST-LRS") and r["subclass"].startswith("A"))
    spec = read_spectrum(shared_spectra / row["file"].partition("#")[0])
    return vet_spectrum(spec, "a", eager_renders=True), spec


def test_revised_zoom_is_rerendered_and_text_replaced(vetted):
    traj, spec = vetted
    call = next(s for s in traj.steps if s.kind == "tool_call")
    result_idx = result_step_for(traj, call.index)
    old_sha = traj.steps[result_idx].image_sha
    think = next(s for s in traj.steps if s.kind == "think")
    revs = [
        {"step_idx": call.index, "version": 1, "tool_args": {"wavelength_range": [4800, 4920], "label": "H-beta"},
         "text": None, "created_at": T0},
        {"step_idx": think.index, "version": 1, "text": "old edit", "tool_args": None, "created_at": T0},
        {"step_idx": think.index, "version": 2, "text": "Balmer lines are deep.", "tool_args": None,
         "created_at": T0 + timedelta(seconds=1)},
    ]
    revised = apply_revisions(traj, revs, spec)
    shown = revised.steps[result_idx]
    assert revised.steps[think.index].text == "Balmer lines are deep."
    assert shown.tool_args == {"wavelength_range": [4800, 4920], "label": "H-beta"}
    assert shown.label == "H-beta" and revised.steps[call.index].label == "H-beta"
    assert "(4800, 4920)" in shown.text and not shown.is_error
    assert shown.image_sha != old_sha and revised.images[shown.image_sha][:8] == b"\x89PNG\r\n\x1a\n"
    assert shown.data["plotted_range"] == [4800, 4920]
    # the original is untouched
    assert traj.steps[result_idx].image_sha == old_sha and traj.steps[think.index].text != "Balmer lines are deep."


def test_revision_without_spectrum_defers_the_render(vetted):
    traj, _ = vetted
    call = next(s for s in traj.steps if s.kind == "tool_call")
    revised = apply_revisions(traj, [{"step_idx": call.index, "version": 1, "created_at": T0,
                                      "tool_args": {"wavelength_range": [6500, 6600]}}])
    shown = revised.steps[result_step_for(traj, call.index)]
    assert shown.image_sha is None and shown.data["deferred"] is True


def test_revision_of_a_missing_step_is_an_error(vetted):
    traj, _ = vetted
    with pytest.raises(ValueError):
        apply_revisions(traj, [{"step_idx": 999, "version": 1, "created_at": T0, "text": "x"}])
