"""Database schema as ordered migrations.

`MIGRATIONS[i]` brings the database from version i to i + 1. Each one runs once, inside a
transaction together with the row that records it in `schema_version`, so a migration that fails
leaves both the tables and the version as they were. Never edit a migration that has shipped:
append a new one.

Human actions (reviews, VI labels, annotations, ratings, preferences, revisions, curation events,
claim flags) are append-only: a change is a new row and the latest row wins (`created_at`, then `seq`, the
insertion order). Their ids are client-generated UUIDs, so a retried write is a no-op
(`INSERT ... ON CONFLICT DO NOTHING`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from reviewer.store.pair_counts import RATING_PAIRS_SQL, VERDICT_PAIRS_SQL

BOOTSTRAP = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    description VARCHAR NOT NULL,
    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
"""


@dataclass(frozen=True)
class Migration:
    description: str
    sql: str


V1_CORE = Migration("spectra, tasks, trajectories, steps, images, reviewers, labels, audit sessions", """
CREATE SEQUENCE label_seq;

CREATE TABLE spectra (
    spectrum_id VARCHAR PRIMARY KEY,   -- short hash of (file sha256, target)
    source_path VARCHAR NOT NULL,
    file_name VARCHAR NOT NULL,        -- basename, for search
    target VARCHAR,                    -- DESI TARGETID / row; NULL for single-spectrum files
    survey VARCHAR,
    object_id VARCHAR,                 -- always text: int64 ids must not become floats
    ra DOUBLE,
    dec DOUBLE,
    pipeline_class VARCHAR,
    pipeline_subclass VARCHAR,
    pipeline_z DOUBLE,
    snr DOUBLE,
    n_pix INTEGER,
    wave_min DOUBLE,
    wave_max DOUBLE,
    format VARCHAR,
    wavelength_medium VARCHAR,
    file_sha256 VARCHAR NOT NULL,
    header JSON,
    ingested_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX spectra_file_idx ON spectra (file_sha256);

CREATE TABLE tasks (
    task_id VARCHAR PRIMARY KEY,
    title VARCHAR,
    spec JSON,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE trajectories (
    id VARCHAR PRIMARY KEY,
    spectrum_id VARCHAR,
    source_path VARCHAR,
    target VARCHAR,
    task VARCHAR NOT NULL,
    agent_name VARCHAR NOT NULL,
    backend VARCHAR NOT NULL,
    model VARCHAR,
    agent_version VARCHAR,
    answer VARCHAR,          -- YES/NO for vet, the class/type for verify (from outcome)
    answer_z DOUBLE,
    credibility VARCHAR,
    n_steps INTEGER NOT NULL,
    n_tool_calls INTEGER NOT NULL,
    outcome JSON,
    schema_version INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    saved_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX trajectories_spectrum_idx ON trajectories (spectrum_id);

CREATE TABLE steps (
    trajectory_id VARCHAR NOT NULL,
    idx INTEGER NOT NULL,
    kind VARCHAR NOT NULL CHECK (kind IN ('prompt', 'think', 'tool_call', 'tool_result', 'verdict', 'answer')),
    text VARCHAR NOT NULL,
    tool_name VARCHAR,
    tool_args JSON,
    label VARCHAR,
    image_sha VARCHAR,
    is_error BOOLEAN NOT NULL,
    verdict JSON,
    answer JSON,
    data JSON,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (trajectory_id, idx)
);

CREATE TABLE images (
    sha256 VARCHAR PRIMARY KEY,
    png BLOB NOT NULL,
    width INTEGER,
    height INTEGER,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE reviewers (
    name VARCHAR PRIMARY KEY,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE reviews (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    action VARCHAR NOT NULL CHECK (action IN ('approve', 'override', 'reject', 'clear')),
    label JSON,              -- the corrected label of an override: {"answer": "NO"} or {"type":..,"z":..}
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE vi_labels (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    spectrum_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    quality INTEGER CHECK (quality BETWEEN 0 AND 4),
    issues VARCHAR NOT NULL DEFAULT '' CHECK (regexp_full_match(issues, '[RCS]*')),
    z DOUBLE,
    spectype VARCHAR,
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE annotations (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    step_idx INTEGER,        -- NULL: about the whole trajectory
    reviewer VARCHAR NOT NULL,
    comment VARCHAR,
    flags VARCHAR[] NOT NULL DEFAULT [],
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE ratings (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    rater VARCHAR NOT NULL,
    rater_kind VARCHAR NOT NULL CHECK (rater_kind IN ('human', 'llm')),
    score DOUBLE NOT NULL CHECK (score BETWEEN 0 AND 5),
    rubric_version VARCHAR NOT NULL,
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE preferences (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    spectrum_id VARCHAR,
    trajectory_a VARCHAR NOT NULL,
    trajectory_b VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL CHECK (outcome IN ('win', 'tie', 'loss')),  -- for trajectory_a
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE revisions (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    step_idx INTEGER NOT NULL,
    version INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    text VARCHAR,
    tool_args JSON,
    image_sha VARCHAR,
    comment VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE curation_events (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    event VARCHAR NOT NULL CHECK (event IN ('revise', 'audit', 'vote')),
    value VARCHAR,
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE audit_sessions (
    id VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    mode VARCHAR NOT NULL CHECK (mode IN ('verdicts', 'rating', 'curation')),
    blind BOOLEAN NOT NULL DEFAULT true,
    filters JSON,
    created_by VARCHAR,
    created_at TIMESTAMPTZ NOT NULL,
    closed_at TIMESTAMPTZ
);

CREATE TABLE session_items (
    session_id VARCHAR NOT NULL,
    trajectory_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (session_id, trajectory_id)
);

CREATE TABLE session_reviewers (
    session_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    PRIMARY KEY (session_id, reviewer)
);
""")

