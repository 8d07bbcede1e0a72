"""The paper's scenario inside the language model, as the library that three chapters stand on.

A *regime* is a base and a training mix: the base's habits at its first completion character,
set by the dial of ``path_prior`` (its P(stepwise) ``prior`` and P(guess) ``guess``; None: as
pretrained), and the share of training problems beyond the direct path (``rl.data.mix``; None:
the train split as drawn). An *arm* of the paper's scenario is a regime with a guess habit (three
paths at one decision); its *control*, the same base without it. Each regime is trained with each
algorithm over seeds (``grid``: the grid of runs, with the training chapter's settings), the
boundary probed from the policy's probabilities along training (``rl.probe``). Before any run of
a regime starts, the toy's prediction for its base is registered (``prediction``).

One idea a module: ``grid`` (the regimes and the runs they make), ``probes`` (the probes read as
tables), ``stages`` (the two stages in numbers), ``toy_mapping`` (the toy beside each regime),
``prediction`` (the registered predictions), ``scenario`` (the arm against its control, and the
rules that decide), ``crossover`` (each cell's crossover against its registration; two
algorithms or two regimes against each other), ``toy_rungs`` (the ladder's registered toy rungs
and the slope that tells the mechanisms apart), ``ladder`` (the rungs from the tabular toy to
the full model, read), ``clock`` (R1's clock set to the network's, and the second stage given
that time), ``mechanism`` (why GRPO-N loses the rare path: the hypotheses' rules, the
attribution's reading, the remedy rule), ``plan`` (a plan registered in two phases, judged
from git).

The chapters that read them: ``chapters.scenario`` (the paper's scenario against its control),
``chapters.ladder`` (the ladder from the toy to the network), ``chapters.mechanism`` (why the
network departs from the toy) and ``chapters.regime_map`` (the
regime map and its knobs).
"""
