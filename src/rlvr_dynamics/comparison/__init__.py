"""Trained models against their base (Section 4), for every chapter that compares them.

* ``models``: the models of a comparison (the base, sampled several times for the noise floor,
  and one finished run per algorithm and seed) and the problems they are measured on;
* ``metrics``: Pass@k and the entropies of every evaluation, per problem and in long form,
  Tables 1 and 4's numbers over seeds, the base's ceiling and mid-curve k (plain tables of
  numbers; the chapters' ``shown`` lay them out for people);
* ``claims``: the paper's claims of Section 4 checked over seeds and problems against margins
  declared before the runs;
* ``case``: the case study (Figure 3): corrected steps carried along by rewarded answers.

The submodules are imported explicitly (``from rlvr_dynamics.comparison.metrics import
table1``).
"""
