"""Profiles (``configs/<name>.yaml``) and the notebooks' parameters.

A profile fills the ``parameters`` cells of the notebooks::

    description: one line
    chapters: [training, verdict]      # optional: the chapters it runs (default: all)
    notebooks:
      toy_dynamics: {seeds: 100, steps: 400}

A notebook's value is, from weakest to strongest: the default in its ``parameters`` cell,
the profile, the reader's override. ``resolve`` merges them and validates the result.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import jupytext
import yaml

from rlvr_dynamics import REPO
from rlvr_dynamics.params import ParameterError, validate

CONFIGS = REPO / "configs"
NOTEBOOKS = REPO / "notebooks"


def available_profiles() -> list[str]:
    return sorted(p.stem for p in CONFIGS.glob("*.yaml"))


def load_profile(name: str, _seen: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """The per-notebook parameter values of profile ``name``.

    A profile may say ``extends: <other>``: it then starts from the other profile's values and
    replaces, notebook by notebook, the parameters it names.
    """
    path = CONFIGS / f"{name}.yaml"
    if not path.is_file():
        raise ParameterError(f"unknown profile {name!r}; available: {available_profiles()}")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ParameterError(f"{path}: not valid YAML: {e}") from None
    notebooks = data.get("notebooks") or {}
    if not isinstance(notebooks, dict) or not all(
            isinstance(v, dict) for v in notebooks.values() if v is not None):
        raise ParameterError(f"{path}: 'notebooks' must map notebook names to parameters")
    known = set(notebook_names())
    for nb in notebooks:
        if nb not in known:
            raise ParameterError(f"{path}: unknown notebook {nb!r}; known: {sorted(known)}")
    merged: dict[str, dict[str, Any]] = {}
    if data.get("extends"):
        if data["extends"] in (*_seen, name):
            raise ParameterError(f"{path}: 'extends' makes a cycle: {[*_seen, name, data['extends']]}")
        merged = load_profile(data["extends"], (*_seen, name))
    for nb, values in notebooks.items():
        merged[nb] = {**merged.get(nb, {}), **(values or {})}
    return merged


def profile_chapters(name: str) -> list[str] | None:
    """The chapters profile ``name`` runs by default (its ``chapters:`` list), or None for all
    of them. A profile that covers part of the book (one model, one chapter) says so there."""
    load_profile(name)  # the profile exists and is valid
    data = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text()) or {}
    chapters = data.get("chapters")
    if chapters is None:
        return None
    if not isinstance(chapters, list) or not all(c in notebook_names() for c in chapters):
        raise ParameterError(f"{CONFIGS / f'{name}.yaml'}: 'chapters' must list notebooks of "
                             f"{notebook_names()}, got {chapters!r}")
    return chapters


def notebook_names() -> list[str]:
    return sorted(p.stem for p in NOTEBOOKS.glob("*.md"))


def notebook_path(name: str) -> Path:
    path = NOTEBOOKS / f"{name}.md"
    if not path.is_file():
        raise ParameterError(f"unknown notebook {name!r}; known: {notebook_names()}")
    return path


def notebook_defaults(name: str) -> dict[str, Any]:
    """The values assigned in the notebook's ``parameters`` cell (literals only)."""
    path = notebook_path(name)
    nb = jupytext.read(path)
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ParameterError(f"{path}: expected one cell tagged 'parameters', found {len(cells)}")
    values: dict[str, Any] = {}
    for node in ast.parse(cells[0].source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(
                f"{path}: parameters cell line {node.lineno}: only `name = literal` allowed")
        try:
            values[node.targets[0].id] = ast.literal_eval(node.value)
        except ValueError:
            raise ParameterError(f"{path}: parameters cell line {node.lineno}: "
                                 f"{node.targets[0].id} is not a literal") from None
    return values


def resolve(profile: str, notebook: str, overrides: dict[str, Any] | None = None
            ) -> dict[str, Any]:
    """Parameters of ``notebook`` under ``profile`` with ``overrides``, validated."""
    defaults = notebook_defaults(notebook)
    layers = {f"profile {profile!r}": load_profile(profile).get(notebook, {}),
              "override": overrides or {}}
    values = dict(defaults)
    for where, layer in layers.items():
        for name, value in layer.items():
            if name not in defaults:
                raise ParameterError(f"{notebook}: unknown parameter {name!r} ({where}); "
                                     f"valid: {sorted(defaults)}")
            values[name] = value
    values["profile"] = profile
    return validate(notebook, values)
