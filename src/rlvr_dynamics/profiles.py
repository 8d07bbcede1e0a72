"""Profiles (``configs/<name>.yaml``) and the notebooks' parameters.

A profile fills the ``parameters`` cells of the notebooks::

    summary: one line                  # what it is: the README's table of profiles
    description: in full               # the rerun page's table of profiles
    chapters: [training, verdict]      # optional: the chapters it runs (default: all)
    notebooks:
      toy_dynamics: {seeds: 100, steps: 400}

A chapter's value is, from weakest to strongest: its default (``chapters.<name>.Params``,
the same as its notebook's ``parameters`` cell), the profile, the reader's override.
``resolve`` merges them and validates the result; ``plan`` resolves every selected chapter and
the chapters they read: a chapter that reads another declares a field of a library type that
the other's ``Params`` is (``dependencies``: the scenario's ``training: rl.grid.Training`` is
the training chapter's), and the field is filled with that chapter's resolved values. The
chapters are imported here, each by name (``CHAPTERS``): the runner's table of them.
A profile's words (``about``) are written in its file only; the README's and the rerun page's
tables of profiles are written from them (``report.profiles_md``).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import jupytext
import yaml

from pydantic import BaseModel

from rlvr_dynamics import REPO
from rlvr_dynamics.chapters import (CONFIGS, NAMES, ChapterParams, ParameterError, base_model,
                                    evaluation, ladder, mechanism, pretrained, regime_map, reproduction,
                                    scenario, theory, toy_dynamics, training, verdict)

NOTEBOOKS = REPO / "notebooks"

CHAPTERS = {m.__name__.rsplit(".", 1)[-1]: m
            for m in (theory, toy_dynamics, base_model, evaluation, training, reproduction,
                      scenario, ladder, mechanism, regime_map, pretrained, verdict)}
"""Each chapter's module by its name (the names of ``chapters.NAMES``, in book order)."""
assert tuple(CHAPTERS) == NAMES, f"CHAPTERS {list(CHAPTERS)} must list chapters.NAMES {NAMES}"


def module(name: str):
    """The module of chapter ``name``."""
    if name not in CHAPTERS:
        raise ParameterError(f"unknown chapter {name!r}; known: {list(NAMES)}")
    return CHAPTERS[name]


def params_class(name: str) -> type[ChapterParams]:
    return module(name).Params


def dependencies(name: str) -> dict[str, tuple[str, type[BaseModel]]]:
    """The fields of ``name``'s parameters that another chapter's parameters fill: field ->
    (that chapter, the field's type), where that chapter's ``Params`` is of the field's type
    (the training chapter's ``Params`` is an ``rl.grid.Training``)."""
    out = {}
    for field, info in params_class(name).model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            makers = [n for n in NAMES if n != name and issubclass(params_class(n), kind)]
            if len(makers) > 1:
                raise ParameterError(f"{name}.{field}: the chapters {makers} all make a "
                                     f"{kind.__name__}; one must")
            if makers:
                out[field] = (makers[0], kind)
    return out


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


TEXTS = ("summary", "description")
"""What a profile's file says of it, the one place it is written: ``summary``, one line (the
README's table of profiles), and ``description``, in full (the rerun page's)."""

SUMMARY_CHARACTERS = 100
"""The most a ``summary`` may hold: one line of the README's table."""


def about(name: str) -> dict[str, str]:
    """Profile ``name``'s words (``TEXTS``) from its file, each on one line; an error names the
    file where one is missing or its summary is longer than ``SUMMARY_CHARACTERS``."""
    load_profile(name)  # the profile exists and is valid
    path = CONFIGS / f"{name}.yaml"
    data = yaml.safe_load(path.read_text()) or {}
    out = {}
    for key in TEXTS:
        text = data.get(key)
        if not isinstance(text, str) or not text.strip():
            raise ParameterError(f"{path}: no {key!r}: a profile's words are written in its file")
        out[key] = " ".join(text.split())
    if len(out["summary"]) > SUMMARY_CHARACTERS:
        raise ParameterError(f"{path}: its summary has {len(out['summary'])} characters, more "
                             f"than one line's {SUMMARY_CHARACTERS} (the rest belongs in its "
                             "description)")
    return out


