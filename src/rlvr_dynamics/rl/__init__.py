"""RLVR training on TRL's ``GRPOTrainer``: GRPO, GRPO-N, GSPO and GSPO-N (Section 4.1,
Appendix B.5 and C.2), and the lambda-weighted family between GRPO and GRPO-N.

* ``algorithms``: the registry of algorithms (importance-sampling level, lambda, aggregation);
* ``trainer``: the one small subclass of TRL's trainer that the -N variants and lambda need
  (and the options that leave tokens or samples out of the loss);
* ``packing``: the packed passes' layout (each distinct prompt once, completions without
  padding, each seeing its prompt and itself alone);
* ``config``: ``Settings`` (a run's shared settings, declared once, with their ranges) and
  ``TrainConfig`` (everything that determines a run: its cache key), checked before any model
  loads;
* ``data``: what the trainer sees (prompt text, the dataset and its mix, the 0/1 reward);
* ``dynamics``: Figure 2's held-out curves, logged while training;
* ``probe``: the boundary measured along training;
* ``attribution``: one update's change of each path's first-character log-probability split
  by the kinds of sample that made it (Ren and Sutherland's decomposition), at chosen updates;
* ``run``: ``train(cfg, profile)`` -> the run's folder (found again, never recomputed unless
  asked; resumed from its last checkpoint after a crash), readers for what it holds, and the
  launch command of a missing run.

Launch at the paper's scale with ``accelerate launch ... -m rlvr_dynamics.run train`` (README).
The submodules are imported explicitly (``from rlvr_dynamics.rl.runs import train``), so
that reading a configuration never pays for importing TRL.
"""
