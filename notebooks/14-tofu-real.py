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
# # TOFU on a real pretrained model
#
# The laboratory's tiny models memorise their authors verbatim but hardly know anything, so in
# {doc}`06-tofu` truth ratio, forget quality and model utility sat near their floors. Here the same
# protocol runs on a real pretrained model, SmolLM2-135M-Instruct ({doc}`13-paper-scale` shows where it comes
# from): it already answers real questions, it learns new facts in a way that carries over to
# paraphrased questions, and it is prompted through its own chat template.
#
# **The data** (`data/<profile>/tofu-real`, in TOFU's schema): fictitious authors of the laboratory
# world, fewer than in TOFU-mini because fine-tuning a 135M-parameter model costs minutes per hundred
# answers on a CPU, and, for model utility, real authors and world facts written out in
# `laboratory.world.real_facts`, kept only where the model answered them correctly *before* any
# fine-tuning (TOFU's requirement for its real-author and world-fact sets).
#
# **The models** (`make models`): the *target* is the real model fully fine-tuned on every author,
# the *oracle* the same recipe on the retain authors only (TOFU's retain-only model), both cached
# like the laboratory's models. **The claim under test** is the MASC paper's Figure 1: MASC reaches a
# competitive forget/retain trade-off at a fraction of the baselines' run time.

