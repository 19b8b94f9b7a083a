"""Which trajectories the claim checker has checked (table claim_checks, schema V16; issue 48): written
with the results, a check that found no claim included, so that a campaign's pending checks are the
trajectories without a row of the current version. Real rules trajectories on a real demo spectrum, in
a real DuckDB file."""
import duckdb
from databases import undo_version_16

from agents.claims import check_trajectory
from reviewer.services.claim_checks import pending, pending_count
from reviewer.services.claims import CHECKER_VERSION, check_and_store, claim_rows, llm_version
from reviewer.store import Store
from reviewer.store.schema import MIGRATIONS, migrate

A_STAR = "spec-55862-B6212_sp01-001.fits.gz"  # LAMOST A1IV (tests/reviewer/store/test_claims_store.py)


def _vetted(demo_dir, n: int):
    from agents.spectra import read_spectrum
    from agents.vet import vet_spectrum

    spec = read_spectrum(demo_dir / A_STAR)
    return spec, [vet_spectrum(spec, "a", spectrum_id="sA") for _ in range(n)]


def test_a_check_that_found_no_claim_is_a_check_done(tmp_path, demo_dir):
    spec, (checked, empty, other_version, with_model, unchecked) = _vetted(demo_dir, 5)
    with Store(tmp_path / "c.duckdb") as store:
        store.trajectories.save_trajectories([checked, empty, other_version, with_model, unchecked])
        assert pending_count(store) == 5
        assert check_and_store(store, checked, spec)  # claims found and stored
        store.claims.save_claims_of(CHECKER_VERSION, [(empty.id, [])])  # checked: nothing to check
        store.claims.save_claims(other_version.id, "claims-0", claim_rows(check_trajectory(other_version, spec)))
        store.claims.save_claims(with_model.id, llm_version("m"), [])  # a model helped: the same checker
        assert sorted(pending(store)) == sorted([other_version.id, unchecked.id])  # an older checker's: pending
        assert pending(store, [checked.id, unchecked.id, "no such id"]) == [unchecked.id]
        store.claims.save_claims(other_version.id, CHECKER_VERSION, [])  # cleared: still a check done
        assert pending(store) == [unchecked.id]
        assert pending_count(store, [checked.id, empty.id]) == 0
        n_claims = dict(store.db.execute("SELECT trajectory_id, n_claims FROM claim_checks WHERE checker_version = ?",
                                         [CHECKER_VERSION]).fetchall())
        assert n_claims[checked.id] == len(store.claims.claims_for(checked.id)) > 0 and n_claims[empty.id] == 0


def test_an_upgraded_database_counts_its_stored_results_as_checks(tmp_path, demo_dir):
    spec, (checked, unchecked) = _vetted(demo_dir, 2)
    path = tmp_path / "old.duckdb"
    with Store(path) as store:
        store.trajectories.save_trajectories([checked, unchecked])
        check_and_store(store, checked, spec)
    con = duckdb.connect(str(path))
    undo_version_16(con)
    assert con.execute("SELECT count(*) FROM claim_results").fetchall()[0][0] > 0
    assert migrate(con) == len(MIGRATIONS)
    con.close()
    with Store(path) as store:
        assert pending(store) == [unchecked.id]
