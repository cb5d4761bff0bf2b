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
# # Unlearning across scales
#
# **The claim** (MASC paper, scale study with Qwen2.5 0.5B-7B): larger models memorise more verbatim
# ({doc}`03-learning`), yet after MASC the forget-set metrics come out about the same at every size
# (*scale-invariant*), while model utility grows with size. SimNPO is run beside it as the
# strongest fixed-budget baseline of the paper's comparison.
#
# Here: the TOFU-mini target of every size in the family, unlearned on forget10 with **the scale
# study's own recipe** (`masc/scale`, printed below with the official file of every value: MASC with
# rho 0.5, eta 0.5, a KL retain term at weight 1 and a stop at a violation rate of 0.2 confirmed on 64
# sequences; SimNPO as OpenUnlearning trains it), scaled to the laboratory by the rule printed with
# the table, each model judged against the retain90 oracle of its own size.

# %% tags=["parameters"]
profile = "mini"
sizes = ["xs", "s", "m", "l"]
methods = ["MASC", "SimNPO"]  # runs of the recipe masc/scale (its SimNPO carries OpenUnlearning's NLL retain term)
forget_split = "forget10"
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("08-scale", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from experiments.calibration import check_summary, check_table, ladder_table
from experiments.comparison import SCALE_COLUMNS, ScaleVerdicts, every_number, scale_comparison
from experiments.lab import Lab, tofu_target
from experiments.plotting import plot_against_size, use_book_style
from experiments.presentation import glue
from experiments.tables import show_recipe
from laboratory.family import SIZES

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
left_out = [size for size in SIZES if size not in sizes]
glue(sizes=", ".join(sizes), left_out=f"This profile leaves out {', '.join(left_out)} to keep the book within its time "
     "budget (add them to `learn.yaml` and to this chapter's `sizes`)." if left_out else "Every size of the family is here.")
study = scale_comparison(lab, sizes, methods, forget_split)
results = study.results
show_recipe(lab, "masc/scale", methods, tofu_target(sizes[0]), forget_split=forget_split, factors=study.factors)
glue(factors=", ".join(f"{m} x {f:g}" for m, f in study.factors.items()), check_summary=check_summary(study.checks))

# %% [markdown]
# This page studies the sizes {glue:md}`sizes`. {glue:md}`left_out`
#
# ## One rate at every size, calibrated
#
# The scaling rule of {ref}`scaling-rule` calibrates each method's rate factor on each size's target
# (the largest factor of the ladder at which model utility never falls below three quarters of the
# target's beyond its interval at any
# point); as the paper runs one rate at every size, each method then runs at the smallest factor
# its sizes chose ({glue:md}`factors`), so that every size keeps its model. Every run is checked
# before the page judges: {glue:md}`check_summary`

# %% tags=["hide-input"]
display(ladder_table(study.ladders()).style.format(precision=3).format({"lr": "{:.3g}", "factor": "{:g}"}))
check_table(study.checks).style.format(precision=3)

# %% [markdown]
# ## The forget metrics and utility against size
#
# A scale-invariant method draws flat lines in the two forget panels; the oracles, which never saw
# the forget set, show how flat a line can be on these models at all. In the utility panel the
# claim is the opposite: the line should rise with size, as the targets' does.

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L, forget-set answer probability and model utility against model size (log scale) for the target, the retain90 oracle of each size, MASC and SimNPO.", "name": "fig-scale-metrics"}} tags=["hide-input"]
plot_against_size(results)
plt.show()

# %% [markdown]
# Every number of the figure, with the steps and seconds of each run (MASC stops by itself; SimNPO
# runs its recipe's budget), the truth ratio and forget quality. Each run is judged against the
# oracle of its own size, so the forget quality of every size compares like with like:

# %% tags=["hide-input"]
every_number(results.set_index(["method", "size"]), {}, SCALE_COLUMNS)[0]

# %% [markdown]
# (verdict-scale)=
# ## Did the claim hold?
#
# The claim has two halves, judged together (`verdicts.scale_invariant`), every difference with its
# paired 95 % interval over the same forget items, which every size answers (`experiments.intervals`).
# First, every size must have *forgotten*: MASC's forget ROUGE-L below its target's beyond the
# interval; invariance of an unmoved metric says nothing, so otherwise the page cannot tell.
# *Scale-invariant forgetting*: MASC's gap to the oracle of its own size does not change between
# sizes beyond the interval. *Utility grows*: MASC's model utility rises from the smallest size to
# the largest beyond the interval, with no step between neighbouring sizes falling beyond it. Both
# halves hold: held; one: partly; neither: did not hold. Where the utility change is inside its
# interval, that half cannot tell and the forget half alone decides between partly and did not
# hold; where the forget metric sits at zero for every size, or MASC's utility fell below the
# oracle's at a size (a collapsed run, not MASC as its paper reports it), the page cannot tell.
#
# The paper's study runs Qwen2.5 from 0.5B to 7B parameters, a 14-fold range; the laboratory's
# family spans about 18-fold with every size, less with the sizes a profile leaves out, so a trend
# here is read over a narrower range than the paper's (the table above gives each size's count).

# %% tags=["hide-input"]
scale = ScaleVerdicts(results, methods, checks=tuple(c for c in study.checks if c.name.startswith("MASC,")))
glue(**scale.sentences())

# %% [markdown]
# **Did the claim hold in miniature?** Sizes {glue:md}`sizes`. {glue:md}`runs`. The oracles, which
# never saw the forget set, score {glue:md}`oracles`. Forgotten (target minus MASC, per size):
# {glue:md}`removed`. Change of MASC's gap to its oracle between sizes: {glue:md}`gaps`. Utility:
# {glue:md}`utility`. Intervals: {glue:md}`resolution`. Verdict: {glue:md}`verdict`.

# %% tags=["hide-input"]
Markdown(scale.records(profile))