# Added for consensus and LLM judges (reviewer/store/review_queries.py).
V2_RESOLUTIONS = Migration("merger resolutions of conflicts, LLM judge failures", """
CREATE TABLE resolutions (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    item_kind VARCHAR NOT NULL CHECK (item_kind IN ('trajectory', 'spectrum')),
    item_id VARCHAR NOT NULL,     -- trajectory id, or spectrum id for VI labels
    merger VARCHAR NOT NULL,
    action VARCHAR CHECK (action IN ('approve', 'override', 'reject')),  -- trajectories only
    label JSON,                   -- override label, or the merged VI fields {quality, issues, z, spectype}
    merger_comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE judge_failures (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    judge VARCHAR NOT NULL,       -- llm:<model>
    rubric_version VARCHAR NOT NULL,
    error VARCHAR NOT NULL,
    reply VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);
""")

# The consensus of each trajectory's current verdicts, kept by the label service after every verdict
# or resolution (reviewer/services/conflicts.py decides it; this only stores it), so that the queue's
# disagreement column, its filter and the Conflicts tab read one answer instead of recomputing it.
V3_VERDICT_STATE = Migration("stored consensus of each trajectory's verdicts", """
CREATE TABLE verdict_state (
    trajectory_id VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,       -- '' for every label, else an audit session id
    n_reviews INTEGER NOT NULL,
    status VARCHAR NOT NULL CHECK (status IN ('unreviewed', 'single', 'agreed', 'conflict', 'resolved')),
    synced_seq BIGINT NOT NULL,   -- the newest label row (reviews / resolutions seq) it reflects
    PRIMARY KEY (trajectory_id, scope)
);
CREATE INDEX reviews_trajectory ON reviews (trajectory_id);
""")

# What the claim checker (agents/claims) said about each claim of a trajectory's text, per checker
# version (a newer checker adds its rows beside the older ones; re-checking with the same version
# replaces them). `result` keeps the whole ClaimResult (ClaimResult.from_dict rebuilds it).
V4_CLAIM_RESULTS = Migration("claim checker results per trajectory step", """
CREATE TABLE claim_results (
    trajectory_id VARCHAR NOT NULL,
    checker_version VARCHAR NOT NULL,
    step_idx INTEGER NOT NULL,
    claim_idx INTEGER NOT NULL,   -- order of the claim within its step
    kind VARCHAR NOT NULL,        -- feature / quantity / comparison / measure
    span_start INTEGER,           -- the claim is steps.text[span_start:span_end]
    span_end INTEGER,
    claim_text VARCHAR NOT NULL,
    verdict VARCHAR NOT NULL CHECK (verdict IN ('supported', 'contradicted', 'unverifiable')),
    claimed DOUBLE,               -- the number the text states, if any
    measured DOUBLE,
    tolerance DOUBLE,
    unit VARCHAR,                 -- the claim's unit, as the text gives it
    window_lo DOUBLE,             -- the measured region, observed frame, Angstrom
    window_hi DOUBLE,
    reason VARCHAR,
    result JSON,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (trajectory_id, checker_version, step_idx, claim_idx)
);
CREATE INDEX claim_results_verdict ON claim_results (verdict, trajectory_id);
""")

