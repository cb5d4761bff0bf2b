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
# # Beyond the papers: combining the two
#
# The two papers attack different parts of unlearning. MASC changes *what is pushed and when to
# stop*: a bounded margin objective and a violation-rate stopping rule. PCGrad/SAGO change *how the
# forget push meets retention*: the combined update never opposes the retain gradient. Nothing stops
# us from using both. This chapter asks two questions neither paper answers:
#
# 1. **MASC under SAGO or PCGrad synthesis.** MASC's forget term (the margin hinge) and its retain
#    term (KL to the original model) are combined by plain summation in the MASC paper. Does
#    retention-first synthesis buy utility, or cost forgetting?
# 2. **The violation stopping rule for NPO and SimNPO.** The rule only needs the model's margins on
#    probe sequences, so it can stop any method. Does it save the baselines' time without losing
#    their forgetting?
#
# Both run on TOFU-mini forget10 from the main-size target, with the shared protocol, next to the
# best runs of chapters 6 and 11's recipe (SimNPO+GD with SAGO) on the same data.

# %% tags=["parameters"]
profile = "mini"
size = "s"
forget_split = "forget10"
cap = 1000   # most steps a self-stopping run may take (runs that never reach the tolerance stop here)
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("16-beyond", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt

from experiments.beyond import COLUMNS, contrast, variant_results
from experiments.comparison import every_number
from experiments.plotting import plot_variants, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab, Protocol

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
results, oracle = variant_results(lab, size, forget_split, Protocol(cap=cap))
glue(synthesis="; ".join(contrast(results, "MASC (paper: sum)", v) for v in ("MASC + PCGrad", "MASC + SAGO")),
     stopping="; ".join(contrast(results, f"{m} (fixed budget)", f"{m} + violation stop") for m in ("NPO", "SimNPO")))

# %% [markdown]
# ## Every variant
#
# A row per variant: how many steps it took and whether the violation rule ended it (a fixed-budget
# run never stops by itself), its wall-clock seconds (training plus probes), and the TOFU metrics of
# the model it left: forget-set ROUGE-L and answer probability (lower is more forgotten), forget
# quality (the KS test against the retain-only oracle; 1 is indistinguishable from it) and model
# utility (higher is better).

# %% tags=["hide-input"]
every_number(results, {}, COLUMNS)[0]

# %% [markdown]
# The same variants as one picture: each method keeps its colour from the rest of the book, the
# marker's shape says how the forget and retain gradients were combined, a filled marker stopped by
# itself and an open one ran its fixed budget, and a larger marker took longer. A good variant sits
# low on the horizontal axis and high on the vertical one, near the oracle's cross.

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L (lower is better) against model utility for every variant; filled markers stop by themselves (violation rule), open ones ran a fixed budget. Marker size grows with run time. The grey cross is the retain-only oracle.", "name": "fig-beyond-tradeoff"}} tags=["hide-input"]
plot_variants(results, oracle)
plt.show()

# %% [markdown]
# **What the run shows.** Against plain MASC: {glue:md}`synthesis`. Violation stopping against the
# fixed budget: {glue:md}`stopping`. A variant is only an improvement if it moves towards the upper
# left (less forget recall, more utility) at no greater cost; these are single-seed runs on a tiny
# model, so differences of a few hundredths are noise.
