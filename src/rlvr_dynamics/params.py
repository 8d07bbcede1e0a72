"""What each notebook's parameters may be, checked before any compute starts.

Every notebook has a cell tagged ``parameters`` (its defaults, the ``cpu`` profile) and calls
``check_notebook(<name>, globals())`` right after it; the runner (``rlvr_dynamics.run``) calls
``validate`` on every selected notebook before executing the first one. A bad value stops with
an error that names the notebook, the parameter and the reason.
"""
from __future__ import annotations

import math
from typing import Any, Callable

Check = Callable[[Any], None]
"""A check raises ``ValueError(reason)`` for a bad value and returns nothing otherwise."""


class ParameterError(ValueError):
    """A parameter (or profile) that cannot be used; the message names it."""


# --- checks --------------------------------------------------------------------------------

def integer(lo: int | None = None, hi: int | None = None) -> Check:
    def check(v: Any) -> None:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"must be an integer, got {type(v).__name__}")
        if lo is not None and v < lo:
            raise ValueError(f"must be >= {lo}")
        if hi is not None and v > hi:
            raise ValueError(f"must be <= {hi}")
    return check


def real(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False) -> Check:
    def check(v: Any) -> None:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"must be a finite number, got {v!r}")
        if lo is not None and (v <= lo if open_lo else v < lo):
            raise ValueError(f"must be {'>' if open_lo else '>='} {lo}")
        if hi is not None and v > hi:
            raise ValueError(f"must be <= {hi}")
    return check


positive = real(0, open_lo=True)
non_negative = real(0)
probability = real(0, 1)


def choice(*options: Any) -> Check:
    def check(v: Any) -> None:
        if v not in options:
            raise ValueError(f"must be one of {list(options)}")
    return check


def text(v: Any) -> None:
    if not isinstance(v, str) or not v:
        raise ValueError("must be a non-empty string")


def boolean(v: Any) -> None:
    if not isinstance(v, bool):
        raise ValueError("must be true or false")


def optional(inner: Check) -> Check:
    def check(v: Any) -> None:
        if v is not None:
            inner(v)
    return check


def list_of(inner: Check, *, min_len: int = 1) -> Check:
    def check(v: Any) -> None:
        if not isinstance(v, (list, tuple)):
            raise ValueError("must be a list")
        if len(v) < min_len:
            raise ValueError(f"must have at least {min_len} element(s)")
        for i, item in enumerate(v):
            try:
                inner(item)
            except ValueError as e:
                raise ValueError(f"element {i} ({item!r}) {e}") from None
    return check


def distribution(v: Any) -> None:
    """A probability vector: non-negative entries summing to one (to 1e-6)."""
    list_of(real(0), min_len=1)(v)
    if abs(sum(v) - 1.0) > 1e-6:
        raise ValueError(f"probabilities must sum to 1, they sum to {sum(v):.6g}")


# --- registry ------------------------------------------------------------------------------

COMMON: dict[str, Check] = {"profile": text}
"""Parameters every notebook has; the runner fills ``profile``."""

SPECS: dict[str, dict[str, Check]] = {}
CROSS: dict[str, Callable[[dict[str, Any]], None]] = {}


def register(notebook: str, cross: Callable[[dict[str, Any]], None] | None = None,
             **spec: Check) -> None:
    """Declare the parameters of ``notebook`` (and an optional check across them)."""
    SPECS[notebook] = {**COMMON, **spec}
    if cross is not None:
        CROSS[notebook] = cross


def validate(notebook: str, values: dict[str, Any]) -> dict[str, Any]:
    """Check every value of ``values`` against ``notebook``'s spec; return them unchanged."""
    if notebook not in SPECS:
        raise ParameterError(f"unknown notebook {notebook!r}; known: {sorted(SPECS)}")
    spec = SPECS[notebook]
    for name, value in values.items():
        if name not in spec:
            raise ParameterError(
                f"{notebook}: unknown parameter {name!r}; valid: {sorted(spec)}")
        try:
            spec[name](value)
        except ValueError as e:
            raise ParameterError(f"{notebook}: parameter {name}={value!r} {e}") from None
    missing = sorted(set(spec) - set(values))
    if missing:
        raise ParameterError(f"{notebook}: parameters {missing} have no value")
    if notebook in CROSS:
        try:
            CROSS[notebook](values)
        except ValueError as e:
            raise ParameterError(f"{notebook}: {e}") from None
    return values


