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
#   `unlearning.world.real_people`, each as a fill-in-the-blank statement (level 1), a question
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
# The data are built once by `unlearning rwku-real` and committed (`data/<profile>/rwku-real`),
# like RWKU's generated corpus. Probes use RWKU's official prompts inside the chat template, as
# the SAGO code renders them. **The claim under test** is the SAGO paper's Fig. 4 and RWKU
# column: SAGO keeps the most neighbour knowledge (+3.4 to +13.3 ROUGE-L over PCGrad) at similar
# forgetting; MASC runs beside the grid.

# %% tags=["parameters"]
profile = "mini"
objectives = ["GradDiff", "NPO+GD", "SimNPO+GD"]
rules = ["sum", "pcgrad_global", "pcgrad", "sago"]  # +GD, global PCGrad, module-wise PCGrad, SAGO
with_masc = True
# PCGrad and SAGO rerun with these seeds beside seed 0 on the first objective: the range of their results is the
# resolution of "SAGO keeps more" beside one probe
seeds = [1, 2]
answer_tokens = 32  # greedy tokens of every generated answer (EvalConfig.max_new_tokens); fewer: the smoke profile
device = "auto"
dtype = "float32"
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("15-rwku-real", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.benchmarks import get_benchmark
from unlearning.benchmarks.common import EvalConfig
from unlearning.benchmarks.rwku import TABLE_COLUMNS, summarise
from unlearning.claims import record
from unlearning.data import read_jsonl
from unlearning.plotting import plot_forget_neighbour_panels, use_book_style
from unlearning import recipes
from unlearning import verdicts
from unlearning.protocol import (REAL_BASE, SAGO_OBJECTIVES, SAGO_RULES, Lab, rwku_resolutions, sago_gains, sago_grid,
                                 sago_versus_pcgrad)

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
bench, data = get_benchmark("rwku-real"), lab.data / "rwku-real"
display(Markdown(f"The start model is the original checkpoint (`models/{REAL_BASE}`), as in RWKU."))

# %% [markdown]
# ## What the model knows
#
# One row per candidate target: how many of its candidate probes the original model answered
# (forget levels 1-3 and its neighbour's levels 1-2), and whether it was chosen.

# %% tags=["hide-input"]
curation = pd.DataFrame(read_jsonl(data / "curation.json"))
per_person = curation.groupby(["subject", "role"], sort=False).agg(candidates=("candidates", "sum"), kept=("kept", "sum"),
                                                                   chosen=("chosen", "first"))
per_person["answered"] = per_person["kept"] / per_person["candidates"]
chosen_targets = per_person.xs("target", level="role").query("chosen")
display(Markdown(
    f"**Signal.** The chosen targets' forget probes: the original model answered "
    f"{chosen_targets['kept'].sum()} of {chosen_targets['candidates'].sum()} candidates "
    f"({chosen_targets['kept'].sum() / chosen_targets['candidates'].sum():.0%}; RWKU needs at least half), "
    f"and the kept ones are the forget set. Probes kept: " + ", ".join(
        f"{split} {len(bench.load(data, split))}" for split in
        ("forget_level1", "forget_level2", "forget_level3", "neighbor_level1", "neighbor_level2")) + "."))
per_person.round(2)

# %% tags=["hide-input"]
corpus = bench.load(data, "train_original_passage")
display(Markdown(f"The forget corpus: {len(corpus)} passages the model wrote about its targets, e.g. about "
                 f"{corpus[0]['subject']}:\n\n> " + corpus[0]["text"].replace("\n", " ")))

# %% tags=["hide-input"]
config = EvalConfig(max_new_tokens=answer_tokens)
if answer_tokens != EvalConfig.max_new_tokens:
    display(Markdown(f"This profile generates {answer_tokens} tokens of every answer, not {EvalConfig.max_new_tokens}."))
left_out = [f"the objective {o}" for o in SAGO_OBJECTIVES if o not in objectives] + [
    f"the rule {r}" for r in SAGO_RULES if r not in rules]
if left_out:
    display(Markdown(f"Left out of this profile's grid to keep the book within its time budget: {', '.join(left_out)}. "
                     "Every run that is in it runs its recipe's full budget."))
start = lab.evaluate("rwku-real", lab.model(REAL_BASE), config=config)
# no geometry on the real model: comparing four rules on every step's gradients costs seconds a step
grid = sago_grid(lab, "rwku-real", REAL_BASE, objectives, rules, recipe="sago/rwku", record_geometry=False,
                 evaluate_config=config)
budget = sorted({row["run"]["steps"] for row in grid})  # the budgets, in optimizer steps
results = pd.DataFrame(grid).drop(columns="run")
results = results.join(pd.DataFrame([summarise(r) for _, r in results.iterrows()], index=results.index))
extra = {}
if with_masc:  # beyond both papers: MASC with its recipe for a text corpus (MUSE News)
    masc = lab.recipe_run("masc/muse-news", "MASC", REAL_BASE, benchmark="rwku-real")
    masc_metrics = lab.evaluate("rwku-real", masc["dir"], config=config)
    extra["MASC"] = tuple(summarise(masc_metrics).values())

# %% [markdown]
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
recipes.show(lab, "sago/rwku", sorted(set(results.recipe.str.split(" ").str[0])), REAL_BASE, benchmark="rwku-real")
if with_masc:
    recipes.show(lab, "masc/muse-news", ["MASC"], REAL_BASE, benchmark="rwku-real")

# %% mystnb={"figure": {"caption": "RWKU on the real model: forget metric (mean ROUGE-L recall over forget levels 1-3, lower is better) against neighbour ROUGE-L recall (mean of levels 1-2, higher is better); markers as in the SAGO paper's Fig. 4 (circle forget-only, square +GD, triangles PCGrad global/module-wise, star SAGO), MASC as a diamond. The dashed lines mark the original model.", "name": "fig-rwku-real-pareto"}} tags=["hide-input"]
s = summarise(start)
plot_forget_neighbour_panels(results, s, objectives, extra)
plt.show()

# %% tags=["hide-input"]
rows = [{"objective": "Original", "variant": "-", **start}] + results.to_dict("records")
if with_masc:
    rows.append({"objective": "MASC", "variant": f"self-stopped, {masc['steps']} steps", **masc_metrics})
table = pd.DataFrame(rows).set_index(["objective", "variant"])[list(TABLE_COLUMNS)].rename(columns=TABLE_COLUMNS)
table.round(3)

# %% [markdown]
# ## PCGrad and SAGO over seeds
#
# The first objective's PCGrad and SAGO runs again with other seeds (the order of the forget and retain
# blocks). The larger range of either rule's forget and neighbour summaries across the seeds is the
# smallest gap the verdict below can resolve, beside one probe; the other objectives ran one seed each
# and are judged at the same resolution.

# %% tags=["hide-input"]
compared = [r for r in ("pcgrad", "sago") if r in rules]
seed_rows = [{"seed": 0, **row} for row in results[(results.objective == objectives[0])
                                                   & results.rule.isin(compared)].to_dict("records")]
for seed in seeds:
    for row in sago_grid(lab, "rwku-real", REAL_BASE, objectives[:1], compared, recipe="sago/rwku",
                         record_geometry=False, evaluate_config=config, forget_only=False, seed=seed):
        seed_rows.append({"seed": seed, **row, **summarise(row)})
over_seeds = pd.DataFrame(seed_rows).set_index(["rule", "seed"])[["forget", "neighbour"]]
if seeds and compared:
    display(over_seeds.round(3))
else:
    display(Markdown("This profile runs one seed: the resolution below is one probe."))

# %% [markdown]
# (verdict-rwku-real)=
# ## Did the claim hold?

# %% tags=["hide-input"]
lines = sago_versus_pcgrad(results, objectives)
sizes = {split: len(bench.load(data, split)) for split in ("forget_level1", "forget_level2", "forget_level3",
                                                           "neighbor_level1", "neighbor_level2")}
step = rwku_resolutions(lab, "rwku-real")  # one probe's move of the forget and neighbour summaries
if seeds and compared:  # the larger of one probe and either rule's range over the seeds
    ranges = [verdicts.seed_resolution(step, part.to_dict("records")) for _, part in over_seeds.groupby(level="rule")]
    judged_at = {key: max(r[key] for r in ranges) for key in step}
    judged_as = f"the larger of one probe and the range over {len(seeds) + 1} seeds"
else:
    judged_at, judged_as = step, "one probe"
unmoved = verdicts.unmoved_forgetting(s["forget"], min(results["forget"]), step["forget"])
display(Markdown(
    "**Did the claim hold on real knowledge?** " + ("; ".join(lines) or "This profile's grid has no +GD, PCGrad "
                                                    "and SAGO runs of one objective to compare") + ". The paper reports SAGO ahead of PCGrad by "
    "3.4 to 13.3 points at similar forgetting; a gain bought with weaker forgetting (a larger forget number) does "
    "not count as one. " + (
        f"The original model recalls its targets (forget {s['forget']:.2f}, neighbour {s['neighbour']:.2f}) and "
        f"the grid moves the forget metric down to {min(results['forget']):.2f}, so these comparisons carry signal."
        f" One probe more or less moves the forget summary by about {step['forget']:.2f} and the neighbour "
        f"summary by about {step['neighbour']:.2f} ({sum(sizes.values())} probes in all), so a difference of a few "
        f"hundredths is one or two probes; the runs took {'/'.join(map(str, budget))} steps, and gaps are judged at "
        f"{judged_as} (forget {judged_at['forget']:.3f}, neighbour {judged_at['neighbour']:.3f})."
        if not unmoved else
        f"The grid hardly moved the forget metric (original {s['forget']:.2f}, best {min(results['forget']):.2f}) "
        "under this budget: the comparison says nothing yet; a larger learning rate or more epochs would.") + (
        f" MASC stopped by itself after {masc['steps']} steps at forget {extra['MASC'][0]:.2f}, neighbour "
        f"{extra['MASC'][1]:.2f}." if with_masc else "")))
gains = sago_gains(results, objectives)
display(Markdown(record(
    "sago-rwku-real", "; ".join(f"{g['objective']} {g['points']:+.1f} points (forget {g['forget_pcgrad']:.2f} vs "
                                f"{g['forget_sago']:.2f})" for g in gains) or "-",
    verdicts.sago_keeps_more_over(gains, judged_at["forget"], judged_at["neighbour"], judged_as, no_signal=unmoved),
    profile)))

# %% tags=["remove-cell"]
lab.release()  # the real model's run weights: records, hashes and evaluations stay (a later step recomputes them)
