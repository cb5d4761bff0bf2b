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
# # WMDP-mini: retention first
#
# **The claim** (SAGO paper {cite}`xiao2026sago`, main table and Fig. 3; WMDP {cite}`li2024wmdp`): adding a retain term to a forget objective is not
# enough, since GA+GD, NPO+GD and SimNPO+GD all lose much of the model's general ability (MMLU) while
# driving hazardous-knowledge accuracy (WMDP) to chance. Combining the forget and retain gradients so
# that the update never opposes retention (one-sided PCGrad per module, or SAGO's per-coordinate sign
# gate) keeps far more utility at the same forgetting: SimNPO+GD recovers 44.6 % of the target's
# MMLU naively, 94 % with PCGrad and 96 % with SAGO. Finer granularity helps: global PCGrad <
# module-wise PCGrad < SAGO (element-wise).
#
# Here the WMDP-mini target is the pretrained base model (it learned the hazard domain from the
# world corpus, as Zephyr did from the web). As in the paper, bio and cyber are unlearned apart: the
# bio runs forget the bio forget corpus and retain the bio retain corpus, the cyber runs likewise,
# and each is scored by its own four-choice accuracy (lower is better, chance 25 %) and by the
# MMLU-like set (higher is better). **Recovery** = MMLU after / MMLU of the target, in percent.
# **Every run is the SAGO paper's own** (the recipes `sago/wmdp-bio` and `sago/wmdp-cyber`, printed
# below with the official file of every value): its rate, step budget and weights per objective and
# rule, AdamW without weight decay, a 10 % warm-up then linear decay, clipping at 1.0, and the corpora
# packed into blocks as SAGO's `PretrainingDataset` packs them, scaled to the laboratory by the rule
# printed with the table.

