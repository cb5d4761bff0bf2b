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
# # RWKU-mini: forgetting people, keeping their neighbours
#
# **The claim** (SAGO paper, Fig. 4 and main table): on RWKU {cite}`jin2024rwku`, where the model must forget real people
# (targets) but keep what it knows about related people (neighbours), SAGO keeps the most neighbour
# knowledge: +3.4 to +13.3 ROUGE-L over PCGrad, most for GA+GD, at similar forgetting.
#
# The RWKU-mini target is the pretrained base model; the forget corpus is the passages about the
# target people (`train_original_passage`), the retain corpus passages about people who are neither
# targets nor neighbours. Metrics are ROUGE-L recall of greedy answers: forget levels 1-3 (cloze,
# question, adversarial; lower is better) and neighbour levels 1-2 (higher is better), plus the
# membership scores of the forget and retain passages. **Every run is the SAGO paper's own RWKU
# run** (the recipe `sago/rwku`, printed below with the official file of every value): its rate and
# weights per objective and rule, two epochs over the packed forget corpus, a 10 % warm-up then
# linear decay, clipping at 1.0, scaled to the laboratory by the rule printed with the table.

# %% tags=["parameters"]
profile = "mini"
size = "s"
objectives = ["GradDiff", "NPO+GD", "SimNPO+GD"]
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("12-rwku", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.benchmarks.rwku import FORGET_METRICS, TABLE_COLUMNS, summarise
from unlearning.claims import record
from unlearning.floors import RECALL_BAR, below, mark
from unlearning.plotting import plot_forget_neighbour_panels, use_book_style
from unlearning import recipes
from unlearning import verdicts
from unlearning.protocol import Lab, rwku_resolutions, sago_gains, sago_grid, sago_versus_pcgrad

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
base = f"base-{size}"
target = lab.evaluate("rwku", lab.model(base))
results = pd.DataFrame(sago_grid(lab, "rwku", base, objectives, recipe="sago/rwku")).drop(columns="run")
recipes.show(lab, "sago/rwku", sorted(set(results.recipe.str.split(" ").str[0])), base, benchmark="rwku")
results = results.join(pd.DataFrame([summarise(r) for _, r in results.iterrows()], index=results.index))

# %% mystnb={"figure": {"caption": "RWKU-mini: forget metric (mean ROUGE-L recall over forget levels 1-3, lower is better) against neighbour ROUGE-L recall (mean of levels 1-2, higher is better); markers as in the SAGO paper's Fig. 4 (circle forget-only, square +GD, triangles PCGrad global/module-wise, star SAGO). The dashed lines mark the target.", "name": "fig-rwku-pareto"}} tags=["hide-input"]
t = summarise(target)
plot_forget_neighbour_panels(results, t, objectives)
plt.show()

# %% tags=["hide-input"]
display(Markdown(f"Target (base-{size}): forget {t['forget']:.3f}, neighbour {t['neighbour']:.3f}."))
# RWKU measures forgetting of what the model knows: a level the target hardly recalls is a floor
flat = {}
for column in FORGET_METRICS:
    flat.update(below(target[column], RECALL_BAR, column, TABLE_COLUMNS[column], "RWKU needs a model that recalls at least "
                      "half of its forget probes"))
table, note = mark(results.set_index(["objective", "variant"])[list(TABLE_COLUMNS)].rename(columns=TABLE_COLUMNS), flat,
                   TABLE_COLUMNS, elsewhere="Knowledge with signal, on a real pretrained model: {doc}`15-rwku-real`.")
display(Markdown(note))
table.round(3)

# %% [markdown]
# (verdict-rwku)=
# ## Did the claim hold?

# %% tags=["hide-input"]
step = rwku_resolutions(lab, "rwku")  # one probe's move of each summary
# every forget level below what RWKU needs (the floors above): the grid cannot separate the rules
floor = ("the target recalls under half of its forget probes at every level (" + ", ".join(
    f"{TABLE_COLUMNS[c]} {target[c]:.2f}" for c in FORGET_METRICS) + "): a floor" if len(flat) == len(FORGET_METRICS) else "")
gains = sago_gains(results, objectives)
display(Markdown("**Did the claim hold in miniature?** " + "; ".join(sago_versus_pcgrad(results, objectives)) + ". The "
                 "paper reports SAGO ahead of PCGrad by 3.4 to 13.3 points; a gain bought with weaker forgetting (a "
                 "larger forget number) does not count as one, and one probe moves the forget summary by "
                 f"{step['forget']:.3f} and the neighbour summary by {step['neighbour']:.3f}, so a smaller gap decides "
                 "nothing." + (
                     f" Here the target itself recalls little about the targets (forget ROUGE-L {t['forget']:.2f}, "
                     f"neighbour {t['neighbour']:.2f}), so the grid sits on a floor and cannot separate the rules: a "
                     "limit of the tiny base model, not evidence for or against the claim; {doc}`15-rwku-real` runs the "
                     "grid on a model that knows its targets." if floor else "")))
display(Markdown(record(
    "sago-rwku", "; ".join(f"{g['objective']} {g['points']:+.1f} points (forget {g['forget_pcgrad']:.2f} vs "
                           f"{g['forget_sago']:.2f})" for g in gains) or "no +GD/PCGrad/SAGO triple in this profile",
    verdicts.sago_keeps_more_over(gains, step["forget"], step["neighbour"], no_signal=floor), profile)))
