"""The paper's four algorithms on TRL's ``GRPOTrainer`` (Section 4.1, Appendix B.5), and NSR and
W-REINFORCE beside them.

GRPO is Eq. 2 with TRL's token-level importance ratio ``w_{i,t}``; GSPO is the same trainer with
``importance_sampling_level="sequence"``, whose ratio is
``w_i = (pi_theta(y_i|x) / pi_old(y_i|x))^(1/|y_i|)`` (Section 2). The ``-N`` variants keep only
the samples with a negative relative advantage (Appendix B.5): Eq. 2 with the indicator
``I(A_i < 0)`` inside both sums. A weight ``lambda`` on the positive samples generalises both,

    A'_i = A_i             if A_i < 0,
    A'_i = lambda * A_i    otherwise            (lambda = 1: GRPO/GSPO, lambda = 0: -N),

and since the clipped surrogate ``-min(w A, clip(w) A)`` is positively homogeneous in ``A``,
scaling ``A_i`` by ``lambda >= 0`` scales sample i's policy-gradient term by exactly ``lambda``,
clipping included. ``trainer.GRPONTrainer`` does only this, after TRL has computed the advantages.

Beside them, negative sample reinforcement and its weighted form (Zhu et al. 2025, "The
Surprising Effectiveness of Negative Reinforcement in LLM Reasoning"): REINFORCE-style
advantages with no group baseline and no scaling, from each sample's own reward r in [0, 1],

    A_i = mu * r_i - (1 - r_i)              (NSR: mu = 0; W-REINFORCE: mu = 0.1),

so that a wrong sample is pushed down by 1 whatever its group holds (under GRPO-N a group whose
samples are all wrong has zero advantages and moves nothing) and a right one up by mu. The same
trainer replaces TRL's advantages by these (``reinforce``: mu; None for the group-relative four).

What the -N variants keep, and why:

* The loss normaliser is unchanged: a dropped sample still counts in the denominator. In
  Appendix B.5 the indicator sits inside Eq. 2's sums, so ``1/G`` and ``1/|y_i|`` stay as they
  are; in verl, where the paper trained (following Zhu et al. 2025, whose -N is an advantage
  that is zero on correct samples), the loss is a token-mean over the response mask, which the
  advantage does not touch. TRL's normalisers (``loss_type="dapo"``: all tokens of the batch,
  verl's token-mean; ``"grpo"``: Eq. 2's ``1/G sum_i 1/|y_i|``) likewise count every sample,
  because only the advantage changes. The negative samples therefore get exactly the gradient
  they get under GRPO, and a -N step is smaller than a GRPO step by the missing positive terms.
* GSPO's objective is per sequence: ``1/G sum_i min(w_i A_i, clip(w_i) A_i)``, each sequence
  counting once whatever its length (the GSPO paper's Eq. 5; verl's GSPO recipe aggregates it
  with ``loss_agg_mode=seq-mean-token-mean``). TRL's ``loss_type="dapo"``, a token-mean over the
  batch, would weight each sequence by its length, so GSPO and GSPO-N always aggregate with
  ``"grpo"`` (the mean over sequences of each sequence's token-mean, which with a sequence-level
  ratio is the sequence's own term); GRPO and GRPO-N keep the run's ``loss_type``.
* The KL penalty and the entropy bonus still act on every sample, positive ones included:
  Appendix C.2 adds both "for all algorithms" to the final loss, and verl computes them as
  separate token-means over the whole response mask. Only the policy-gradient term is masked.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Algorithm:
    """One entry of the registry: the importance-sampling level, the weight lambda on the
    positive samples' advantages, the loss aggregation it prescribes (None: the run's
    ``loss_type``) and, for the REINFORCE-style ones, the reward mu of a right sample in place
    of the group-relative advantage (``reinforce``; None: group-relative). How its curves are
    drawn is presentation (``chapters.style``)."""

    name: str
    label: str
    importance_sampling_level: str
    positive_weight: float
    aggregation: str | None = None
    reinforce: float | None = None


ALGORITHMS: dict[str, Algorithm] = {a.name: a for a in (
    Algorithm("grpo", "GRPO", "token", 1.0),
    Algorithm("grpo_n", "GRPO-N", "token", 0.0),
    Algorithm("gspo", "GSPO", "sequence", 1.0, aggregation="grpo"),
    Algorithm("gspo_n", "GSPO-N", "sequence", 0.0, aggregation="grpo"),
    Algorithm("nsr", "NSR", "token", 1.0, reinforce=0.0),
    Algorithm("w_reinforce", "W-REINFORCE", "token", 1.0, reinforce=0.1),
)}

BASE = "Base"
"""The label of the base model in every table and figure (the paper's "Base Model")."""


def get(name: str) -> Algorithm:
    """The registered algorithm ``name``; an unknown name lists the valid ones."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; valid: {sorted(ALGORITHMS)}")
    return ALGORITHMS[name]
