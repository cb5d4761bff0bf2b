# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The `unlearning` API
#
# Every public function and class of the package, with its signature and the first paragraph of its
# docstring, read from the installed code when the book was built (so this page cannot drift from
# it). Each module holds one concept; the docstrings cite the paper section they implement.

# %% tags=["parameters"]
package = "unlearning"

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("90-api", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import importlib
import inspect
import pkgutil

from IPython.display import Markdown, display

root = importlib.import_module(package)
SKIP = {"unlearning.cli", "unlearning.world.reference"}


def first_paragraph(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


def signature(obj) -> str:
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def module_markdown(module) -> str:
    lines = [f"## `{module.__name__}`", "", first_paragraph(module), ""]
    for name, obj in sorted(vars(module).items()):
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        kind = "class" if inspect.isclass(obj) else "def"
        lines += [f"- **`{kind} {name}{signature(obj)}`**", f"  {first_paragraph(obj)}"]
    return "\n".join(lines)


names = sorted(info.name for info in pkgutil.walk_packages(root.__path__, f"{package}."))

# %% tags=["hide-input"]
display(Markdown("\n\n".join(module_markdown(importlib.import_module(n)) for n in names if n not in SKIP)))
