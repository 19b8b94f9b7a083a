"""The rules policy's version, recorded as the model of its trajectories: a campaign finds by it the
spectra it vetted before. A module of its own so that a command that only stores what a worker process
vetted (reviewer.cli.vet) knows it without importing LangChain with the policy (~1 s of start-up)."""

# rules-2: task a thresholds by CV (issue 9); rules-3: task a K/H-delta veto; rules-4: task a thresholds
# start at the A/F boundary and hold across survey releases (issue 20); rules-5: an answer only where the
# data can decide (tasks a and wd: no S/N requirement, refused when the decisive features would drown in
# the noise, NO where the windows present decide it; task a requires an A star's H-alpha; issue 50)
RULES_VERSION = "rules-5"
