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
# # The laboratory world
#
# The papers evaluate on TOFU, MUSE, WMDP and RWKU with 0.5B-7B models on GPUs. None of that can be
# downloaded here, and a classroom laptop has no GPU. So the companion generates, from a seed, a
# fictional world and renders it into the **same schemas** as the real benchmarks: the same split
# names and the same fields per item. One loader (`unlearning.data.load_split`) reads both, so every
# later chapter runs unchanged on the real data with the `paper` profile.
#
# Facts are uniform random draws from fixed pools, so a model that never saw a fact can only guess:
# the retain-only *oracle* is an honest stand-in for retraining. Every fact is stated in three
# surface forms; training corpora use two, and the third is held out, which lets us tell reciting a
# trained sentence from knowing the fact.

# %% tags=["parameters"]
data_root = "data/mini"   # a rendered world: data/<profile>

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("02-world", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
from pathlib import Path

import matplotlib.pyplot as plt

from experiments.plotting import plot_split_sizes, use_book_style
from experiments.presentation import glue
from laboratory.world import holdings, showcase, summary

use_book_style()
if not Path(data_root).is_dir():
    raise FileNotFoundError(f"data_root: folder not found: {data_root} (run `make data`)")
table = summary(data_root)
glue(**holdings(data_root))

# %% [markdown]
# ## Every split, next to the real benchmark
#
# `records` counts our items, `real records` the real benchmark's (blank where the real size is not
# fixed, or where the split has no real counterpart, such as our pretraining corpus).

# %% tags=["hide-input"]
table[["benchmark", "split", "records", "real records", "fields"]].set_index(["benchmark", "split"])

# %% mystnb={"figure": {"caption": "Items per split of the laboratory world, one panel per benchmark (log scale). The pretraining corpus and its probes belong to the base model's learning stage.", "name": "fig-world-sizes"}} tags=["hide-input"]
plot_split_sizes(table)
plt.show()

# %% [markdown]
# ## One item of each kind
#
# A TOFU-style author question with its paraphrases and perturbed answers, a MUSE-style verbatim
# prompt, a WMDP-style four-choice question, an RWKU-style cloze and an adversarial probe, and a
# pretraining probe that states the same fact in a held-out surface form.

# %% tags=["hide-input"]
showcase(data_root)

# %% [markdown]
# **What this world holds.** {glue:text}`authors` fictitious authors in TOFU's schema
# ({glue:text}`qa_pairs` question-answer pairs), {glue:text}`articles` forget articles and
# {glue:text}`chapters` forget chapters in MUSE's, {glue:text}`hazardous` hazardous four-choice
# questions in WMDP's, {glue:text}`rwku_targets` RWKU-style targets, and a pretraining corpus of
# {glue:text}`documents` documents. The data card (`data/README.md`) lists every file; `make data`
# regenerates it byte for byte.