# %% tags=["parameters"]
profile = "mini"
size = "s"
splits = ["bio", "cyber"]          # each unlearned apart, with its own recipe
retain_weights = [0.1, 0.3, 1.0]   # alpha sweep for the Pareto fronts (first split; gamma: the recipe's)
sweep_rules = ["sum", "pcgrad", "sago"]
objectives = ["GradDiff", "NPO+GD", "SimNPO+GD"]   # GA+GD, NPO+GD, SimNPO+GD
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("11-wmdp", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown

from experiments.calibration import check_summary, check_table, grid_factors
from experiments.tables import show_recipe
from experiments.plotting import plot_wmdp_pareto, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab
from experiments.retention import (WmdpVerdicts, flat_wmdp_metrics, granularity_table, wmdp_grid,
                                  wmdp_table)

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
base = f"base-{size}"
target = lab.evaluate("wmdp", lab.model(base))
main = pd.concat([wmdp_grid(lab, base, split, objectives, target) for split in splits], ignore_index=True)
sweep = wmdp_grid(lab, base, splits[0], objectives, target, rules=sweep_rules, retain_weights=retain_weights)
results = pd.concat([main[main.split == splits[0]], sweep[sweep.variant != "forget-only"]], ignore_index=True)

# %% [markdown]
# ## The recipes of this page
#
# One table per split: every run as the SAGO paper's configuration sets it (`paper lr`, `paper
# batch`) and as this page runs it, with the file each value comes from.

# %% tags=["hide-input"]
for split in splits:
    show_recipe(lab, f"sago/wmdp-{split}", sorted(set(main[main.split == split].recipe.str.split(" ").str[0])), base,
                benchmark="wmdp", forget_split=f"{split}-forget-corpus", factors=grid_factors(main[main.split == split]))

# %% [markdown]
# Each run's rate factor is calibrated on this base model as {ref}`scaling-rule` states the rule,
# with MMLU as the utility it must keep (three quarters of the target's, beyond the paired interval
# over the same questions, at every kept checkpoint and at
# its end); the retain-weight sweep below runs at the factor of its recipe run. Before the page
# judges, every run is checked: a collapse is MMLU below three quarters of the target's (beyond the
# interval) at its first
# point, a removal the split's own accuracy below the target's beyond the paired interval over the
# same questions. {glue:md}`check_summary`

# %% tags=["hide-input"]
checks = list(main["check"]) + list(sweep[sweep.variant != "forget-only"]["check"])
glue(check_summary=check_summary(checks))
check_table(checks).style.format(precision=3)

# %% [markdown]
# ## The main table
#
# Each objective with its recipe's weights: forget-only, with the GD retain term combined by plain
# summation, and with global PCGrad, module-wise PCGrad and SAGO; bio and cyber runs apart.
# `WMDP (own split)` is the accuracy on the split's own hazardous questions (lower is better; 0.25 is
# chance), `recovery %` the run's MMLU as a share of the target's, and `alpha` the retain weight the
# run used (0 for forget-only). A row with low WMDP accuracy and high recovery is what the paper's
# claim asks for; a low recovery at low WMDP accuracy is a model that forgot by breaking. The note
# under the table names any column that cannot move on this profile.

# %% tags=["hide-input"]
# an accuracy the target cannot be told from chance on (its 95 % interval covers 1/4) cannot drop: no signal
flat = flat_wmdp_metrics(target)
table, note = wmdp_table(main, flat, splits)
glue(target=f"Target (base-{size}): WMDP-Bio {target['wmdp-bio_accuracy']:.3f}, WMDP-Cyber "
     f"{target['wmdp-cyber_accuracy']:.3f}, MMLU {target['mmlu_accuracy']:.3f}.", flat_note=note or " ")
table.round(3)

# %% [markdown]
# {glue:md}`target` {glue:md}`flat_note`

# %% [markdown]
# ## Pareto fronts over the retain weight
#
# Every run of the sweep on the first split: its WMDP accuracy (lower is better) against MMLU
# (higher is better), the retain weight alpha swept around the recipe's. Marker shapes follow the SAGO paper's Fig. 3: circle forget-only, square +GD,
# triangle +GD+PCGrad, star +GD+SAGO; the line joins each rule's non-dominated runs.

# %% mystnb={"figure": {"caption": "WMDP-mini Pareto fronts, one panel per forget objective: the first split's WMDP accuracy against MMLU accuracy for every retain weight alpha under plain summation (+GD), module-wise PCGrad and SAGO. The dashed line is the target's MMLU and the dotted line chance.", "name": "fig-wmdp-pareto"}} tags=["hide-input"]
plot_wmdp_pareto(results, objectives, target["mmlu_accuracy"])
plt.show()

# %% [markdown]
# ## Granularity: global, per module, per coordinate
#
# The SAGO paper's ablation (GA+GD on WMDP Bio: global PCGrad 51.0, module-wise 53.0, SAGO 54.1
# MMLU). The same comparison here, for every objective and split at its recipe's settings (where SAGO
# releases no global PCGrad configuration for an objective, its module-wise PCGrad settings run with
# the global rule; the recipe column of the table above says so).

# %% tags=["hide-input"]
granularity_table(main).round(3)


# %% [markdown]
# (verdict-wmdp)=
# ## Did the claims hold?

# %% tags=["hide-input"]
judged = WmdpVerdicts(main, target, flat, splits, objectives)
glue(**judged.sentences())

# %% [markdown]
# **Did the claims hold in miniature?** {glue:md}`recovery`. Retention from global PCGrad to
# module-wise PCGrad to SAGO: {glue:md}`granularity`. Every difference of two runs is read with its
# paired 95 % interval over the same questions, never narrower than one question
# ({glue:md}`resolutions`); a rule that keeps more only while forgetting less is confounded and
# cannot tell, and "did not hold" needs +GD to be at least as good on both. A comparison with a run
# whose MMLU cannot be told from chance (a collapsed run, not the method as its paper reports it),
# or that failed its check above (collapsed at its first point, or did not forget beyond its
# interval), carries no verdict.

# %% tags=["hide-input"]
Markdown(judged.records(profile))