def check_notebook(notebook: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Validate the notebook's parameters as they stand in its ``namespace`` (``globals()``)."""
    if notebook not in SPECS:
        raise ParameterError(f"unknown notebook {notebook!r}; known: {sorted(SPECS)}")
    return validate(notebook, {k: namespace[k] for k in SPECS[notebook] if k in namespace})


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


# --- the notebooks' parameters -------------------------------------------------------------
# One `register` per notebook, in book order. Each chapter adds its own block here.

def _theory(p: dict[str, Any]) -> None:
    _require(len(set(p["mc_samples"])) >= 3,
             "mc_samples needs at least 3 distinct sample counts to fit a slope")
    _require(p["hidden"] % 8 == 0, f"hidden={p['hidden']} must be a multiple of 8 "
             "(4 attention heads with an even head size, as rotary embeddings need)")
    for G in p["group_sizes"]:  # the bound of theory.group_update_moments' enumeration
        _require(math.comb(p["vocab"] + G - 1, G) <= 2_000_000,
                 f"group_sizes has G={G}: enumerating its groups over vocab={p['vocab']} "
                 "actions is too large (more than 2,000,000 multisets)")


register("theory", cross=_theory,
         seed=integer(0), vocab=integer(3, 64), lr=positive, draws=integer(1),
         symbolic_vocab=integer(2, 5), mc_samples=list_of(integer(1), min_len=3),
         mc_repeats=integer(2), group_sizes=list_of(integer(2)), group_draws=integer(100),
         hidden=integer(8), layers=integer(1), lr_max=positive, halvings=integer(2, 30),
         G=integer(2), max_len=integer(1, 64))


def _toy_dynamics(p: dict[str, Any]) -> None:
    def scenario(where: str, pi0: list, r: list) -> None:
        _require(len(pi0) == len(r), f"{where}: {len(pi0)} initial probabilities but "
                 f"{len(r)} rewards")
        _require(len(pi0) >= 3, f"{where}: the toy needs at least 3 actions (a1, a2, a3)")
        _require(min(pi0) > 0, f"{where}: every initial probability must be > 0 (a softmax "
                 "policy gives every action some mass)")
        _require(pi0[0] > pi0[1] and r[0] < r[1], f"{where}: the toy's scenario needs "
                 "pi(a1) > pi(a2) and r(a1) < r(a2) (a2 is the rare better action)")

    scenario("pi0/rewards", p["pi0"], p["rewards"])
    for i, pi0 in enumerate(p["pi0_sweep"]):
        scenario(f"pi0_sweep[{i}] with rewards", pi0, p["rewards"])
    for i, r in enumerate(p["reward_sweep"]):
        scenario(f"reward_sweep[{i}] with pi0", p["pi0"], r)
    _require(len(p["pi0_four"]) == len(p["rewards_four"]),
             "pi0_four and rewards_four must list the same number of settings")
    for i, (pi0, r) in enumerate(zip(p["pi0_four"], p["rewards_four"])):
        scenario(f"pi0_four[{i}]/rewards_four[{i}]", pi0, r)
    _require(p["band"] < 1, "band must be < 1 (the central fraction of seeds shaded)")
    for q in p["expansion_p2"]:
        a1 = p["pi0"][0] * (1 - q) / (1 - p["pi0"][1])
        _require(q < a1, f"expansion_p2 has {q}: with pi0 rescaled, pi(a1) = {a1:.3g} is not "
                 "above it, so a2 would start expanded")


register("toy_dynamics", cross=_toy_dynamics,
         seeds=integer(1), steps=integer(1), seed=integer(0), G=integer(2), lr=positive,
         optimizer=choice("adam", "sgd"), tau=positive, pi0=distribution,
         rewards=list_of(real()), pi0_sweep=list_of(distribution),
         reward_sweep=list_of(list_of(real())), G_sweep=list_of(integer(2)),
         tau_sweep=list_of(positive), pi0_four=list_of(distribution),
         rewards_four=list_of(list_of(real())), sgd_lr=positive,
         band=real(0, 1, open_lo=True), expansion_seeds=integer(1),
         expansion_steps=integer(1), expansion_p2=list_of(real(0, 1, open_lo=True)),
         expansion_G=list_of(integer(2)))


def _subsample(v: Any) -> None:
    """{benchmark: [size, repeats]}: the paper's random subsets (Appendix C.2)."""
    if not isinstance(v, dict):
        raise ValueError("must map benchmark names to [size, repeats]")
    for name, pair in v.items():
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2):
            raise ValueError(f"{name}: expected [size, repeats], got {pair!r}")
        try:
            integer(1)(pair[0])
            integer(1)(pair[1])
        except ValueError as e:
            raise ValueError(f"{name}: [size, repeats] {e}") from None


def _evaluation(p: dict[str, Any]) -> None:
    from pathlib import Path

    from rlvr_dynamics.evaluation import (check_benchmark_spec, check_model_spec,
                                          compatible)
    for table in ("table1", "table2"):
        models, benchmarks = p[f"{table}_models"], p[f"{table}_benchmarks"]
        for spec in benchmarks:
            check_benchmark_spec(spec)
        for spec in models:
            check_model_spec(spec)
            _require(any(compatible(spec, b) for b in benchmarks),
                     f"{table}_models has {spec!r}, which reads none of {table}_benchmarks "
                     f"{benchmarks} (the sums models read only sums-*; the others not those)")
    for name in ("data_dir", "benchmarks_dir"):
        _require(p[name] is None or Path(p[name]).is_dir(),
                 f"{name}={p[name]!r} is not a folder")


def _spec(v: Any) -> None:
    """A model or benchmark spec: a non-empty string, or a dict with a string 'name'."""
    if isinstance(v, dict):
        text(v.get("name"))
    else:
        text(v)


