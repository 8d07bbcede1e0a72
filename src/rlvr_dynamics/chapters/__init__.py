"""One module per chapter of the book, beside its notebook (``notebooks/<name>.md``).

A chapter module holds the chapter's typed parameters (``Params``, a pydantic model: the
defaults are the ``cpu`` profile's values, with ranges and cross-checks whose errors name the
parameter), the chapters whose parameters it reads (``Params.needs``), its computations, its
readings (the claim checks and their thresholds) and its figures. The notebook is prose, its
``parameters`` cell (the profile's name only) and a few calls::

    P = page.opened(globals(), "scenario")       # right after the parameters cell
    T = needed(P, "training")                    # the training chapter's parameters

The runner (``rlvr_dynamics.run``) resolves every chapter's parameters (defaults < profile <
overrides) before anything executes and hands each chapter those of the chapters it needs, in
its ``upstream`` parameter: an override of the training chapter reaches every chapter that
reads the training runs.
"""
from __future__ import annotations

import importlib
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rlvr_dynamics import REPO
from rlvr_dynamics.fields import (Int, ListOf, NonNegative, Positive, Probability, Real, Text,  # noqa: F401
                                  require)

NAMES = ("theory", "toy_dynamics", "base_model", "evaluation", "training", "reproduction",
         "scenario", "ladder", "regime_map", "pretrained", "verdict")
"""The chapters, in book order (``book/_toc.yml`` lists the same)."""

CONFIGS = REPO / "configs"
"""The profiles, one ``<name>.yaml`` each (read by ``profiles``)."""

REFERENCE_COSTS = REPO / "book" / "reference_costs.yaml"
CAPTION = "rlvr_dynamics/caption"
"""The key in a figure's output metadata under which ``style.show`` leaves its caption and
whether it is full width, for ``execution.captions`` to make it the figure's caption."""
"""Minutes per chapter of a reference build (its profile and commit inside): what each run
report compares its build with, and what a chapter states of a cost it does not measure."""


class ParameterError(ValueError):
    """A parameter (or profile) that cannot be used; the message names it."""


# --- field types (``fields``: one range per quantity) -----------------------------------------

Distribution = Annotated[list[NonNegative], Field(min_length=1)]
"""A probability vector (``ChapterParams.require_distribution`` checks that it sums to one)."""

Spec = str | dict[str, Any]
"""A model or benchmark spec (``registry``)."""


def require_distribution(name: str, v: list[float]) -> None:
    require(abs(sum(v) - 1.0) <= 1e-6, f"{name}: probabilities must sum to 1, they sum to "
                                        f"{sum(v):.6g}")


# --- the parameters of a chapter -------------------------------------------------------------

class ChapterParams(BaseModel):
    """A chapter's parameters: declared once, with their defaults (the ``cpu`` profile)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, validate_default=True)

    needs: ClassVar[tuple[str, ...]] = ()
    """The chapters whose parameters this one reads (handed over in ``upstream``)."""

    profile: Text = "cpu"

    @classmethod
    def chapter(cls) -> str:
        return cls.__module__.rsplit(".", 1)[-1]

    @classmethod
    def parse(cls, values: dict[str, Any]) -> ChapterParams:
        """Validated parameters; a bad one raises ``ParameterError`` naming the chapter, the
        parameter, its value and the reason."""
        name = cls.chapter()
        unknown = sorted(set(values) - set(cls.model_fields))
        if unknown:
            raise ParameterError(f"{name}: unknown parameter {unknown[0]!r}; valid: "
                                 f"{sorted(cls.model_fields)}")
        try:
            return cls(**values)
        except ValidationError as e:
            err = e.errors()[0]
            loc = [str(x) for x in err["loc"]]
            msg = err["msg"].removeprefix("Value error, ")
            if not loc:
                raise ParameterError(f"{name}: {msg}") from None
            where = loc[0] + "".join(f"[{x}]" for x in loc[1:])
            value = values.get(loc[0])
            for x in err["loc"][1:]:  # down to the element that is wrong
                try:
                    value = value[x]
                except (KeyError, IndexError, TypeError):
                    break
            raise ParameterError(f"{name}: parameter {where}={value!r}: {msg}") from None

    @classmethod
    def check(cls, namespace: dict[str, Any]) -> ChapterParams:
        """The parameters as they stand in a notebook's ``globals()``, validated."""
        return cls.parse({k: namespace[k] for k in cls.model_fields if k in namespace})

    def values(self) -> dict[str, Any]:
        """The parameters as plain values (what papermill injects)."""
        return self.model_dump()


class NeedsParams(ChapterParams):
    """A chapter that reads other chapters' parameters, which the runner puts in ``upstream``."""

    upstream: dict[str, dict[str, Any]] = {}

    @model_validator(mode="after")
    def _upstream_known(self):
        extra = sorted(set(self.upstream) - set(self.needs))
        require(not extra, f"upstream holds {extra}, which this chapter does not read "
                           f"(it reads {list(self.needs)})")
        return self


def module(name: str):
    """The module of chapter ``name``."""
    if name not in NAMES:
        raise ParameterError(f"unknown chapter {name!r}; known: {list(NAMES)}")
    return importlib.import_module(f"{__name__}.{name}")


def params_class(name: str) -> type[ChapterParams]:
    return module(name).Params


def needed(P: ChapterParams, name: str) -> ChapterParams:
    """The parameters of chapter ``name`` that ``P``'s chapter reads: those the runner handed
    over, or, with none handed over under the ``cpu`` profile, that chapter's defaults (which
    are the ``cpu`` profile's values)."""
    require(name in P.needs, f"{P.chapter()} does not read the chapter {name!r} "
                             f"(it reads {list(P.needs)})")
    cls = params_class(name)
    if name in P.upstream:
        return cls.parse(P.upstream[name])
    if P.profile == "cpu":
        return cls.parse(default_upstream(cls))
    raise ParameterError(
        f"{P.chapter()} reads the parameters of the chapter {name!r} under profile "
        f"{P.profile!r}, and none were handed over: run it with `python -m rlvr_dynamics.run "
        f"--profile {P.profile} --nb {P.chapter()}`, which resolves them")


def default_upstream(cls: type[ChapterParams]) -> dict[str, Any]:
    """``cls``'s defaults (the cpu profile), with the defaults of what it needs in turn."""
    values: dict[str, Any] = {}
    if cls.needs:
        values["upstream"] = {n: default_upstream(params_class(n)) for n in cls.needs}
    return values