# Triage (reviewer/services/triage.py decides; this only stores): the weight vectors it used, default or fitted
# on the human labels, and each trajectory's cached review priority with the signals it came from.
# The priorities are recomputed by `specreview triage --refresh` (and by the label service after a
# verdict, when it calls reviewer.services.triage.refresh); the queue's order "priority" reads them.
V5_TRIAGE = Migration("triage weights and cached review priority per trajectory", """
CREATE TABLE triage_models (
    id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL CHECK (kind IN ('default', 'fitted')),
    features JSON NOT NULL,       -- signal names, in weight order after the intercept
    weights JSON NOT NULL,        -- [intercept, one per feature]
    n_labels INTEGER NOT NULL,    -- human verdicts it was fitted on (0: default)
    n_errors INTEGER NOT NULL,    -- of which overrides or rejections
    info JSON,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE triage_priority (
    trajectory_id VARCHAR PRIMARY KEY,
    priority DOUBLE NOT NULL,     -- estimated probability that a reviewer overrides or rejects the answer
    signals JSON NOT NULL,        -- the signal values it was computed from
    model_id VARCHAR NOT NULL,    -- triage_models.id
    computed_at TIMESTAMPTZ NOT NULL
);
""")

# A reviewer's answer to a flag the claim checker raised: a contradicted claim of a step (a row of
# claim_results, named by trajectory, checker version, step and claim index) confirmed (the agent's
# claim is wrong) or dismissed (the checker was wrong). Append-only like every label: the latest row per
# reviewer and claim wins. `result` keeps what the checker said when the reviewer answered (claimed and
# measured values, tolerance, window): what a fit of the checker's tolerances needs, even after the
# claim results are re-checked and replaced.
V6_CLAIM_FLAGS = Migration("reviewers' confirm / dismiss answers to contradicted-claim flags", """
CREATE TABLE claim_flags (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    step_idx INTEGER NOT NULL,
    claim_idx INTEGER NOT NULL,       -- claim_results.claim_idx
    checker_version VARCHAR NOT NULL, -- claim_results.checker_version
    claim_text VARCHAR NOT NULL,
    decision VARCHAR NOT NULL CHECK (decision IN ('confirm', 'dismiss')),
    reviewer VARCHAR NOT NULL,
    result JSON,
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX claim_flags_trajectory ON claim_flags (trajectory_id);
""")

# Every spectrum of an object (issue 23): when a spectrum was taken, the survey's own ids of it (the
# links out are built from these, validated numbers only: reviewer/services/sky.py), and the groups the
# cross-match (reviewer/services/same_object.py) made of spectra within its radius of each other. Only groups
# of two or more spectra are kept; `object_match` records each cross-match run (radius, how many
# spectra it saw), so that a store that gained spectra since is matched again. Rows written before
# this version get their date from the stored header's MJD here; their ids stay NULL and are read
# from the stored header when a link is built.
V7_SAME_OBJECT = Migration("observation date and survey ids of spectra, same-object groups", """
ALTER TABLE spectra ADD COLUMN obs_mjd DOUBLE;
ALTER TABLE spectra ADD COLUMN survey_ids JSON;
UPDATE spectra SET obs_mjd = TRY_CAST(json_extract_string(header, '$.MJD') AS DOUBLE)
    WHERE TRY_CAST(json_extract_string(header, '$.MJD') AS DOUBLE) BETWEEN 40000 AND 100000;

CREATE TABLE object_groups (
    spectrum_id VARCHAR PRIMARY KEY,
    group_id VARCHAR NOT NULL,        -- the smallest spectrum_id of the group
    n_members INTEGER NOT NULL
);
CREATE INDEX object_groups_group_idx ON object_groups (group_id);

CREATE TABLE object_match (
    radius_arcsec DOUBLE NOT NULL,
    n_spectra INTEGER NOT NULL,       -- spectra with coordinates when it ran
    matched_at TIMESTAMPTZ NOT NULL
);
""")

