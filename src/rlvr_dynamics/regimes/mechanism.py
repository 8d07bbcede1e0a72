"""Why GRPO-N loses the rare path in the network (issue 51, items 4 and 5): the three
hypotheses' rules, the attribution's reading and the rule that picks the remedy, each written
before the runs it reads.

Every rule reads the dip of P(stepwise) on the rare-path-only problems on the log scale
(``dips.Dip``: the geometric mean over seeds of each seed's ratio at the step the other seeds
find lowest, with the interval of the mean log ratio turned back), through one reading
(``rare_path``): the rare path is *lost* where the whole interval lies below a fall of
``MARGIN`` (the scenario's stage-1 margin), *kept* where the whole interval lies above it.

* **(a) the optimizer** (``optimizer``): Adam's per-coordinate step is what keeps the rare
  path in the toy. Predicted: the toy under SGD loses it where the toy under Adam keeps it (both
  registered with the base's prediction), and the model trained on the first character alone
  (R3) loses it under SGD and keeps it under Adam. Borne out where both R3 readings are so;
  not where R3 under SGD keeps it or R3 under Adam loses it; cannot inform where the toy
  itself does not lose it under SGD (registered dip not below ``-MARGIN``).
* **(b) the later tokens** (``later_tokens``): the negative gradients of completion tokens
  2..L reach the first decision through shared parameters. Predicted: R4 and R5 GRPO-N trained
  on tokens 2..L alone still lose the rare path. Read on the rungs whose as-built runs lose it
  (the others cannot inform): borne out where every such rung's 2..L runs lose it, not where one
  keeps it.
* **(c) whose negatives** (``whose``): one kind of negative sample does it. Predicted: R5
  GRPO-N with that kind's negatives left out keeps the rare path. Borne out, naming the kinds,
  where one or more spared kinds keep it; not where every spared kind still loses it; cannot
  inform where R5 as built does not lose it.

**The attribution** (``rl.attribution``, at chosen updates of the as-built GRPO-N runs): the
predicted one-update change of the stepwise path's first-character log-probability split by
the kinds of sample (``attribution.KINDS``), summed over a run's attributed updates
(``parts``); over runs, the *culprit* is the kind whose summed part is most negative with its
Student-t interval wholly below zero (``culprit``; none: cannot tell). Each hypothesis names
the culprits it expects (``EXPECTED``; (c) the kinds its own runs named), and ``agreement``
says whether the attribution bears it out. A hypothesis *explains* the loss where its runs bear
it out and the attribution agrees (``explains``).

**The remedy** (``choose_remedy``): a rule written with the others maps the first hypothesis
that explains the loss (in the rule's order; ``NONE``: none does) to a remedy, a named change
of the runs' ``TrainConfig``; the remedy keeps the rare path where every rung it runs on keeps
it (``remedy``).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from rlvr_dynamics import dips, stats
from rlvr_dynamics.regimes.scenario import FALL_MARGIN

MARGIN = FALL_MARGIN
"""The fall of P(stepwise) that counts as losing the rare path (the scenario's stage-1 margin):
a rule reads whether the dip's whole interval lies below -MARGIN or above it."""
LOSES, KEEPS = "loses the rare path", "keeps the rare path"
BORNE_OUT, NOT_BORNE_OUT = "borne out", "not borne out"
AGREES, DISAGREES, CANNOT_TELL = "agrees", "disagrees", "cannot tell"
NONE = "none"
"""The remedy rule's key where no hypothesis explains the loss."""
HYPOTHESES = {"a": "the optimizer: Adam's per-coordinate step keeps the rare path",
              "b": "the later tokens: negatives of tokens 2..L reach the first decision",
              "c": "whose negatives: one kind of negative sample does it"}
EXPECTED = {"a": ("stepwise_wrong",), "b": ("direct_wrong", "guess_wrong", "other")}
"""The attribution's culprit each hypothesis expects: (a) the stepwise path's own slips (the
only samples whose negative update lowers the tabular stepwise logit directly); (b) another
path's negatives (no tabular update lowers the stepwise first character through another path's
samples: the change can only come through shared parameters). (c) expects the kind its own
runs name."""


def rare_path(d: dips.Dip | None, margin: float = MARGIN) -> str:
    """``LOSES`` where the dip's interval lies wholly below ``-margin``, ``KEEPS`` where it lies
    wholly above it, ``stats.FEW_SEEDS`` without an interval, ``stats.CANNOT_INFORM`` without
    runs, else ``stats.UNDECIDED``."""
    if d is None:
        return stats.CANNOT_INFORM
    if np.isnan(d.low) or np.isnan(d.high):
        return stats.FEW_SEEDS
    if d.high < -margin:
        return LOSES
    if d.low > -margin:
        return KEEPS
    return stats.UNDECIDED


def optimizer(toy_sgd: float, toy_adam: float, sgd: dips.Dip | None, adam: dips.Dip | None,
              margin: float = MARGIN) -> str:
    """(a): the toy's registered GRPO-N dips under SGD and Adam (relative: -0.9 is a fall of
    90 %), and R3 GRPO-N's dips under SGD and Adam (module docstring)."""
    if not toy_sgd < -margin or not toy_adam > -margin:
        return stats.CANNOT_INFORM
    s, a = rare_path(sgd, margin), rare_path(adam, margin)
    if s == KEEPS or a == LOSES:
        return NOT_BORNE_OUT
    if s == LOSES and a == KEEPS:
        return BORNE_OUT
    return stats.FEW_SEEDS if stats.FEW_SEEDS in (s, a) else stats.UNDECIDED


def later_tokens(after: Mapping[str, dips.Dip], built: Mapping[str, dips.Dip],
                 margin: float = MARGIN) -> str:
    """(b): per rung (R4, R5), GRPO-N's dip trained on tokens 2..L (``after``) and as built
    (``built``); module docstring."""
    rungs = [r for r in after if rare_path(built.get(r), margin) == LOSES]
    if not rungs:
        return stats.CANNOT_INFORM
    read = [rare_path(after[r], margin) for r in rungs]
    if KEEPS in read:
        return NOT_BORNE_OUT
    if all(x == LOSES for x in read):
        return BORNE_OUT
    return stats.FEW_SEEDS if stats.FEW_SEEDS in read else stats.UNDECIDED


def whose(spared: Mapping[str, dips.Dip], built: dips.Dip | None, margin: float = MARGIN
          ) -> tuple[str, tuple[str, ...]]:
    """(c): per kind, R5 GRPO-N's dip with that kind's negatives left out (``spared``) and as
    built (``built``); the outcome and the kinds whose sparing keeps the rare path."""
    if rare_path(built, margin) != LOSES or not spared:
        return stats.CANNOT_INFORM, ()
    read = {k: rare_path(d, margin) for k, d in spared.items()}
    named = tuple(k for k, x in read.items() if x == KEEPS)
    if named:
        return BORNE_OUT, named
    if all(x == LOSES for x in read.values()):
        return NOT_BORNE_OUT, ()
    return (stats.FEW_SEEDS if stats.FEW_SEEDS in read.values() else stats.UNDECIDED), ()


def parts(run: Sequence[dict], path: str = "stepwise") -> dict[str, float]:
    """One run's attribution (its records ``{"step": update, "attribution": {...}}``,
    ``rl.attribution.Attribution``): per part (each kind of sample, and the optimizer's and the
    bonus's own), the predicted change of ``path``'s first-character log-probability summed
    over the attributed updates; empty where none was attributed."""
    out: dict[str, float] = {}
    for r in run:
        if "attribution" in r:
            for name, v in r["attribution"][path]["parts"].items():
                out[name] = out.get(name, 0.0) + float(v)
    return out


def fidelity(run: Sequence[dict], path: str = "stepwise") -> list[float]:
    """Per attributed update of a run, the predicted change of ``path``'s first-character
    log-probability (``total``) over the change measured right after the update (``after``
    minus ``before``): 1 where the first-order prediction is exact."""
    out = []
    for r in run:
        if "attribution" in r and "after" in r["attribution"][path]:
            a = r["attribution"][path]
            measured = a["after"] - a["before"]
            out.append(a["total"] / measured if measured else float("nan"))
    return out


def culprit(runs: Sequence[Mapping[str, float]]) -> tuple[str | None, dict[str, stats.Effect]]:
    """Over runs (each ``parts``' result), each part's mean with its Student-t interval, and the
    culprit: of the parts whose interval lies wholly below zero, the one with the lowest mean
    (None: no part is below zero for certain, or fewer than two runs)."""
    names = sorted({k for r in runs for k in r})
    effects = {k: stats.one_sample([r.get(k, 0.0) for r in runs], 0.0) for k in names}
    below = [k for k, e in effects.items() if e.high < 0]
    return (min(below, key=lambda k: effects[k].estimate) if below else None), effects


def agreement(hypothesis: str, found: str | None, named: Sequence[str] = ()) -> str:
    """Whether the attribution's culprit ``found`` is one ``hypothesis`` expects (``EXPECTED``;
    for (c) the kinds its runs ``named``): ``CANNOT_TELL`` without a culprit, or for (c)
    without a named kind."""
    expected = tuple(named) if hypothesis == "c" else EXPECTED[hypothesis]
    if found is None or not expected:
        return CANNOT_TELL
    return AGREES if found in expected else DISAGREES


def explains(outcome: str, agrees: str) -> bool:
    """A hypothesis explains the loss where its runs bear it out and the attribution agrees."""
    return outcome == BORNE_OUT and agrees == AGREES


def choose_remedy(explaining: Sequence[str], rule: Mapping[str, str]) -> str | None:
    """The remedy that ``rule`` (hypothesis -> remedy name, in order of precedence; ``NONE``:
    where none explains the loss) names for the first hypothesis of its order that explains
    the loss (``explaining``); None where the rule names none for that case."""
    for hypothesis, name in rule.items():
        if hypothesis != NONE and hypothesis in explaining:
            return name
    return rule.get(NONE)


def remedy(read: Mapping[str, dips.Dip], margin: float = MARGIN) -> str:
    """The remedy's runs per rung (R4, R5): ``KEEPS`` where every rung keeps the rare path,
    ``LOSES`` where one loses it, else the first undecided reading."""
    if not read:
        return stats.CANNOT_INFORM
    got = [rare_path(d, margin) for d in read.values()]
    if all(x == KEEPS for x in got):
        return KEEPS
    if LOSES in got:
        return LOSES
    return stats.FEW_SEEDS if stats.FEW_SEEDS in got else stats.UNDECIDED


def resolve(changes: Mapping[str, Any], found: str | None, named: Sequence[str]) -> dict:
    """A remedy's ``TrainConfig`` changes with ``CULPRIT`` in ``spared_negatives`` replaced by
    the kind that item 4 found: (c)'s first named kind, else the attribution's culprit."""
    kind = (tuple(named) or (found,))[0]
    out = dict(changes)
    if CULPRIT in out.get("spared_negatives", ()):
        if kind is None or kind == "other":
            raise ValueError("remedy spares the culprit, but item 4 named no kind of sample")
        out["spared_negatives"] = tuple(kind if k == CULPRIT else k
                                        for k in out["spared_negatives"])
    return out


CULPRIT = "culprit"
"""In a remedy's ``spared_negatives``: the kind of sample item 4 found (``resolve``)."""
