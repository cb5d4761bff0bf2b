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
# # RWKU on real knowledge
#
# In {doc}`12-rwku` the tiny base model hardly recalls its famous people, so the SAGO grid sat on a
# floor. Here RWKU's own recipe {cite}`jin2024rwku` runs on a real pretrained model, SmolLM2-135M-Instruct,
# which already knows real people:
#
# - **Targets it demonstrably knows.** Candidate facts about famous people are written out in
#   `laboratory.world.real_people`, each as a fill-in-the-blank statement (level 1), a question
#   (level 2) and an adversarial variant (level 3: prefix injection, affirmative suffix, role play,
#   context hint, in-context example). A probe is kept only where the original model's greedy
#   answer contains the true answer, and the targets are those of whom it answers the most
#   candidate forget probes (at least a third; RWKU keeps what the original model knows).
# - **A forget corpus the model writes itself**, as RWKU had the original model generate its
#   passages: its greedy replies to "Write a short biography of ..." and similar prompts.
# - **Neighbours**: a related person per target (Einstein and Newton, Leonardo and Michelangelo,
#   ...), whose probes must survive; the retain corpus is what the model writes about people who are
#   neither.
#
# The data are built once by `laboratory rwku-real` and committed (`data/<profile>/rwku-real`),
# like RWKU's generated corpus. Probes use RWKU's official prompts inside the chat template, as
# the SAGO code renders them. **The claim under test** is the SAGO paper's Fig. 4 and RWKU
# column: SAGO keeps the most neighbour knowledge (+3.4 to +13.3 ROUGE-L over PCGrad) at similar
# forgetting; MASC runs beside the grid.

