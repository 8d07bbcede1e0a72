"""One module per chapter of the book, beside its notebook (``notebooks/<name>.md``).

A chapter module holds the chapter's typed parameters (``Params``, a pydantic model: the
defaults are the ``cpu`` profile's values, with ranges and cross-checks whose errors name the
parameter), its computations, its readings (the claim checks and their thresholds) and its
figures. What a chapter reads of another chapter's parameters is a typed object of the library
that both declare: the chapter that makes it inherits it (the training chapter's ``Params`` is
an ``rl.grid.Training``), the chapters that read it declare a field of its type (``training:
Training``). The notebook is prose, its ``parameters`` cell (the profile's name only) and a few
calls::

    P = page.opened(globals(), "scenario")       # right after the parameters cell
    T = P.training                               # the training chapter's runs and settings

The runner (``rlvr_dynamics.profiles``) resolves every chapter's parameters (defaults < profile
< overrides) before anything executes and fills each such field from the chapter that makes its
type: an override of the training chapter reaches every chapter that reads the training runs.
"""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from rlvr_dynamics import REPO
from rlvr_dynamics.fields import (Distribution, Int, ListOf, NonNegative, Positive,  # noqa: F401
                                  Probability, Real, Text, require, require_distribution)

NAMES = ("theory", "toy_dynamics", "base_model", "evaluation", "training", "reproduction",
         "scenario", "ladder", "mechanism", "regime_map", "pretrained", "verdict")
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

Spec = str | dict[str, Any]
"""A model or benchmark spec (``registry``)."""


# --- the parameters of a chapter -------------------------------------------------------------

class ChapterParams(BaseModel):
    """A chapter's parameters: declared once, with their defaults (the ``cpu`` profile)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, validate_default=True)

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