# %% tags=["parameters"]
profile = "mini"
size = "135m"
forget_split = "forget10"
# the MASC paper's three baselines and MASC; GA, NPO, SimNPO, IdkNLL (the baseline trainer) and RMU
# (tuned below) may be added, in rows marked beyond the paper: left out here to keep the book within
# its time budget (each costs a 10-epoch run of the real model and its evaluation)
methods = ["GradDiff", "NPO+KLR", "SimNPO+GD", "MASC"]
max_steps = 0          # 0: each recipe's own budget; a smaller number caps every run (the smoke profile)
# the methods of `seeded` rerun with these seeds beside seed 0 (data order, MASC's LoRA start): intervals widen by the spread
seeds = [1, 2]
seeded = ["GradDiff", "NPO+KLR", "SimNPO+GD", "MASC"]  # the methods that rerun with `seeds` (each rerun: a run and an evaluation)
# RMU (beyond the paper) runs under the book's shared protocol, with its grid (each point a run and an evaluation)
lr = 1e-5
batch_size = 4
epochs = 5.0
rmu_grid = {"steering": [4.0, 16.0], "alpha": [100.0], "lr_multiple": [100.0]}
codes = ["nf4", "fp4"]   # 4-bit formats of the quantization check
quantized_methods = ["NPO+KLR", "MASC"]  # models of the 4-bit check besides the target (each costs evaluations)
answer_tokens = 32     # greedy tokens of every generated answer (EvalConfig.max_new_tokens); fewer: the smoke profile
curation_checked = 0   # candidates of each utility set asked again on this machine (0: every one)
with_base = True       # evaluate the checkpoint before fine-tuning too (what it knew); the smoke profile skips it
device = "auto"
dtype = "float32"
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("14-tofu-real", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
from dataclasses import replace

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from experiments.comparison import every_number, precision_table, quantization_check, quantized_results, show_recipes
from experiments.plotting import plot_figure1, plot_quality_against_utility, plot_quantization_dumbbell, use_book_style
from experiments.presentation import glue
from experiments.lab import PAPER_BASELINES, REAL_BASE, Lab, Protocol, eval_config
from experiments.real_comparison import (REAL_COLUMNS, SEED_COLUMNS, curation_check, real_comparison, real_signals,
                                        real_verdicts)

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
protocol = Protocol(lr=lr, batch_size=batch_size, epochs=epochs)  # RMU's, beyond the paper
config = eval_config("tofu", forget_split, max_new_tokens=answer_tokens)
glue(protocol=protocol.describe(), max_steps=max_steps, answer_tokens=answer_tokens, curation_checked=curation_checked,
     base="evaluates" if with_base else "does not evaluate")

# %% [markdown]
# Every method runs its paper's own recipe (below): MASC the released TOFU run, the baselines
# OpenUnlearning's trainer as the MASC paper ran them; RMU, beyond the paper, the book's protocol:
# {glue:md}`protocol`.
#
# **This profile** caps every run at {glue:text}`max_steps` steps (0: each recipe's own budget),
# generates {glue:text}`answer_tokens` greedy tokens of every answer (the evaluation's default is 32),
# asks {glue:text}`curation_checked` candidates of each utility set again below (0: every one) and
# {glue:md}`base` the checkpoint before fine-tuning (`with_base`).
#
# ## Which real facts the model knows
#
# The candidates are asked through the chat template; an answer counts when the greedy reply contains
# every word of the true answer. The kept list is committed with the data; the check below recomputes
# it on this machine with the model read from `models/real`.

# %% tags=["hide-input"]
curation_check(lab, lab.model(REAL_BASE), curation_checked)

# %% tags=["hide-input"]
real = real_comparison(lab, size, forget_split, methods, config, protocol=protocol, rmu_grid=rmu_grid, seeds=seeds,
                       seeded=seeded, with_base=with_base, max_steps=max_steps, base_dir=lab.model(REAL_BASE))
results = real.results
seed_counts = {m: len(real.seeds_of(m)) for m in methods if m != "RMU"}
glue(seed_counts=", ".join(f"{m} {n}" for m, n in seed_counts.items()) or "no method")

# %% [markdown]
# ## The target and the oracle
#
# Both are full fine-tunes of the checkpoint with the recipe of the profile's `learn.yaml` (the
# `real:` section), trained by `make models` and cached like every laboratory model. Their quality
# gates are the laboratory's: greedy ROUGE-L and answer probability on the forget split, and choice
# accuracy among the true and five perturbed values with the question paraphrased (the answer in the
# trained wording) and fully paraphrased (chance 1/6).

# %% tags=["hide-input"]
real.learned()

# %% [markdown]
# ## The recipes of this page
#
# Each method as its paper ran it (`paper lr`, `paper batch`) and as this page runs it, with the
# official file of the rate and the method; every other value's source is in the recipe file
# (`src/unlearning/recipes/`). A real pretrained model runs the recipes' own rates.

# %% tags=["hide-input"]
show_recipes(lab, methods, real.target, benchmark="tofu-real", forget_split=forget_split)

# %% [markdown]
# ## Is there signal?
#
# Three checks decide whether this chapter can say anything the tiny models could not: the KS test of
# forget quality must tell the target from the oracle, the target must know its facts beyond the trained
# wording (held-out paraphrased questions, above the chance of picking the true value among six), and
# model utility must move when a method breaks the model (the most damaged model among the methods
# and RMU's grid, whose rejected runs count too). Each is judged with its 95 % interval: a binomial
# interval over the forget questions for the accuracies, the paired interval over the same items for
# model utility, and the level of every interval (5 %) for the KS test.

# %% tags=["hide-input"]
signals = real_signals(real, methods, lab.forget_size("tofu-real", forget_split))
signals.style.format({"value": "{:.3g}"}, na_rep="")

# %% [markdown]
# ## Figure 1 on a real model
#
# Left: wall-clock seconds of each unlearning run on this machine (training plus, for MASC, its
# probes), with one torch thread while `make book` executes one other chapter beside this one. Right: the MASC paper's four axes, each oriented so that larger is better.

# %% mystnb={"figure": {"caption": "TOFU on SmolLM2-135M-Instruct. Left: wall-clock time of each method's unlearning run, measured when this page was built. Right: radar of 1-ROUGE-L, 1-Prob (forget set), truth ratio and model utility; the target (black) and the retain-only oracle (grey) frame what is possible.", "name": "fig-tofu-real-figure1"}} tags=["hide-input"]
plot_figure1(results, methods, f"run time, {forget_split}", seconds_digits=0)
plt.show()

# %% mystnb={"figure": {"caption": "Forget quality (log scale) against model utility on the real model; the oracle sits at forget quality 1, the target far below it.", "name": "fig-tofu-real-fq-mu"}} tags=["hide-input"]
plot_quality_against_utility({"": results}, size=(5.5, 4))
plt.show()

# %% [markdown]
# ## Every number
#
# RMU, where this profile runs it, ran with the steering coefficient and retain weight chosen on this
# model by the rule printed below the table.

# %% tags=["hide-input"]
every_number(results, {}, REAL_COLUMNS)[0]

# %% tags=["hide-input"]
if real.tuned is not None:
    display(Markdown("**RMU.** " + real.tuned.describe()), real.tuned.table())

# %% [markdown]
# ## After 4-bit quantization
#
# The check of {doc}`09-quantization` on this model: the target and the unlearned models of
# `quantized_methods` (NPO+KLR, the MASC paper's strongest baseline, and MASC; each model costs two
# evaluations) are rounded to 4 bits (NF4 and FP4, every linear weight) and their forget set asked again; knowledge that was only hidden by small weight
# changes comes back (Zhang et al., 2024). The forget-set metrics alone are recomputed
# (`EvalConfig(forget_only=True)`). Note that the checkpoint itself reached us as a 4-bit GGUF file
# and was dequantized ({doc}`13-paper-scale`): the base weights already lie on a 4-bit grid, the fine-tuned and
# unlearned weights do not.

# %% tags=["hide-input"]
folders = {"Target": lab.model(real.target),
           **{m: real.runs[m]["dir"] for m in quantized_methods if m in real.runs}}
quantized = quantized_results(lab, "tofu-real", folders, codes, replace(config, forget_only=True),
                              full={name: results.loc[name] for name in folders})  # full precision: evaluated above
check = quantization_check(quantized, codes, controls=("Target",), benchmark="tofu-real")
glue(quantized="; ".join(check.lines()) or "This profile quantizes the target alone (no unlearned model)",
     target_moves=", ".join(f"{c.upper()} {check.changes['Target'][c]:+.2f}" for c in codes))

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L (left) and answer probability (right) of the real model's target and unlearned models in full precision (circle) and after 4-bit quantization (NF4 square, FP4 triangle); the dotted line is the oracle. A move to the right is knowledge coming back.", "name": "fig-tofu-real-quant"}} tags=["hide-input"]
plot_quantization_dumbbell(quantized, list(folders), results.loc["Oracle"])
plt.show()

# %% [markdown]
# Rounding alone moves the target's forget ROUGE-L by {glue:md}`target_moves`; only a rise of the
# target is subtracted from a model's rise, and what is left is judged with its paired 95 % interval
# over the same forget items. **4-bit check.** {glue:md}`quantized`.

# %% tags=["hide-input"]
precision_table(quantized, folders, ("forget_Q_A_ROUGE", "forget_Q_A_Prob")).round(3)

# %% [markdown]
# ## Every method over seeds
#
# The methods of `seeded` ran again with other seeds (their data order, and MASC's LoRA initialisation);
# seeds per method here: {glue:text}`seed_counts` (a profile that reruns MASC alone does so because a
# baseline's 10-epoch run of the real model costs minutes a seed). The comparisons below read each method's items averaged
# over its seeds and widen each paired interval by the spread of both sides' axes over their seeds
# (`intervals.with_seeds`; a side that ran once borrows the other's spread). With one seed each (this
# profile's `seeds` empty) the intervals are the items' alone.

# %% tags=["hide-input"]
real.seeds[[c for c in SEED_COLUMNS if c in real.seeds]].rename(columns=REAL_COLUMNS).round(3)

# %% [markdown]
# (verdict-tofu-real)=
# ## Did the claims hold?

# %% tags=["hide-input"]
baselines = [m for m in methods if m in PAPER_BASELINES]  # the comparison the paper makes
judged = real_verdicts(real, baselines, signals, check)
glue(**judged.sentences(real, baselines, signals))
display(pd.DataFrame(judged.axes).T.round(3).rename_axis("final models"))
judged.differences_table()

# %% [markdown]
# **Did the claims hold on a real model?** {glue:md}`signal` *Speed*: {glue:md}`speed`. *Trade-off*
# on the paper's four axes (the tables above: the final models, and MASC minus each baseline with its
# 95 % interval): {glue:md}`tradeoff`, with intervals from {glue:md}`judged_as`. Forget ROUGE-L: {glue:md}`rouge`. *4-bit*: {glue:md}`four_bit`. Seeds
# per method: {glue:text}`seed_counts`.

# %% tags=["hide-input"]
Markdown(judged.records(real, check, profile))

# %% tags=["remove-cell"]
lab.release()  # the real model's run weights and 4-bit copies: records, hashes and evaluations stay
