"""Checks of the chapters' parameters, before any work: papermill `-p` values and profile YAML files.

A chapter's defaults are the assignments of its `parameters` cell (notebooks/NAME.py). A value
passed by papermill, or written in a profile's YAML (notebooks/profiles/P/NAME.yaml), must

- name a parameter the chapter has (YAML files; papermill itself warns about unknown `-p` names);
- have the default's type (an int where a float is expected is fine, a list's items too);
- pass the check of its name (`PARAMETER_CHECKS`): a method the registry knows, a positive finite learning rate,
  a violation tolerance in [0, 1], ...

A wrong value raises `ParameterError`: one line naming the parameter, the value and what is
allowed. Inside a notebook it prints as that one line, without a traceback (IPython's
`_render_traceback_`), so papermill's error report ends in the user's mistake, not in our code.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from pathlib import Path

from unlearning.records import read_yaml_mapping

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
PROFILES = ("smoke", "mini", "paper")
# Imports inside functions: `experiments check` (before every chapter) imports only the registries the
# values it checks name; checking a method name needs no torch or transformers.


class ParameterError(ValueError):
    """A user's wrong parameter: shown as its one-line message (no traceback in a notebook)."""

    def _render_traceback_(self) -> list[str]:
        return [f"ParameterError: {self}"]


# --- rules by parameter name -------------------------------------------------------------------

def _one_of(allowed: Callable[[], tuple]) -> Callable:
    def rule(value) -> str | None:
        names = allowed()
        return None if value in names else f"must be one of {', '.join(map(str, names))}"
    return rule


def _all_of(allowed: Callable[[], tuple], may_be_empty: bool = False) -> Callable:
    def rule(values) -> str | None:
        names = allowed()
        if not values and not may_be_empty:
            return "must not be empty"
        stray = [v for v in values if v not in names]
        return f"{stray[0]!r} is not one of {', '.join(map(str, names))}" if stray else None
    return rule


def _number(low: float, high: float, *, low_open: bool = True, integer: bool = False, each: bool = False) -> Callable:
    """A finite number in (low, high] (or [low, high] with `low_open=False`); `each`: a non-empty list of them."""
    def ok(value) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        if integer and value != int(value):
            return False
        return (value > low if low_open else value >= low) and value <= high

    bracket = "(" if low_open else "["
    what = f"{'an integer' if integer else 'a finite number'} in {bracket}{low:g}, {high:g}]"

    def rule(value) -> str | None:
        if each:
            if not value:
                return "must not be empty"
            bad = [v for v in value if not ok(v)]
            return f"{bad[0]!r}: every item must be {what}" if bad else None
        return None if ok(value) else f"must be {what}"
    return rule


def _methods() -> tuple:
    from unlearning.methods import METHODS

    return tuple(METHODS)


def _rules() -> tuple:
    from unlearning.choices import RULES

    return RULES


def _sizes() -> tuple:
    from laboratory.family import SIZES

    return tuple(SIZES)


REAL_SIZE = re.compile(r"^\d+(\.\d+)?[mb]$")  # a real checkpoint named by its parameter count: 135m, 0.5b, 7b


def _size(value) -> str | None:
    if value in _sizes() or REAL_SIZE.match(str(value)):
        return None
    return f"must be one of {', '.join(_sizes())} (the laboratory's) or a parameter count such as 135m or 7b"


def _size_list(values) -> str | None:
    if not values:
        return "must not be empty"
    return next((f"{v!r}: {problem}" for v in values if (problem := _size(v))), None)


def _devices() -> tuple:
    from unlearning.choices import DEVICES

    return DEVICES


def _dtypes() -> tuple:
    from unlearning.choices import DTYPES

    return DTYPES


def _codes() -> tuple:
    from unlearning.quantize import CODE_BOOKS

    return tuple(CODE_BOOKS)


def _rmu_grid(value) -> str | None:
    from experiments.lab import RMU_GRID

    if set(value) != set(RMU_GRID):
        return f"must have exactly the keys {', '.join(RMU_GRID)}"
    for key, values in value.items():
        problem = _number(0, 1e6, each=True)(values) if isinstance(values, list) else "must be a list"
        if problem:
            return f"{key}: {problem}"
    return None


def _tofu_forget_splits() -> tuple:
    from unlearning.benchmarks import get_benchmark

    return get_benchmark("tofu").forget_splits


def _muse_corpora() -> tuple:
    from unlearning.benchmarks.muse import CORPORA

    return CORPORA


