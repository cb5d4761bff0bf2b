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
# # Gradient geometry
#
# PCGrad {cite}`yu2020pcgrad` and SAGO {cite}`xiao2026sago` change the update, not the losses. This chapter looks at the gradients
# themselves during the WMDP-mini bio runs of {doc}`11-wmdp` (GA+GD, i.e. `GradDiff`, each rule with its
# settings of the SAGO paper's recipe `sago/wmdp-bio`; the same runs are read back from the run
# store), logged at every step:
#
# - **Forget-Retain** $\cos(g_f, g_r)$: how much the two tasks conflict;
# - **Comb-Retain** $\cos(g_{final}, g_r)$ and **Comb-Forget** $\cos(g_{final}, g_f)$: where the update goes;
# - the share of conflicting *coordinates* ($g_{f,i} g_{r,i} < 0$) and of conflicting *modules*
#   ($\langle g_f^j, g_r^j \rangle < 0$), overall and per kind of module.
#
# **The claims** (SAGO paper, geometry table and section 5): both rules keep $\langle g_{final}, g_r
# \rangle \ge 0$; SAGO "aligns more tightly" with retention than PCGrad. The second is not true for
# arbitrary vectors (`sago.md` §5 gives counterexamples); we test it on the gradients that training
# actually produces, comparing both rules on the *same* $(g_f, g_r)$ at every step.