register("evaluation", cross=_evaluation,
         table1_models=list_of(_spec), table1_benchmarks=list_of(_spec),
         table1_n=integer(1), table1_max_tokens=integer(1), table1_problems=optional(integer(1)),
         table2_models=list_of(_spec, min_len=0), table2_benchmarks=list_of(_spec, min_len=0),
         table2_n=integer(1), table2_max_tokens=integer(1), table2_problems=optional(integer(1)),
         temperature=non_negative, top_p=real(0, 1, open_lo=True), seed=integer(0),
         backend=choice("transformers", "vllm"), batch_size=integer(1), chunk=integer(1),
         subsample=_subsample, data_dir=optional(text), benchmarks_dir=optional(text),
         bootstrap=integer(100), recompute=boolean)


from rlvr_dynamics.training.algorithms import ALGORITHMS  # noqa: E402 (light: no torch)
from rlvr_dynamics.training.config import LOSS_TYPES, TASKS  # noqa: E402


def _training(p: dict[str, Any]) -> None:
    # Every run the chapter asks for must make a valid TrainConfig (building one imports torch).
    from rlvr_dynamics.training.config import TrainConfig
    runs = [(a, None) for a in p["algorithms"]] + [("grpo", lam) for lam in p["lambdas"]]
    for name, lam in runs:
        try:
            TrainConfig.from_params(p, name, p["seeds"][0], lam)
        except (FileNotFoundError, TypeError) as e:
            raise ValueError(str(e)) from None


def _open_unit(v: Any) -> None:
    real(0, 1, open_lo=True)(v)
    _require(v < 1, "must be < 1 (lambda = 1 is GRPO itself)")


register("training", cross=_training,
         algorithms=list_of(choice(*ALGORITHMS)),
         seeds=list_of(integer(0)), lambdas=list_of(_open_unit, min_len=0),
         model=text, task=choice(*TASKS), base_steps=integer(1), base_hidden=integer(8),
         base_layers=integer(1), base_batch=integer(1), steps=integer(1),
         num_generations=integer(2), generation_batch=integer(2), update_batch=integer(1),
         micro_batch=integer(1),
         learning_rate=positive, weight_decay=non_negative, beta=non_negative,
         epsilon=real(0, 1, open_lo=True), dual_clip=optional(positive),
         entropy_coef=non_negative, temperature=positive, max_completion_length=integer(1),
         context=integer(2), loss_type=choice(*LOSS_TYPES),
         eval_every=integer(1), eval_problems=integer(1), eval_batch=integer(1),
         checkpoint_every=integer(1), use_vllm=boolean, bf16=boolean,
         gradient_checkpointing=boolean, train_inline=boolean, workers=integer(1),
         lora_rank=integer(0))


def _base_model(p: dict[str, Any]) -> None:
    lo, hi = p["operands"] if len(p["operands"]) == 2 else (None, None)
    _require(lo is not None and 2 <= lo <= hi, "operands must be [lo, hi] with 2 <= lo <= hi")
    _require(p["hidden"] % 4 == 0, f"hidden={p['hidden']} must be divisible by the 4 heads")
    _require(p["step_slip"] + p["correction"] <= 1, "step_slip + correction must be <= 1")


register("base_model", cross=_base_model,
         seed=integer(0), steps=integer(1), hidden=integer(4), layers=integer(1),
         batch=integer(1), lr=positive, worked=non_negative,
         operands=list_of(integer(2), min_len=2),
         stepwise=probability, carry_slip=probability, carry_cap=optional(integer(0)),
         step_slip=probability, correction=probability,
         problems=integer(1, 200), samples=integer(1), max_tokens=integer(8))


def _mapping(v: Any) -> None:
    if not isinstance(v, dict) or not v:
        raise ValueError("must be a non-empty mapping")


def _reproduction(p: dict[str, Any]) -> None:
    for name, s in p["settings"].items():
        _require(isinstance(s, dict) and set(s) == {"temperature", "top_p"},
                 f"settings[{name!r}] must be {{temperature: T, top_p: p}}, got {s!r}")
        non_negative(s["temperature"])
        real(0, 1, open_lo=True)(s["top_p"])
    for key in ("verdict_setting", "case_setting"):
        _require(p[key] in p["settings"], f"{key}={p[key]!r} must be one of the settings "
                                          f"{list(p['settings'])}")
    _require(max(p["ks"]) <= p["n"], f"every k must be <= n={p['n']}, got ks={p['ks']}")
    _require(len(p["benchmarks"]) == 2, "benchmarks must be [in-distribution, out-of-distribution]")


register("reproduction", cross=_reproduction,
         benchmarks=list_of(_spec, min_len=2), problems=integer(1, 200), n=integer(1),
         ks=list_of(integer(1)), settings=_mapping, max_tokens=integer(1),
         base_repeats=integer(2), workers=integer(1), batch_size=integer(1),
         verdict_setting=text, case_setting=text, trace_window=integer(1),
         case_samples=integer(1), toy_seeds=integer(1), toy_steps=integer(1),
         knob_generations=list_of(integer(2), min_len=0),
         knob_algorithms=list_of(choice(*ALGORITHMS), min_len=0))

register("verdict")