PARAMETER_CHECKS: dict[str, Callable] = {
    "profile": _one_of(lambda: PROFILES),
    "device": _one_of(_devices), "dtype": _one_of(_dtypes), "recipe_scale": _one_of(lambda: ("laboratory", "paper")),
    "size": _size, "sizes": _size_list, "real_size": _size,
    "methods": _all_of(_methods), "quantized_methods": _all_of(_methods, may_be_empty=True),
    "objective": _one_of(_methods), "objectives": _all_of(_methods),
    "rules": _all_of(_rules), "sweep_rules": _all_of(_rules), "optimizers": _all_of(lambda: ("adamw", "sgd")),
    "forget_split": _one_of(_tofu_forget_splits), "forget_splits": _all_of(_tofu_forget_splits),
    "small_update_share": _number(0, 1, low_open=False),
    "codes": _all_of(_codes), "corpora": _all_of(_muse_corpora), "splits": _all_of(lambda: ("bio", "cyber")),
    "lr": _number(0, 1), "graddiff_lr": _number(0, 1),
    "epochs": _number(0, 1000), "batch_size": _number(0, 4096, integer=True),
    "cap": _number(0, 1e6, integer=True), "masc_cap": _number(0, 1e6, integer=True),
    "graddiff_steps": _number(0, 1e6, integer=True), "measure_steps": _number(0, 1e6, integer=True),
    "trainer_steps": _number(0, 1e6, integer=True),
    "checkpoints": _number(0, 1e6, integer=True, each=True), "ks": _number(0, 1e6, integer=True, each=True),
    "betas": _number(0, 1e3, each=True), "rhos": _number(0, 1 - 1e-12, each=True),
    "tolerances": _number(0, 1, low_open=False, each=True), "retain_weights": _number(0, 1e6, low_open=False, each=True),
    "rmu_grid": _rmu_grid,
    # extra seeds of a rerun method (seed 0 is the main run's): positive integers, or none
    "seeds": lambda value: _number(0, 2**31, integer=True, each=True)(value) if value else None,
    "seeded": _all_of(_methods, may_be_empty=True),  # the methods that rerun with those seeds
    "answer_tokens": _number(0, 4096, integer=True), "curation_checked": _number(0, 1e6, integer=True, low_open=False),
    # chapter 13's measured runs: any of its default variants
    "variants": _all_of(lambda: tuple(defaults_of("13-paper-scale")["variants"])),
    # time to a good model (chapter 6): the checkpoint schedule (the criterion is one item of resolution)
    "checkpoint_first": _number(0, 1e6, integer=True), "checkpoint_growth": _number(1, 100),
}


# --- a chapter's defaults -----------------------------------------------------------------------

def defaults_of(chapter: str, notebooks: Path = NOTEBOOKS) -> dict:
    """The assignments of a chapter's `parameters` cell (its text source, py:percent)."""
    path = Path(notebooks) / f"{chapter}.py"
    if not path.is_file():
        raise ParameterError(f"chapter: no notebook {path}")
    lines, inside = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# %%"):
            if inside:
                break
            inside = 'tags=["parameters"]' in line
        elif inside:
            lines.append(line)
    values = {}
    for node in ast.parse("\n".join(lines)).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def _type_problem(value, default) -> str | None:
    """Why `value` does not have `default`'s type (None when it does)."""
    def kind(x) -> str:
        if isinstance(x, bool):
            return "a boolean"
        if isinstance(x, (int, float)):
            return "a number"
        return {str: "a string", list: "a list", dict: "a mapping"}.get(type(x), type(x).__name__)

    if kind(value) != kind(default):
        return f"must be {kind(default)} like its default {default!r}"
    if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float) \
            and not value.is_integer():
        return f"must be an integer like its default {default!r}"
    if isinstance(default, list) and default:
        for item in value:
            problem = _type_problem(item, default[0])
            if problem:
                return f"item {item!r} {problem.replace('its default', 'the default items')}"
    return None


def check_values(chapter: str, values: Mapping, defaults: Mapping, *, unknown_ok: bool = False) -> None:
    """Raise `ParameterError` for the first wrong value of `values` (see the module docstring)."""
    for name, value in values.items():
        if name not in defaults:
            if unknown_ok:
                continue
            raise ParameterError(f"{chapter}: unknown parameter {name!r}; it has {', '.join(defaults)}")
        problem = _type_problem(value, defaults[name]) or (PARAMETER_CHECKS[name](value) if name in PARAMETER_CHECKS else None)
        if problem:
            raise ParameterError(f"{chapter}: parameter {name} = {value!r} {problem}")


def check_parameters(chapter: str, namespace: Mapping, notebooks: Path = NOTEBOOKS) -> None:
    """The chapter's first line of work: every parameter's value as papermill left it in the
    notebook's `namespace` (its `globals()`), checked against its defaults and rules."""
    defaults = defaults_of(chapter, notebooks)
    check_values(chapter, {name: namespace[name] for name in defaults if name in namespace}, defaults)


def check_profile_files(profile_dir: Path, notebooks: Path = NOTEBOOKS) -> list[Path]:
    """Every YAML of a profile folder checked: chapter files against their notebooks, learn.yaml
    as a learning plan, fetch.yaml as a fetch plan. Returns the files checked."""
    profile_dir = Path(profile_dir)
    if not profile_dir.is_dir():
        raise ParameterError(f"profile: folder not found: {profile_dir}")
    checked = []
    for path in sorted(profile_dir.glob("*.yaml")):
        if path.stem.startswith("accelerate-"):  # accelerate's own launch configs
            continue
        values = read_yaml_mapping(path, ParameterError)
        try:
            if path.stem == "learn":
                from laboratory.learning import LearnPlan

                LearnPlan.from_dict(values)
            elif path.stem == "fetch":
                from unlearning.fetch import read_plan

                read_plan(path)
            else:
                check_values(f"{path}", values, defaults_of(path.stem, notebooks))
        except ParameterError:
            raise
        except ValueError as error:
            raise ParameterError(f"{path}: {error}") from None
        checked.append(path)
    return checked