# %% tags=["parameters"]
profile = "mini"
size = "s"
objective = "GradDiff"
rules = ["sum", "pcgrad_global", "pcgrad", "sago"]
optimizers = ["adamw", "sgd"]  # the step actually taken, under the recipe's AdamW and under plain SGD
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("10-geometry", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown

from experiments import alignment

from experiments.tables import show_recipe
from unlearning import recipes
from experiments.plotting import plot_losses_by_rule, plot_module_conflicts, plot_sago_against_pcgrad, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab
from experiments.retention import geometry_factors, geometry_runs, sago_run_name

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
recipe, start = recipes.load("sago/wmdp-bio"), f"base-{size}"
logs = alignment.logs_of(geometry_runs(lab, objective, rules, start))

# %% [markdown]
# The runs, as the SAGO paper's WMDP-Bio configurations set them (each rule its own rate, budget and
# weights; where no global-PCGrad configuration is released for an objective, its module-wise
# PCGrad settings run with the global rule):

# %% tags=["hide-input"]
show_recipe(lab, recipe, list(dict.fromkeys(sago_run_name(recipe, objective, rule)[0] for rule in rules)),
            f"base-{size}", benchmark="wmdp", forget_split="bio-forget-corpus",
            factors=geometry_factors(lab, objective, rules, start))

# %% [markdown]
# ## Losses along training (the SAGO paper's Fig. 1)

# %% mystnb={"figure": {"caption": "Retain loss (left, lower is better) and forget loss (right; under gradient ascent the forget NLL, which rises) at every step of GA+GD on WMDP-mini under each update rule.", "name": "fig-geometry-losses"}} tags=["hide-input"]
plot_losses_by_rule(logs)
plt.show()

# %% [markdown]
# ## Cosines, averaged over training (the SAGO paper's geometry table)

# %% tags=["hide-input"]
alignment.mean_cosines(logs).round(3)

# %% [markdown]
# ## Where the conflict lives
#
# Share of conflicting coordinates per kind of module over training (plain summation run). Exact
# zeros do not count as conflicts. The embedding matrix is tied to the output layer, so every row
# receives a gradient through the softmax; under gradient ascent the forget gradient is the negated
# likelihood gradient, and on the directions shared by all text the two tasks oppose each other.

# %% mystnb={"figure": {"caption": "Share of coordinates where the forget and retain gradients have opposite signs, per kind of module (rows) and training step (columns), GA+GD with plain summation on WMDP-mini. 0.5 would be unrelated gradients.", "name": "fig-geometry-modules"}} tags=["hide-input"]
plot_module_conflicts(logs, rules[0], alignment.module_kinds(logs))
plt.show()

# %% [markdown]
# ## Does SAGO align more tightly than PCGrad?
#
# At every logged step of every run, all four rules were applied to the *same* pair $(g_f, g_r)$ and
# their cosine with $g_r$ recorded (`cos_retain_<rule>`). Each point below is one step; above the
# diagonal SAGO is better aligned with retention than module-wise PCGrad.

# %% mystnb={"figure": {"caption": "cos(g_final, g_r) of SAGO against module-wise PCGrad on the same gradients, every step of every run; colour: whether g_f and g_r conflict globally at that step.", "name": "fig-geometry-test"}} tags=["hide-input"]
both, conflict = alignment.same_gradients(logs)
plot_sago_against_pcgrad(both, conflict)
plt.show()

# %% tags=["hide-input"]
alignment.tighter_table(both, conflict).round(3)


# %% [markdown]
# ### Two vectors where it fails
#
# The counterexamples of `sago.md` §5, computed with the library's own `combine` ($\alpha = \gamma = 1$,
# one module): with a global conflict PCGrad can align better, and without one SAGO drops $g_r$ on
# every aligned coordinate and keeps only $g_f$.

# %%
alignment.counterexample_table()

# %% [markdown]
# ## Does the step the optimiser takes oppose retention?
#
# The guarantee is about the combined gradient $g_{final}$, but the parameters move by what the
# optimiser makes of it. Under plain SGD the step is $-\eta\, g_{final}$ (plus weight decay), so it
# keeps the guarantee. Under AdamW every coordinate is divided by its own running second moment, and
# on the first step the update is about $-\eta\,\mathrm{sign}(g_{final})$: SAGO's combined vector carries
# $g_r$'s sign on every coordinate, so its first AdamW step is, coordinate by coordinate, the
# retain-only step, whatever $g_f$ says. Each run below logged, at every step, the cosine of the actual
# parameter change with $-g_r$ (positive: the step descends the retain loss) and with $-g_f$ (positive:
# it descends the forget objective). Same recipe, same gradients at the start; only the optimiser
# differs (SGD at the recipe's rate, which moves the weights little: the direction is the question).

# %% tags=["hide-input"]
steps_taken = alignment.step_table(pd.concat([alignment.logs_of(geometry_runs(lab, objective, rules, start, o), optimizer=o)
                                             for o in optimizers], ignore_index=True))
counts, lean = alignment.step_sentences(steps_taken, optimizers, rules)
glue(opposing=counts, lean=lean)
steps_taken.round(3)

# %% [markdown]
# Steps that opposed retention (cos(step, -g_r) < 0): {glue:md}`opposing`. Under SGD PCGrad's and
# SAGO's steps inherit the guarantee of their combined gradients; under AdamW a step is what the
# per-coordinate scaling makes of them. {glue:md}`lean` A rule whose steps lean to retention forgets
# less per step at the same budget, which bears on the short-budget comparisons of {doc}`11-wmdp` and
# {doc}`12-rwku`.

# %% [markdown]
# (verdict-geometry)=
# ## Did the claims hold?

# %% tags=["hide-input"]
judged = alignment.GeometryVerdicts(logs, rules)
glue(**judged.sentences())

# %% [markdown]
# **What held.** The guarantee: the smallest cos(g_final, g_r) over all steps is {glue:md}`nonneg`
# (never negative, as the invariants require; plain summation reaches {glue:text}`sum_min:.3f`). Mean
# Comb-Retain: {glue:md}`mean_cos`; SAGO's run minus PCGrad's {glue:md}`difference` (95 % interval,
# {glue:md}`how`), the paper's statistic for 'SAGO aligns more tightly'. On identical gradients SAGO was better aligned than module-wise
# PCGrad at {glue:text}`share:.0%` of the steps ({glue:text}`better_conflict` of {glue:text}`conflict`
# with a global conflict, {glue:text}`better_aligned` of {glue:text}`aligned` without): 'SAGO aligns
# more tightly' is {glue:md}`tendency`, and the two small vectors above show how it fails.

# %% tags=["hide-input"]
Markdown(judged.records(profile))
