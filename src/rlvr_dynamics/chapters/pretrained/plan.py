"""The chapter's protocol: what judges its claims, written down before any of its runs and
committed to git in the results release, then read back by the judging.

*Phase 1: register.* From the base alone (the format's measurement, the difficulty table) the
chapter writes the protocol into the store (``register``, with the time): the model, prompt and
grader, the levels and each one's mid-curve k, the probe, the algorithms and seeds, the steps,
the evaluation, the margins, the rules that judge each claim (``RULES``) and the looks of the
group-sequential rule with their bounds (``looks``), and every run's key. No run begins until
the protocol is in the release of the checkout's commit (``committed_at``): ``make part``
releases it, and the commit that adds it is the protocol's commit (``committed_in``).

*Phase 2: judge.* A run is judged only where it began from a commit whose release held the
protocol byte for byte (``released.committed_before``) and recorded its hash
(``registered_before``); ``admitted`` says why any other is refused, and ``judge`` refuses
a judgement that would read one.

*The looks.* The Pass@k and entropy claims are read at ``looks`` seeds per algorithm (e.g. 3
and 5); look k's intervals are at the confidence of its bound (``power.nominal_confidence``),
the bounds those of Lan and DeMets' O'Brien-Fleming-type spending of the book's 5 % over the
information fractions (seeds read / seeds at the last look; ``power.spending_bounds``): at 3 of
5 seeds, 2.67 (99.2 %), at 5, 1.98 (95.2 %). A claim stops at the first look whose verdict is
decided (``stopped``); the runs stop after a look where every claim has stopped
(``every_claim_stopped``). Each look's interval still uses Student's t on its seeds' degrees
of freedom at that level: the bounds assume a known variance, so few seeds make them only
approximately the stated size.

*What a pilot could size.* A pilot of two seeds per algorithm estimates the seed variance from
one degree of freedom each (two pooled): the true variance lies within 0.27x to 39x of it
(``power.variance_range``), so it cannot choose a number of seeds; the protocol fixes them
instead (at least ``MIN_SEEDS``, from the spread of earlier runs, lab notebook 46).
"""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from rlvr_dynamics import REPO, power
from rlvr_dynamics.comparison.claims import ANSWER_ENTROPY_MARGIN, PASS1_MARGIN, PASSK_MARGIN
from rlvr_dynamics.released import at, committed_before, first_commit
from rlvr_dynamics.rl.registration import content_hash, registered_before, started
from rlvr_dynamics.stats import CONFIDENCE, FEW_SEEDS, UNDECIDED
from rlvr_dynamics.store import Entry, config_key, read_json, results_dir, write_json

PROTOCOL = "protocol.json"

MIN_SEEDS = 5
"""Issue 52's floor: seeds per algorithm."""
MIN_STEPS = 96
"""Issue 52's floor: training steps per run."""

SPENDING = ("Lan-DeMets O'Brien-Fleming-type alpha spending, two-sided, total "
            f"{1 - CONFIDENCE:.2f}, information = seeds read / seeds at the last look")

MARGINS = {"pass1_gain": PASS1_MARGIN, "large_k": PASSK_MARGIN, "ood": PASSK_MARGIN,
           "answer_entropy": ANSWER_ENTROPY_MARGIN}
"""Each Pass@k and entropy claim's margin (``comparison.claims``; points, nats)."""

RULES = {
    "pass1_gain": "each algorithm's Pass@1 above the base's by more than the margin "
                  "(superiority), on every training level",
    "large_k": "at the base's mid-curve k on every training level: GRPO-N holds the base "
               "(non-inferiority), the base holds GRPO, GRPO-N above GRPO (superiority); "
               "Pass@n shown beside, not voting",
    "ood": "the same at the harder level's mid-curve k (GRPO-N holds the base, the base above "
           "GRPO), read once",
    "answer_entropy": "GRPO-N's answer entropy above GRPO's (superiority), every training level",
    "training": "the training claims from the held-out dynamics (rl.readings.verdict_rows), "
                "read once at the look where the protocol stops, at the book's 95 %",
    "claim": "a claim's checks combine by verdicts.combine (replicates, partly, does not "
             "replicate, opposite, no effect within the margin, inconclusive); the paper's "
             "grader decides, the lenient grader is shown beside",
    "stop": "a Pass@k or entropy claim stops at the first look whose verdict is not "
            "inconclusive; no run of a later look begins once every one has stopped",
}
"""The rules that judge each claim, in words; the code that applies them is
``comparison.claims.decided`` (at a look's confidence), ``verdicts.combine`` and ``stopped``."""

OPEN = (UNDECIDED, FEW_SEEDS)
"""Verdicts that leave a claim open at a look (``stopped``)."""