def notebook_names() -> list[str]:
    return list(NAMES)


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


def resolve(profile: str, notebook: str, overrides: dict[str, Any] | None = None,
            read: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """Parameters of ``notebook`` under ``profile`` with ``overrides`` and, for a chapter that
    reads others, the resolved parameters of each (``read``: chapter -> its values) in the
    field that holds them (``dependencies``), validated."""
    cls = params_class(notebook)
    filled = dependencies(notebook)
    layers = {f"profile {profile!r}": load_profile(profile).get(notebook, {}),
              "override": overrides or {}}
    values: dict[str, Any] = {}
    for where, layer in layers.items():
        for name, value in layer.items():
            if name in filled:
                raise ParameterError(f"{notebook}: {name!r} ({where}) holds the parameters of "
                                     f"the chapter {filled[name][0]!r}: set them there")
            if name not in cls.model_fields or name == "profile":
                raise ParameterError(f"{notebook}: unknown parameter {name!r} ({where}); "
                                     f"valid: {sorted(set(cls.model_fields) - set(filled))}")
            values[name] = value
    values["profile"] = profile
    for field, (chapter, kind) in filled.items():
        if chapter in (read or {}):
            values[field] = {k: v for k, v in read[chapter].items() if k in kind.model_fields}
    return cls.parse(values).values()


def needs_of(selected: list[str]) -> list[str]:
    """``selected`` and every chapter they read, directly or not, in book order."""
    scope, todo = set(), list(selected)
    while todo:
        name = todo.pop()
        if name not in scope:
            scope.add(name)
            todo.extend(chapter for chapter, _ in dependencies(name).values())
    return [n for n in NAMES if n in scope]


def plan(profile: str, selected: list[str], pairs: list[str] = ()) -> dict[str, dict[str, Any]]:
    """The resolved parameters of every selected chapter and of the chapters they read (with
    the ``--param`` overrides ``pairs``), each handed the parameters of those it reads."""
    scope = needs_of(selected)
    overrides = parse_overrides(list(pairs), selected, scope)
    out: dict[str, dict[str, Any]] = {}
    for name in scope:  # book order: a chapter comes after the chapters it reads
        out[name] = resolve(profile, name, overrides.get(name), out)
    return out


def parse_overrides(pairs: list[str], selected: list[str], scope: list[str] | None = None
                    ) -> dict[str, dict[str, Any]]:
    """``name=value`` or ``chapter.name=value`` -> per-chapter overrides.

    An unqualified name applies to every selected chapter that declares it, or, if none does,
    to every chapter they read (``scope``) that does; a name that none declares is an error.
    Values are read as YAML (``1e-3`` as a float).
    """
    scope = scope or selected
    out: dict[str, dict[str, Any]] = {nb: {} for nb in scope}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ParameterError(f"--param {pair!r}: expected name=value")
        value = _parse_value(raw)
        nb, dot, name = key.rpartition(".")
        if dot and nb not in out:
            raise ParameterError(f"--param {pair!r}: chapter {nb!r} is neither selected nor "
                                 f"read by a selected one ({scope})")

        def declaring(names: list[str]) -> list[str]:
            return [n for n in names if key in params_class(n).model_fields]
        targets = [nb] if dot else (declaring(selected) or declaring(scope))
        if not targets:
            raise ParameterError(f"--param {pair!r}: no selected chapter has a parameter "
                                 f"{key!r} (selected: {selected})")
        for t in targets:
            out[t][name if dot else key] = value
    return out


def _parse_value(raw: str) -> Any:
    value = yaml.safe_load(raw)
    if isinstance(value, str):
        for kind in (int, float):
            try:
                return kind(value)
            except ValueError:
                pass
    return value
