"""Typed settings with one range per quantity: the field types that parameters and run settings
are declared with (pydantic), and ``check`` for a value outside a model. An out-of-range value
is an error that names the setting before anything is computed."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError


def Int(lo: int | None = None, hi: int | None = None):
    return Annotated[int, Field(ge=lo, le=hi)]


def Real(lo: float | None = None, hi: float | None = None, *, open_lo: bool = False,
         open_hi: bool = False):
    return Annotated[float, Field(gt=lo if open_lo else None, ge=None if open_lo else lo,
                                  lt=hi if open_hi else None, le=None if open_hi else hi,
                                  allow_inf_nan=False)]


Positive = Real(0, open_lo=True)
NonNegative = Real(0)
Probability = Real(0, 1)
Text = Annotated[str, Field(min_length=1)]


def ListOf(item: Any, min_len: int = 1):
    return Annotated[list[item], Field(min_length=min_len)]


Distribution = Annotated[list[Real(0)], Field(min_length=1)]
"""A probability vector (``require_distribution`` checks that it sums to one)."""


def require_distribution(name: str, v: list[float]) -> None:
    require(abs(sum(v) - 1.0) <= 1e-6, f"{name}: probabilities must sum to 1, they sum to "
                                        f"{sum(v):.6g}")


def require(condition: bool, message: str) -> None:
    """A cross-check: raise ``ValueError(message)`` unless ``condition``."""
    if not condition:
        raise ValueError(message)


def check(kind: Any, value: Any, name: str) -> Any:
    """``value`` validated against the field type ``kind`` (outside a model, e.g. in a
    dataclass); a ``ValueError`` naming ``name`` if it does not fit."""
    try:
        return TypeAdapter(kind).validate_python(value, strict=True)
    except ValidationError as e:
        raise ValueError(f"{name}={value!r}: {e.errors()[0]['msg']}") from None