# Each trajectory's triage signals as last computed (reviewer.services.triage decides what they are), so that
# the Stats tab and `specreview triage` read a table instead of recomputing 100k trajectories' signals
# in Python. The writers of a trajectory and of its claim results delete the rows they make stale just
# before their own transaction; a trajectory without a row marks its spectrum's rows stale (its siblings'
# disagreement depends on it) and they are recomputed on the next read. `inputs_hash` is a hash of the
# inputs a row came from (reviewer/store/triage.py INPUTS_HASH), for checking. Rows are not written
# here: an upgraded database fills the table on its first read (the whole
# store once), then only what changed. `n_reviewers` / `seen` are not kept: they follow the labels
# and are counted in SQL on each read.
V8_TRIAGE_SIGNALS = Migration("triage signals per trajectory, kept beside their inputs' hash", """
CREATE TABLE triage_signals (
    trajectory_id VARCHAR PRIMARY KEY,
    inputs_hash UBIGINT NOT NULL,
    spectrum_id VARCHAR,
    task VARCHAR NOT NULL,
    agent VARCHAR NOT NULL,           -- agent_name/backend/model
    answer VARCHAR,
    n_contradicted INTEGER NOT NULL,
    margin DOUBLE,
    credibility VARCHAR,
    unjudgeable BOOLEAN NOT NULL,
    contradicted DOUBLE NOT NULL,
    disagreement DOUBLE NOT NULL,
    low_credibility DOUBLE NOT NULL,
    closeness DOUBLE NOT NULL
);
""")

# Each trajectory's settled label per scope (as verdict_state), kept beside its stored consensus by the
# same sync (reviewer/services/conflicts.py decides both; this only stores them), so that the Stats tab and the
# exports read the settled labels as a query instead of recomputing every trajectory's consensus in
# Python. `settled`: a human label counts as the truth (agreed, single or resolved; not a rejection,
# not an open conflict, some current verdict); then `truth` / `truth_z` (the label), `truth_source`
# (single / agreed / resolution), the agent's own answer (`predicted`, `predicted_z`), its
# `credibility` and whether the answer is `correct` against the truth. `own_hash`: a hash of the
# trajectory's columns the agent's answer is read from (reviewer/store/verdict_state.py OWN_HASH), so
# that a re-saved trajectory is recomputed although no label changed. Rows are not written here: an
# upgraded database fills the table on its first sync (every labelled trajectory once).
V9_SETTLED_LABELS = Migration("settled label of each trajectory per scope, beside its stored consensus", """
CREATE TABLE settled_labels (
    trajectory_id VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,           -- as verdict_state.scope
    synced_seq BIGINT NOT NULL,       -- the newest label row (reviews / resolutions seq) it reflects
    own_hash UBIGINT,                 -- the trajectory's answer columns it was computed from
    n_reviews INTEGER NOT NULL,
    settled BOOLEAN NOT NULL,
    truth VARCHAR,
    truth_z DOUBLE,
    truth_source VARCHAR,
    predicted VARCHAR,
    predicted_z DOUBLE,
    credibility VARCHAR,
    correct BOOLEAN,
    PRIMARY KEY (trajectory_id, scope)
);
""")

# What each ingested file's stat said when its content was hashed (reviewer.services.ingest), so that a later
# walk over the same folders passes a file it already knows on a stat, without reading it: at survey scale
# re-hashing every known file would read the whole survey again. A cache, never evidence: a file whose stat
# differs in any field is hashed again, and each spectrum's stored content hash (spectra.file_sha256) stays
# what the integrity checks compare with.
V10_FILE_STAMPS = Migration("each ingested file's stat beside its content hash", """
CREATE TABLE file_stamps (
    path VARCHAR PRIMARY KEY,         -- as spectra.source_path: the resolved path
    dev UBIGINT NOT NULL,
    ino UBIGINT NOT NULL,
    size BIGINT NOT NULL,
    mtime_ns BIGINT NOT NULL,
    ctime_ns BIGINT NOT NULL,
    file_sha256 VARCHAR NOT NULL
);
""")

