"""A chapter page's first lines in one call, whether papermill runs it or a reader does::

    P = page.opened(globals(), "scenario")

A page's ``parameters`` cell names only its profile. Papermill (``execution.execute``) injects
every declared parameter, resolved by the runner; a reader who runs the page by hand
(``make lab``) gets the profile's values resolved the same way (``profiles.plan``: defaults <
profile), with any declared parameter they assigned in the ``parameters`` cell on top. Either
way the values are validated (an error names the parameter) and set as the page's names, as
papermill's injected cell sets them.
"""
from __future__ import annotations

import logging
from typing import Any

import torch

from rlvr_dynamics.chapters import ChapterParams
from rlvr_dynamics.chapters.style import for_pages
from rlvr_dynamics.profiles import params_class, plan


def parameters(namespace: dict[str, Any], chapter: str) -> ChapterParams:
    """``chapter``'s parameters as they stand in a page's ``namespace``: all of them where
    papermill injected them, else the profile's (``profiles.plan``) under the ones assigned."""
    cls = params_class(chapter)
    if not set(cls.model_fields) <= set(namespace):  # run by hand: the profile resolves the rest
        resolved = plan(namespace.get("profile", "cpu"), [chapter])[chapter]
        namespace = {**resolved, **namespace}
    return cls.check(namespace)


def opened(namespace: dict[str, Any], chapter: str, threads: int | None = None) -> ChapterParams:
    """The page's parameters (``parameters``), also set as its names; logging with the time;
    tables formatted for pages (``style.for_pages``); torch on ``threads`` threads where given
    (the tiny models gain nothing from a second thread on two shared cores)."""
    P = parameters(namespace, chapter)
    namespace.update(P.values())
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s",
                        datefmt="%H:%M:%S", force=True)
    for_pages()
    if threads is not None:
        torch.set_num_threads(threads)
    return P