# %% tags=["parameters"]
profile = "mini"
objectives = ["GradDiff", "NPO+GD", "SimNPO+GD"]
rules = ["sum", "pcgrad_global", "pcgrad", "sago"]  # +GD, global PCGrad, module-wise PCGrad, SAGO
with_masc = True
# PCGrad and SAGO rerun with these seeds beside seed 0 on the first objective: their spread widens the
# interval of "SAGO keeps more" beside the probes' own
seeds = [1, 2]
answer_tokens = 32  # greedy tokens of every generated answer (EvalConfig.max_new_tokens); fewer: the smoke profile
device = "auto"
dtype = "float32"
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("15-rwku-real", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown

from experiments.tables import show_recipe
from unlearning.benchmarks import get_benchmark
from unlearning.benchmarks.common import EvalConfig
from unlearning.benchmarks.rwku import PROBE_SPLITS, summarise
from unlearning.data import read_jsonl
from experiments.plotting import plot_forget_neighbour_panels, use_book_style
from experiments.presentation import glue
from experiments.lab import REAL_BASE, Lab
from experiments.retention import (SAGO_OBJECTIVES, SAGO_RULES, curation_by_person, differences_text, forgetting_moved,
                                  rules_over_seeds, rwku_differences, rwku_grid, rwku_record, rwku_table,
                                  sago_versus_pcgrad)

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
bench, data = get_benchmark("rwku-real"), lab.data / "rwku-real"
glue(start=f"`models/{REAL_BASE}`")

# %% [markdown]
# The start model is the original checkpoint ({glue:md}`start`), as in RWKU.
#
# ## What the model knows
#
# One row per candidate target: how many of its candidate probes the original model answered
# (forget levels 1-3 and its neighbour's levels 1-2), and whether it was chosen.

# %% tags=["hide-input"]
per_person = curation_by_person(pd.DataFrame(read_jsonl(data / "curation.json")))
chosen = per_person.xs("target", level="role").query("chosen")
corpus = bench.load(data, "train_original_passage")
glue(kept=int(chosen["kept"].sum()), candidates=int(chosen["candidates"].sum()),
     answered=chosen["kept"].sum() / chosen["candidates"].sum(),
     probes=", ".join(f"{split} {len(bench.load(data, split))}" for split in PROBE_SPLITS), passages=len(corpus),
     example=f"{corpus[0]['subject']}:\n\n> " + corpus[0]["text"].replace("\n", " "))
per_person.round(2)

# %% [markdown]
# `candidates` counts the probes written for a person, `kept` those the original model answered
# (they stay in the data), `answered` the share, and `chosen` marks the pairs the data keep: the
# targets the model knows best, at least a third of their candidate forget probes answered. A
# neighbour's probes are kept the same way, since a fact the model never knew cannot be damaged by
# unlearning and so says nothing about what a rule keeps.
#
# **Signal.** The chosen targets' forget probes: the original model answered {glue:text}`kept` of
# {glue:text}`candidates` candidates ({glue:text}`answered:.0%`; RWKU needs at least half), and the
# kept ones are the forget set. Probes kept: {glue:md}`probes`.
#
# The forget corpus: {glue:text}`passages` passages the model wrote about its targets, e.g. about
# {glue:md}`example`

# %% tags=["hide-input"]
config = EvalConfig(max_new_tokens=answer_tokens)
left_out = [f"the objective {o}" for o in SAGO_OBJECTIVES if o not in objectives] + [
    f"the rule {r}" for r in SAGO_RULES if r not in rules]
glue(answer_tokens=answer_tokens, default_tokens=EvalConfig.max_new_tokens, left_out=f"Left out of this profile's grid to keep the book within its time budget: {', '.join(left_out)}. Every "
     "run that is in it runs its recipe's full budget." if left_out else "The grid is the paper's whole grid.")
start = lab.evaluate("rwku-real", lab.model(REAL_BASE), config=config)
# no geometry on the real model: comparing four rules on every step's gradients costs seconds a step
results, budget = rwku_grid(lab, "rwku-real", REAL_BASE, objectives, rules, record_geometry=False, evaluate_config=config)
if with_masc:  # beyond both papers: MASC with its recipe for a text corpus (MUSE News)
    masc = lab.recipe_run("masc/muse-news", "MASC", REAL_BASE, benchmark="rwku-real")
    masc_metrics = lab.evaluate("rwku-real", masc["dir"], config=config)

# %% [markdown]
# Every answer is at most {glue:text}`answer_tokens` greedy tokens (the evaluation's default:
# {glue:text}`default_tokens`). {glue:md}`left_out`
#
# ## The SAGO grid and MASC
#
# Every objective (GA, NPO and SimNPO, each with GD on the retain corpus) runs forget-only and under
# the four combination rules from the original checkpoint, **each with the SAGO paper's own RWKU
# settings** (the recipe `sago/rwku`: its rate, weights and two epochs per objective and rule, the
# corpus packed into blocks); the table gives each value's official file. A real pretrained model
# runs the recipe's own rates; the blocks are shorter than the paper's 512 tokens (the scaling rule
# below says why). MASC, beside the grid and beyond both papers, stops by itself with its recipe for
# a text corpus (`masc/muse-news`).

# %% tags=["hide-input"]
show_recipe(lab, "sago/rwku", sorted(set(results.recipe.str.split(" ").str[0])), REAL_BASE, benchmark="rwku-real")
if with_masc:
    show_recipe(lab, "masc/muse-news", ["MASC"], REAL_BASE, benchmark="rwku-real")

# %% [markdown]
# Each panel below is one objective. The dashed lines cross at the original model, where every run
# starts: a run to the left of the crossing forgot about the targets, a run below it lost knowledge
# of the neighbours. The claim is that SAGO's star sits above PCGrad's triangles at about the same
# horizontal position; MASC's diamond, where this profile runs it, shows where a self-stopping run
# lands on the same axes.

# %% mystnb={"figure": {"caption": "RWKU on the real model: forget metric (mean ROUGE-L recall over forget levels 1-3, lower is better) against neighbour ROUGE-L recall (mean of levels 1-2, higher is better); markers as in the SAGO paper's Fig. 4 (circle forget-only, square +GD, triangles PCGrad global/module-wise, star SAGO), MASC as a diamond. The dashed lines mark the original model.", "name": "fig-rwku-real-pareto"}} tags=["hide-input"]
s = summarise(start)
plot_forget_neighbour_panels(results, s, objectives, {"MASC": tuple(summarise(masc_metrics).values())} if with_masc else {})
plt.show()

# %% [markdown]
# ## Every number
#
# The original model first, then every run of the grid (forget-only and each rule with the GD
# retain term), then MASC: the three forget levels, the two neighbour levels and the membership AUC
# of the forget passages, as in {doc}`12-rwku`.

# %% tags=["hide-input"]
rows = [{"objective": "Original", "variant": "-", **start}] + results.to_dict("records") + (
    [{"objective": "MASC", "variant": f"self-stopped, {masc['steps']} steps", **masc_metrics}] if with_masc else [])
rwku_table(rows)[0].round(3)

# %% [markdown]
# ## PCGrad and SAGO over seeds
#
# The first objective's PCGrad and SAGO runs again with other seeds (the order of the forget and retain
# blocks). For that objective the verdict below compares the two rules' probe scores averaged over
# the seeds, and widens the paired interval by the spread of each rule's summaries across the seeds
# (`intervals.with_seeds`); the other objectives ran one seed each and carry the probes' interval
# alone. Only these two rules are reseeded because the claim compares only them.

# %% tags=["hide-input"]
compared = [r for r in ("pcgrad", "sago") if r in rules]
reseeded = bool(seeds and compared)
over_seeds = rules_over_seeds(lab, "rwku-real", REAL_BASE, objectives[0], compared, seeds, results,
                              record_geometry=False, evaluate_config=config) if reseeded else None
over_seeds[["forget", "neighbour"]].round(3) if reseeded else Markdown(
    "This profile runs one seed: the intervals below are the probes' alone.")

# %% [markdown]
# (verdict-rwku-real)=
# ## Did the claim hold?
#
# The paper reports SAGO ahead of PCGrad by 3.4 to 13.3 points at similar forgetting.
#
# Per objective with +GD, PCGrad and SAGO runs, `verdicts.sago_keeps_more_over` reads SAGO minus
# PCGrad on the neighbour and forget summaries, each with its paired 95 % interval over the same
# probes: held when SAGO keeps more beyond the interval without forgetting less beyond it; did not
# hold when PCGrad is at least as good on both and better on one; cannot tell inside the interval or
# when the comparison is confounded (SAGO keeps more only while forgetting less). The objectives'
# verdicts are then combined; and when no run moved the forget summary down from the original model
# beyond its interval, there is no forgetting to compare at, and the page cannot tell.

# %% tags=["hide-input"]
best, drop, unmoved = forgetting_moved(start, results, "rwku-real")
probes = sum(len(bench.load(data, split)) for split in PROBE_SPLITS)
glue(lines="; ".join(sago_versus_pcgrad(results, objectives)) or "This profile's grid has no +GD, PCGrad and SAGO "
     "runs of one objective to compare", start_forget=s["forget"], start_neighbour=s["neighbour"],
     best=best, drop=drop.text(),
     signal="these comparisons carry signal" if not unmoved else "the grid hardly moved it under this budget, so the "
     "comparison says nothing yet (a larger learning rate or more epochs would)", n_probes=probes,
     budget="/".join(map(str, budget)), differences=differences_text(rwku_differences(results, objectives,
                                                                                    "rwku-real", over_seeds)),
     masc=f"MASC stopped by itself after {masc['steps']} steps at forget {summarise(masc_metrics)['forget']:.2f}, "
          f"neighbour {summarise(masc_metrics)['neighbour']:.2f}." if with_masc else " ")

# %% [markdown]
# **Did the claim hold on real knowledge?** {glue:md}`lines`. The original model recalls its targets
# (forget {glue:text}`start_forget:.2f`, neighbour {glue:text}`start_neighbour:.2f`) and the grid's
# best run moves the forget metric to {glue:text}`best:.2f` (original minus best {glue:md}`drop`):
# {glue:md}`signal`. SAGO minus PCGrad, with 95 % intervals over the {glue:text}`n_probes` probes
# (and the seeds where they were rerun): {glue:md}`differences`. The runs took {glue:md}`budget`
# steps. {glue:md}`masc`

# %% tags=["hide-input"]
Markdown(rwku_record("sago-rwku-real", results, objectives, profile, "rwku-real", over_seeds, no_signal=unmoved))

# %% tags=["remove-cell"]
lab.release()  # the real model's run weights: records, hashes and evaluations stay (a later step recomputes them)