# Opening an item reads its steps and its claim results by trajectory. Trajectory ids are random, so
# the row groups' min/max prune nothing, and the steps' key (trajectory_id, idx) is not used for a
# lookup by its first column alone: at 1M trajectories (24M steps) each read scanned its table, about
# 20 ms, of a switch's 80. With an index on the column each is about 2 ms (docs/benchmarks.md). An
# upgraded database builds them once (about 12 s at 1M).
V11_ITEM_INDEXES = Migration("indexes for reading one trajectory's steps and claim results", """
CREATE INDEX steps_trajectory ON steps (trajectory_id);
CREATE INDEX claim_results_trajectory ON claim_results (trajectory_id);
""")

# Each spectrum's VI consensus per scope (reviewer/store/vi_state.py; reviewer/services/conflicts.py decides
# it): whether its current VI labels conflict, whether a newer resolution settles them, and when the
# newest was made, so that the Conflicts tab pages stored conflicts instead of merging every labelled
# spectrum's labels on each refresh. Rows are not written here: the first read after the upgrade fills
# the table (every labelled spectrum once).
V12_VI_STATE = Migration("VI consensus per spectrum, beside the newest label it reflects", """
CREATE TABLE vi_state (
    spectrum_id VARCHAR NOT NULL,
    scope VARCHAR NOT NULL,           -- as verdict_state.scope
    conflict BOOLEAN NOT NULL,        -- the merge of its current VI labels is a conflict
    resolved BOOLEAN NOT NULL,        -- a merger's resolution is newer than those labels
    updated_at TIMESTAMPTZ NOT NULL,  -- when the newest of those labels was made
    synced_seq BIGINT NOT NULL,       -- the newest label row (vi_labels / resolutions seq) it reflects
    PRIMARY KEY (spectrum_id, scope)
);
""")

# Each reviewer's current verdict per trajectory and each rater's current score per trajectory and rubric
# version (the newest row by created_at, then seq, as every reader of the label tables takes it), kept by
# LabelRepository.append in the transaction that writes the label. The Stats tab and the triage read
# them instead of numbering every label row (window functions over the label tables: ~0.2 s of a Stats
# read at 1M trajectories), and the pairs of them counted (reviewer/store/pair_counts.py). Filled here from
# the labels already written. And each settled label's task, so that the Stats tab counts them without a
# join with every trajectory (~60 ms at 1M); and each trajectory's triage priority before review, under
# the stored weights (reviewer.services.triage prices the rows), so that the triage report counts the
# unreviewed answers below a threshold in DuckDB instead of reading 900k of them at 1M.
FILL_CURRENT_REVIEWS = ("INSERT INTO current_reviews SELECT trajectory_id, reviewer, action, created_at, seq FROM reviews "
                        "QUALIFY row_number() OVER (PARTITION BY trajectory_id, reviewer ORDER BY created_at DESC, seq DESC) = 1")
FILL_CURRENT_RATINGS = ("INSERT INTO current_ratings SELECT trajectory_id, rater, rubric_version, rater_kind, score, "
                        "created_at, seq FROM ratings QUALIFY row_number() OVER "
                        "(PARTITION BY trajectory_id, rater, rubric_version ORDER BY created_at DESC, seq DESC) = 1")
# the tables kept on write from the label tables, each with the statement filling it from what is written
# (in this order: the pair counts are counted from the current rows)
KEPT_ON_WRITE = (("current_reviews", FILL_CURRENT_REVIEWS), ("current_ratings", FILL_CURRENT_RATINGS),
                 ("verdict_pair_counts", f"INSERT INTO verdict_pair_counts {VERDICT_PAIRS_SQL}"),
                 ("rating_pair_counts", f"INSERT INTO rating_pair_counts {RATING_PAIRS_SQL}"))
