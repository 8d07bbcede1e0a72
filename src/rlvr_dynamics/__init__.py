"""rlvr_dynamics: an executable reproduction of "The Debate on RLVR Reasoning Capability
Boundary: Shrinkage, Expansion, or Both? A Two-Stage Dynamic View".

One idea per module, in layers that import only downward (``imports.LAYERS``): ``store``
(results on disk), ``imports`` (the package's import graph), ``progress`` (progress bars),
``fields`` (typed settings, one range each), ``parallel`` (work side by side); ``theory`` (Lemma
1, Theorem 1, Proposition 1), ``passk``, ``entropy`` and ``stats`` (metrics), ``dips`` (a mass's fall over seeds on the
log scale) and ``survival`` (censored times: the Kaplan-Meier median and its interval), ``power`` (seeds
and problems a contrast needs, from a pilot), ``tasks`` (verifiable tasks and graders),
``models``, ``sampling`` (the sampler), ``paper_tables`` (the paper's own numbers); ``toy``
(Algorithm 1), ``toy_schedule`` (the toy on the language model's training schedule), ``law``
(the toy's time to expansion), ``pretrain`` (the base model), ``path_prior`` (the base's prior
on the rare path as a dial), ``registry`` (models and tasks by name), ``exact`` (the completion
tree: exact Pass@k), ``verdicts``; ``measure`` (a model evaluated as the paper evaluates),
``rl`` (GRPO/GSPO and their -N variants on TRL, and Figure 2's readings), ``boundary`` and
``comparison`` (trained models against their base: Tables 1 and 4 over seeds, Section 4's
claims), ``regimes`` (the paper's scenario in the language model: its grid of runs, their
readings and the rules that decide), ``released`` (what the results release held at a commit:
a registration's proof); ``chapters`` (one package per chapter: parameters and computations, then figures,
tables and sentences above them; the words, panels and styles several chapters share beside
them); ``profiles``; ``page`` (a page's first lines), ``execution`` (the notebooks run by
papermill), ``report`` (the run report and the cost pages), ``book`` (the HTML book of a
profile), ``publish`` (one book across profiles), ``lock`` (one build of a profile at a time)
and ``release`` (the finished results kept in the repository, without weights); ``run`` (the
command lines) and ``texts``
(the texts written from what they repeat, and the check that they agree).
``docs/CONTRIBUTING.md`` has the map and what each kind of edit recomputes.
"""
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
"""The repository root (the package is installed in editable mode from ``src/``)."""

__version__ = "0.1.0"
