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
from experiments.parameters import check_parameters

check_parameters("90-api", globals())  # every parameter, before any work: one line naming a wrong one

# %% [markdown]
# The page documents the library, the package `unlearning` that a user's own trainer imports (the
# laboratory and the book's experiment layer are laid out in the README). It skips `unlearning.cli`,
# whose commands `unlearning --help` lists with their options. A name in the list below is importable as written, for example
# `from unlearning.margin import restricted_margin`; the chapters show each piece at work.

# %% tags=["hide-input"]
from IPython.display import Markdown

from experiments.presentation import api_reference

Markdown(api_reference(package, skip={"unlearning.cli"}))