_FILLS = ";\n".join(fill for _, fill in KEPT_ON_WRITE)
V13_CURRENT_LABELS = Migration("current verdicts and scores, their pairs counted, kept on write; settled tasks; "
                               "triage priorities stored",
                               f"""
CREATE TABLE current_reviews (
    trajectory_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    action VARCHAR NOT NULL,          -- 'clear': the reviewer withdrew their verdict
    created_at TIMESTAMPTZ NOT NULL,  -- of the reviews row it is (with seq: which one)
    seq BIGINT NOT NULL,
    PRIMARY KEY (trajectory_id, reviewer)
);
CREATE TABLE current_ratings (
    trajectory_id VARCHAR NOT NULL,
    rater VARCHAR NOT NULL,
    rubric_version VARCHAR NOT NULL,
    rater_kind VARCHAR NOT NULL,
    score DOUBLE NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,  -- of the ratings row it is (with seq: which one)
    seq BIGINT NOT NULL,
    PRIMARY KEY (trajectory_id, rater, rubric_version)
);
CREATE TABLE verdict_pair_counts (  -- reviewer/store/pair_counts.py
    reviewer_a VARCHAR NOT NULL,
    reviewer_b VARCHAR NOT NULL,      -- '': reviewer_a's own verdicts
    action_a VARCHAR NOT NULL,
    action_b VARCHAR NOT NULL,
    n BIGINT NOT NULL,                -- on how many trajectories (0: none any more)
    PRIMARY KEY (reviewer_a, reviewer_b, action_a, action_b)
);
CREATE TABLE rating_pair_counts (
    rater_a VARCHAR NOT NULL,
    rater_b VARCHAR NOT NULL,
    score_a DOUBLE NOT NULL,
    score_b DOUBLE NOT NULL,
    n BIGINT NOT NULL,
    PRIMARY KEY (rater_a, rater_b, score_a, score_b)
);
{_FILLS};
ALTER TABLE triage_signals ADD COLUMN priority DOUBLE;   -- before anyone reviewed it, under the weights:
ALTER TABLE triage_signals ADD COLUMN priced_by VARCHAR;  -- the triage_models id (NULL: not priced yet)
ALTER TABLE settled_labels ADD COLUMN task VARCHAR;  -- the trajectory's (in own_hash): the Stats tab's counts
UPDATE settled_labels SET task = t.task FROM trajectories t WHERE t.id = settled_labels.trajectory_id;
""")

# A reviewer's judgment of one step of a trajectory (issue 47, item 4): correct / partly / incorrect, with
# failure-mode tags from the taxonomy kb/step_failure_modes.yaml (its version kept with the row), for
# process supervision. A label like every other: append-only, the latest row per reviewer and step wins,
# and 'clear' withdraws the reviewer's judgment of that step.
V14_STEP_JUDGMENTS = Migration("reviewers' per-step judgments with failure-mode tags", """
CREATE TABLE step_judgments (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    step_idx INTEGER NOT NULL,
    reviewer VARCHAR NOT NULL,
    judgment VARCHAR NOT NULL CHECK (judgment IN ('correct', 'partly', 'incorrect', 'clear')),
    tags VARCHAR[] NOT NULL DEFAULT [],
    taxonomy_version VARCHAR NOT NULL,
    comment VARCHAR,
    session_id VARCHAR,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX step_judgments_trajectory ON step_judgments (trajectory_id);
""")

# Campaigns that measure their reviewers (issue 47, items 1 and 6; reviewer/services/campaigns.py decides,
# this only stores): how many reviewers each item is planned for (`per_item`, NULL: no plan, anyone labels
# anything) and the share of the queue that is gold (`gold_rate`); the gold items with their known answers
# and where each came from (the organiser's file and its line, the survey's label, a settled consensus),
# kept apart from session_items so that nothing the queue reads marks them; and the items handed to a
# reviewer, each held for them until `expires_at` (reviewer/services/campaigns.py RESERVATION_MINUTES).
V15_CAMPAIGN_PLAN = Migration("campaigns' reviewers per item and gold items; items reserved for a reviewer", """
ALTER TABLE audit_sessions ADD COLUMN per_item INTEGER;
ALTER TABLE audit_sessions ADD COLUMN gold_rate DOUBLE;
CREATE TABLE gold_items (
    session_id VARCHAR NOT NULL,
    trajectory_id VARCHAR NOT NULL,
    answer VARCHAR NOT NULL,          -- YES / NO, or verify's class (STAR / GALAXY / QSO)
    answer_z DOUBLE,                  -- verify's z
    source VARCHAR NOT NULL CHECK (source IN ('file', 'survey', 'consensus')),
    origin VARCHAR,                   -- the file and its line, the survey, or the settled label's source
    PRIMARY KEY (session_id, trajectory_id)
);
CREATE TABLE item_reservations (
    session_id VARCHAR NOT NULL,
    trajectory_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (session_id, trajectory_id, reviewer)
);
""")

