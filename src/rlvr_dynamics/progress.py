"""Progress bars that worker processes can silence.

``parallel.pool_map`` sets ``TQDM_DISABLE`` for its workers (the parent shows one bar over the
jobs). tqdm reads that variable only for the keyword arguments a call leaves out, so a bar must
not pass ``disable=`` itself; ``bar`` leaves the iterable bare instead when it is not wanted.
"""
from __future__ import annotations

from typing import Iterable, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def bar(iterable: Iterable[T], show: bool = True, **kwargs) -> Iterable[T]:
    """``tqdm(iterable, **kwargs)`` when ``show``, else ``iterable`` itself."""
    return tqdm(iterable, **kwargs) if show else iterable
