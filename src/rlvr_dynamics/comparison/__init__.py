"""Trained models against their base (Section 4), for every chapter that compares them.

* ``models``: the models of a comparison (the base, sampled several times for the noise floor,
  and one finished run per algorithm and seed) and the problems they are measured on;
* ``tables``: Pass@k and the entropies of every evaluation in long form, Tables 1 and 4 over
  seeds, the base's ceiling and mid-curve k;
* ``claims``: the paper's claims of Section 4 checked over seeds and problems against margins
  declared before the runs;
* ``case``: the case study (Figure 3): corrected steps carried along by rewarded answers.

The submodules are imported explicitly (``from rlvr_dynamics.comparison.tables import
table1``).
"""