# Which trajectories the claim checker has checked, per checker version, with how many claims it found
# (issue 48): a campaign stores its trajectories first and checks their claims after, so a trajectory
# with no row of the current version has its check pending (reviewer/services/claim_checks.py). A check
# that finds no claim writes no claim_results row, hence this table; its rows are written with the
# results, in the same transaction (reviewer/store/claims.py). An upgraded database takes the versions
# its claim_results hold as checked.
V16_CLAIM_CHECKS = Migration("claim checks done per trajectory and checker version", """
CREATE TABLE claim_checks (
    trajectory_id VARCHAR NOT NULL,
    checker_version VARCHAR NOT NULL,
    n_claims INTEGER NOT NULL,
    checked_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (trajectory_id, checker_version)
);
INSERT INTO claim_checks SELECT trajectory_id, checker_version, count(*), max(created_at)
FROM claim_results GROUP BY trajectory_id, checker_version;
""")

# How long the reviewer looked before a verdict (issue 47, item 3): the seconds their page was visible,
# focused and in use (not idle) on the item, from its opening to the verdict, as the page measured them
# and the server bounded them (reviewer/activity.py). NULL: not measured (the CLI, imports, older rows).
V17_ACTIVE_TIME = Migration("active seconds on the item with each verdict", """
ALTER TABLE reviews ADD COLUMN active_s DOUBLE;
""")

# An independent first look (issue 47, item 2): a campaign may hide the agent's answer, its evidence and the
# survey pipeline's labels until the reviewer has given their own answer (`first_look`); that answer is a
# label like every other (append-only, the latest per reviewer, item and campaign wins), kept apart from
# the verdict they give once all is shown, so that both are known.
V18_FIRST_LOOK = Migration("campaigns with a first look; reviewers' first answers", """
ALTER TABLE audit_sessions ADD COLUMN first_look BOOLEAN NOT NULL DEFAULT false;
CREATE TABLE first_looks (
    id VARCHAR PRIMARY KEY,
    seq BIGINT NOT NULL DEFAULT nextval('label_seq'),
    trajectory_id VARCHAR NOT NULL,
    reviewer VARCHAR NOT NULL,
    label JSON NOT NULL,     -- {"answer": "YES"} or {"type": "QSO", "z": 2.1}: the reviewer's own, before the agent's
    active_s DOUBLE,         -- seconds the page was in use on the item until then (reviewer/activity.py)
    session_id VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX first_looks_session ON first_looks (session_id);
""")

MIGRATIONS: list[Migration] = [V1_CORE, V2_RESOLUTIONS, V3_VERDICT_STATE, V4_CLAIM_RESULTS, V5_TRIAGE, V6_CLAIM_FLAGS,
                               V7_SAME_OBJECT, V8_TRIAGE_SIGNALS, V9_SETTLED_LABELS, V10_FILE_STAMPS,
                               V11_ITEM_INDEXES, V12_VI_STATE, V13_CURRENT_LABELS, V14_STEP_JUDGMENTS,
                               V15_CAMPAIGN_PLAN, V16_CLAIM_CHECKS, V17_ACTIVE_TIME,
                               V18_FIRST_LOOK]
LATEST_VERSION = len(MIGRATIONS)


class SchemaError(RuntimeError):
    """The database's schema is not one this program can open: newer than it knows, or its recorded
    versions and its tables disagree (check_schema raises it before anything in the file is changed)."""


class MigrationError(SchemaError):
    """A migration failed; the database is left at `version`."""

    def __init__(self, version: int, target: int, cause: Exception):
        self.version = version
        self.target = target
        super().__init__(f"migration to schema version {target} failed ({cause}); database left at version {version}")


