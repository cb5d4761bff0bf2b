"""Tidy an executed chapter for the book: one visible parameters block that says its profile.

papermill leaves two parameter cells in an executed notebook: the chapter's own defaults (the
cell tagged `parameters`) and, below it, the values it injected from the profile's YAML (tagged
`injected-parameters`). A reader should see one block holding the values the page actually ran
with. `present` hides the defaults cell (tag `remove-cell`) and rewrites the injected cell as
every parameter's effective value, in the defaults' order with their comments, under a header
naming the profile and its YAML file. Nothing that was executed changes: the effective values are
the defaults overridden by the YAML, which is exactly what the kernel ran.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import numbers
import pkgutil
from pathlib import Path

import nbformat
import yaml

HIDE = "remove-cell"
# Imports inside functions: IPython and myst_nb only in `glue`, which runs in a chapter's kernel;
# `experiments execute` imports this module to tidy a notebook without loading Sphinx.


def _tagged(notebook, tag: str):
    """The first cell carrying `tag`, or None."""
    return next((c for c in notebook.cells if tag in c.get("metadata", {}).get("tags", [])), None)


def default_lines(source: str) -> dict[str, str]:
    """Each assignment of a parameters cell as its source text (the comment lines above it and
    its trailing comment included), by name, in order."""
    lines = source.splitlines()
    found, start = {}, 0
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = "\n".join(lines[start:node.end_lineno])
        start = node.end_lineno
    return found


def effective_source(defaults: str, values: dict, header: str) -> str:
    """The parameters block a reader sees: `header` (comment lines), then every default in order
    with the profile's `values` in place of those it sets, then values without a default."""
    text = default_lines(defaults)
    lines = [f"# {line}" for line in header.splitlines()]
    for name, line in text.items():
        lines.append(f"{name} = {values[name]!r}  # set by the profile" if name in values else line)
    lines += [f"{name} = {value!r}  # set by the profile" for name, value in values.items() if name not in text]
    return "\n".join(lines)


def present(notebook_path: Path | str, profile: str, parameters: Path | str) -> bool:
    """Rewrite an executed notebook in place as described in the module docstring; False (and
    nothing written) when it has no injected parameters cell."""
    notebook_path, parameters = Path(notebook_path), Path(parameters)
    notebook = nbformat.read(notebook_path, as_version=4)
    defaults, injected = _tagged(notebook, "parameters"), _tagged(notebook, "injected-parameters")
    if injected is None:
        return False
    values = yaml.safe_load(parameters.read_text()) or {}
    header = (f"Parameters of this page: profile {profile} ({parameters.as_posix()} over the defaults "
              f"in the chapter's source)")
    if defaults is not None:
        injected.source = effective_source(defaults.source, values, header)
        tags = defaults.metadata.setdefault("tags", [])
        if HIDE not in tags:
            tags.append(HIDE)
    else:
        injected.source = "\n".join([f"# {header}", injected.source])
    nbformat.write(notebook, notebook_path)
    return True


def glue(**values) -> None:
    """Glue each value into the page for its Markdown to cite, as QuantEcon's lectures do: a
    string as Markdown (`{glue:md}` name), a number as a plain int or float (`{glue:text}` name:.3f:
    numpy's scalars would print as `np.float64(...)`, which the role cannot format); nothing is
    shown where the call stands."""
    from IPython.display import Markdown
    from myst_nb import glue as glue_one

    for name, value in values.items():
        if isinstance(value, str):
            value = Markdown(value)
        elif isinstance(value, numbers.Integral):
            value = int(value)
        elif isinstance(value, numbers.Real):
            value = float(value)
        glue_one(name, value, display=False)


def trend(values, digits: int = 2) -> str:
    """A sequence of numbers as the page writes it: "0.56 → 0.85 → 0.86"."""
    return " → ".join(f"{v:.{digits}f}" for v in values)


def _first_paragraph(obj) -> str:
    return (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")


def _signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):  # a class or builtin without one
        return "(...)"


def module_reference(module) -> str:
    """One module as the API page lists it: its first docstring paragraph, then every public
    function and class defined in it (not imported), with its signature and first paragraph."""
    lines = [f"## `{module.__name__}`", "", _first_paragraph(module), ""]
    for name, obj in sorted(vars(module).items()):
        if (not name.startswith("_") and getattr(obj, "__module__", None) == module.__name__
                and (inspect.isfunction(obj) or inspect.isclass(obj))):
            kind = "class" if inspect.isclass(obj) else "def"
            lines += [f"- **`{kind} {name}{_signature(obj)}`**", f"  {_first_paragraph(obj)}"]
    return "\n".join(lines)


def api_reference(package: str, skip=()) -> str:
    """Every module of `package` but those in `skip`, in name order, as Markdown (`module_reference`)."""
    root = importlib.import_module(package)
    names = sorted(info.name for info in pkgutil.walk_packages(root.__path__, f"{package}."))
    return "\n\n".join(module_reference(importlib.import_module(n)) for n in names if n not in skip)
