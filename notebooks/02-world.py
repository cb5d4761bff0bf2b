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
from unlearning.parameters import check_parameters

check_parameters("02-world", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.data import load_split
from unlearning.plotting import use_book_style
from unlearning.world import summary

use_book_style()
if not Path(data_root).is_dir():
    raise FileNotFoundError(f"data_root: folder not found: {data_root} (run `make data`)")
table = summary(data_root)

# %% [markdown]
# ## Every split, next to the real benchmark
#
# `records` counts our items, `real records` the real benchmark's (blank where the real size is not
# fixed, or where the split has no real counterpart, such as our pretraining corpus).

# %% tags=["hide-input"]
table[["benchmark", "split", "records", "real records", "fields"]].set_index(["benchmark", "split"])

# %% mystnb={"figure": {"caption": "Items per split of the laboratory world, one panel per benchmark (log scale). The pretraining corpus and its probes belong to the base model's learning stage.", "name": "fig-world-sizes"}} tags=["hide-input"]
benchmarks = list(table["benchmark"].unique())
fig, axes = plt.subplots(1, len(benchmarks), figsize=(3.0 * len(benchmarks), 4.2), sharey=False)
for ax, benchmark in zip(axes, benchmarks):
    part = table[table["benchmark"] == benchmark]
    ax.barh(part["split"], part["records"], color="#4C72B0")
    ax.set_xscale("log")
    ax.set_title(benchmark)
    ax.tick_params(axis="y", labelsize=7)
fig.tight_layout()
plt.show()

# %% [markdown]
# ## One item of each kind
#
# A TOFU-style author question with its paraphrases and perturbed answers, a MUSE-style verbatim
# prompt, a WMDP-style four-choice question, an RWKU-style cloze and an adversarial probe, and a
# pretraining probe that states the same fact in a held-out surface form.

# %% tags=["hide-input"]
root = Path(data_root)
examples = {
    "tofu forget10_perturbed": load_split(root / "tofu", "forget10_perturbed")[0],
    "muse-news verbmem/forget": load_split(root / "muse-news", "verbmem/forget")[0],
    "muse-books knowmem/forget_qa": load_split(root / "muse-books", "knowmem/forget_qa")[0],
    "wmdp wmdp-bio": load_split(root / "wmdp", "wmdp-bio")[0],
    "rwku forget_level1": load_split(root / "rwku", "forget_level1")[0],
    "rwku forget_level3": load_split(root / "rwku", "forget_level3")[0],
    "pretrain probes (held out)": next(p for p in load_split(root / "pretrain", "probes") if not p["trained"]),
}
pd.DataFrame([{"split": name, "field": field, "value": str(value)[:160]}
              for name, item in examples.items() for field, value in item.items()]).set_index(["split", "field"])

# %% tags=["hide-input"]
n_authors = len(load_split(root / "tofu", "authors", ()))
display(Markdown(
    f"**What this world holds.** {n_authors} fictitious authors in TOFU's schema "
    f"({len(load_split(root / 'tofu', 'full'))} question-answer pairs), "
    f"{len(load_split(root / 'muse-news', 'raw/forget'))} forget articles and "
    f"{len(load_split(root / 'muse-books', 'raw/forget'))} forget chapters in MUSE's, "
    f"{len(load_split(root / 'wmdp', 'wmdp-bio')) + len(load_split(root / 'wmdp', 'wmdp-cyber'))} hazardous "
    f"four-choice questions in WMDP's, {len(load_split(root / 'rwku', 'forget_target'))} RWKU-style targets, "
    f"and a pretraining corpus of {len(load_split(root / 'pretrain', 'corpus'))} documents. "
    f"The data card (`data/README.md`) lists every file; `make data` regenerates it byte for byte."))