# What a migration creates and drops, read from its SQL: enough to tell which migrations' tables a file
# holds. A migration that renames an object would need listing here too; the schema tests, which open a
# fresh database through every migration, fail at once if one is missed.
_CREATED = re.compile(r"\bCREATE\s+(?:UNIQUE\s+)?(TABLE|INDEX|SEQUENCE)\s+(\w+)", re.I)
_DROPPED = re.compile(r"\bDROP\s+(TABLE|INDEX|SEQUENCE)\s+(?:IF\s+EXISTS\s+)?(\w+)", re.I)
_EXISTING = """
SELECT 'table', table_name FROM duckdb_tables() WHERE schema_name = 'main'
UNION ALL SELECT 'index', index_name FROM duckdb_indexes() WHERE schema_name = 'main'
UNION ALL SELECT 'sequence', sequence_name FROM duckdb_sequences() WHERE schema_name = 'main'
"""


def _objects(pattern: re.Pattern, sql: str) -> set[tuple[str, str]]:
    return {(kind.lower(), name.lower()) for kind, name in pattern.findall(sql)}


def _tables_first(obj: tuple[str, str]) -> tuple[bool, str]:
    return obj[0] != "table", obj[1]  # a table's name says more to a reader than an index's


def recorded_versions(cursor: duckdb.DuckDBPyConnection) -> list[int]:
    """The versions schema_version records, in order; [] when there is no such table (read only: a
    file that must be refused is not to gain one)."""
    if not cursor.execute("SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'main' "
                          "AND table_name = 'schema_version'").fetchall()[0][0]:
        return []
    return [int(v) for (v,) in cursor.execute("SELECT version FROM schema_version ORDER BY version").fetchall()]


def check_schema(cursor: duckdb.DuckDBPyConnection, migrations: list[Migration]) -> int:
    """The recorded version, after checking that the file is what that version says: every version up
    to it recorded, their objects there, none of a later migration's. Every migration commits with its
    version row, so a file that fails this was not left so by this program's migrations: another build
    or program wrote it, it was edited, or it was restored in part. SchemaError says which, before
    anything is changed."""
    versions = recorded_versions(cursor)
    version = versions[-1] if versions else 0
    if version > len(migrations):
        raise SchemaError(f"its schema version {version} is newer than this program knows ({len(migrations)}): "
                          "upgrade specreview to open it")
    missing_versions = sorted(set(range(1, version + 1)) - set(versions))
    unfinished = "a migration did not finish, or another program changed the file; restore it from a backup"
    if missing_versions:
        raise SchemaError(f"it records schema version {version} but not version "
                          f"{', '.join(map(str, missing_versions))}: {unfinished}")
    present = {(kind, name.lower()) for kind, name in cursor.execute(_EXISTING).fetchall()}
    expected: set[tuple[str, str]] = set()
    for number, migration in enumerate(migrations, 1):
        made = _objects(_CREATED, migration.sql)
        if number <= version:
            expected = (expected | made) - _objects(_DROPPED, migration.sql)
            continue
        early = sorted(made & present, key=_tables_first)
        if early:
            kind, name = early[0]
            at = f"it is at schema version {version}" if versions else "it records no schema version"
            raise SchemaError(f"{at} but already holds {kind} {name} of version {number}: {unfinished}")
    gone = sorted(expected - present, key=_tables_first)
    if gone:
        kind, name = gone[0]
        raise SchemaError(f"it records schema version {version} but its {kind} {name} is missing: {unfinished}")
    return version


def current_version(cursor: duckdb.DuckDBPyConnection) -> int:
    cursor.execute(BOOTSTRAP)
    return int(cursor.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()[0][0])


def migrate(cursor: duckdb.DuckDBPyConnection, migrations: list[Migration] | None = None) -> int:
    """Apply the pending migrations in order, each in its own transaction; return the new version.
    A file whose schema this program cannot take on (check_schema) raises SchemaError unchanged."""
    migrations = MIGRATIONS if migrations is None else migrations
    version = check_schema(cursor, migrations)
    if version == len(migrations):
        return version
    cursor.execute(BOOTSTRAP)
    for target in range(version + 1, len(migrations) + 1):
        migration = migrations[target - 1]
        cursor.execute("BEGIN TRANSACTION")
        try:
            cursor.execute(migration.sql)
            cursor.execute(
                "INSERT INTO schema_version (version, description) VALUES (?, ?)", [target, migration.description]
            )
            cursor.execute("COMMIT")
        except Exception as exc:
            cursor.execute("ROLLBACK")
            raise MigrationError(target - 1, target, exc) from exc
        version = target
    return version