def looks(seeds: int, at: Sequence[int], alpha: float = 1 - CONFIDENCE) -> list[dict[str, float]]:
    """The looks at ``at`` seeds per algorithm of ``seeds`` in all: each one's seeds, its
    information fraction, its two-sided bound (``power.spending_bounds``) and the confidence
    of its intervals (``power.nominal_confidence``)."""
    at = list(at)
    if not at or at[-1] != seeds or any(b <= a for a, b in zip(at, at[1:])) or at[0] < 2:
        raise ValueError(f"looks must increase from at least 2 seeds to all {seeds}, got {at}")
    fractions = [n / seeds for n in at]
    bounds = power.spending_bounds(fractions, alpha)
    return [{"seeds": n, "fraction": round(t, 6), "bound": round(float(c), 6),
             "confidence": round(power.nominal_confidence(c), 6)}
            for n, t, c in zip(at, fractions, bounds)]


def shortfalls(what: dict[str, Any]) -> list[str]:
    """Where the protocol ``what`` falls below issue 52's floor, in words ([] where it does
    not): fewer than ``MIN_SEEDS`` seeds, fewer than ``MIN_STEPS`` steps, a probe with fewer
    samples than a training level's mid-curve k."""
    out = []
    if len(what["seeds"]) < MIN_SEEDS:
        out.append(f"{len(what['seeds'])} seeds per algorithm (at least {MIN_SEEDS} asked)")
    if what["steps"] < MIN_STEPS:
        out.append(f"{what['steps']} steps (at least {MIN_STEPS} asked)")
    short = {level: k for level, k in what["mid-curve k"].items()
             if k > what["probe"]["samples"]}
    if short:
        out.append(f"the probe's {what['probe']['samples']} samples are fewer than the "
                   f"mid-curve k of {short}")
    return out


FOLDER = "pretrained-protocol"
"""Where the protocols lie under a profile's results: beside the chapter's folder, never
inside it (the chapter's marker begins afresh there when it finishes, which would remove the
protocol the runs recorded, and a rebuild would register another)."""


def entry(profile: str, what: dict[str, Any]) -> Entry:
    """The store entry of the protocol ``what`` under ``profile`` (this module's code)."""
    return Entry(results_dir(profile, FOLDER) / config_key(what), code=__name__)


def register(what: dict[str, Any], profile: str) -> tuple[dict[str, Any], Path]:
    """The protocol ``what``, registered: read back where it exists, else written now with the
    time (UTC); the record and its file."""
    e = entry(profile, what)
    if not e.done:
        record = {"registered": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  **what}
        write_json(e.begin(fresh=True) / PROTOCOL, record)
        e.finish({"registered": record["registered"]})
    path = e.path / PROTOCOL
    return read_json(path), path


def committed_at(path: Path, commit: str, repo: Path = REPO) -> bool:
    """Whether the release of ``commit`` holds the protocol at ``path`` byte for byte (phase 2
    may begin runs from that commit)."""
    return at(commit, path, repo) == Path(path).read_bytes()


def committed_in(path: Path, repo: Path = REPO) -> str | None:
    """The first commit whose results release holds the protocol at ``path`` (its commit), None
    where none does."""
    return first_commit(path, repo)


def admitted(record: dict[str, Any], path: Path, runs: Sequence[Path], committed: bool,
             repo: Path = REPO) -> dict[str, str]:
    """Each run's folder name -> why it may not be judged against the protocol ("" where it
    may): it did not record the protocol's hash, or began before it; and where ``committed``,
    it began from uncommitted changes or from a commit whose release did not hold the
    protocol (``committed_before``)."""
    out = {}
    for run in runs:
        begun = started(run) or {}
        why = ""
        if not registered_before(record, [run]):
            why = "it did not record this protocol's hash after its registration"
        elif committed:
            proven = committed_before(path, run, repo)
            if proven is None:
                why = f"it began from uncommitted changes ({begun.get('commit') or 'no commit'})"
            elif not proven:
                why = (f"it began at commit {begun['commit'][:12]}, whose results release did "
                       f"not hold the protocol")
        out[Path(run).name] = why
    return out


class Refused(RuntimeError):
    """A judgement asked of runs the protocol does not admit (``admitted``)."""


def judge(reasons: dict[str, str]) -> None:
    """Refuse (``Refused``, naming the first run and why) where any run is not admitted."""
    bad = {run: why for run, why in reasons.items() if why}
    if bad:
        run, why = next(iter(bad.items()))
        raise Refused(f"{len(bad)} run(s) not judged against the protocol: {run}: {why}")


def stopped(outcomes: Sequence[dict[str, str]]) -> dict[str, int]:
    """claim -> the index of the look at which it stops: the first of ``outcomes`` (one dict
    claim -> verdict per look read so far) whose verdict is decided (not in ``OPEN``), else
    the last read."""
    claims = list(dict.fromkeys(c for o in outcomes for c in o))
    return {c: next((i for i, o in enumerate(outcomes) if o.get(c) not in OPEN + (None,)),
                    len(outcomes) - 1) for c in claims}


def every_claim_stopped(outcomes: Sequence[dict[str, str]]) -> bool:
    """Whether every claim was decided at some look of ``outcomes`` (no later look's run
    need begin)."""
    return bool(outcomes) and all(outcomes[i][c] not in OPEN
                                  for c, i in stopped(outcomes).items())


def hash_of(record: dict[str, Any]) -> str:
    """The protocol's content hash, which every run records (``TrainConfig.registration``)."""
    return content_hash(record)
