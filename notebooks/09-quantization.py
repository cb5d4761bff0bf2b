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
# # 4-bit robustness
#
# Zhang et al. {cite}`zhang2024quantization` showed that many unlearned models *get their knowledge back* once
# their weights are quantized to 4 bits: the unlearning update is small, and rounding every weight
# to a 16-level grid undoes much of it. **The claim** (MASC paper): MASC's forgetting survives 4-bit
# quantization.
#
# Every TOFU-mini model of {doc}`06-tofu` (largest forget split) is quantized here with the pure-torch
# quantizer of `unlearning.quantize`: blocks of 64 weights, each scaled by its absolute maximum and
# rounded to the nearest level of the code, every Linear layer except the output head. Two codes:
# **NF4** (QLoRA's NormalFloat {cite}`dettmers2023qlora`, the quantization-failure paper's setting) and **FP4** (bitsandbytes'
# default for `load_in_4bit`, which the MASC repository's MUSE evaluation loads).

# %% tags=["parameters"]
profile = "mini"
size = "s"
forget_split = "forget10"
methods = ["GradDiff", "NPO+KLR", "SimNPO+GD", "MASC", "GA", "NPO", "RMU"]  # as the TOFU chapter runs them
rmu_grid = {"steering": [1.0, 4.0, 16.0], "alpha": [100.0, 1200.0], "lr_multiple": [1.0, 10.0]}  # as in the TOFU chapter (same runs)
codes = ["nf4", "fp4"]
# the contrast (Zhang et al.): GradDiff with small steps, this share of its recipe's rate, forgets by a small
# weight change that 4-bit rounding can undo; 0 leaves it out
small_update_share = 0.1
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16
recipe_scale = "laboratory"  # the papers' recipes scaled to the model (unlearning.recipes), or "paper": as released

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("09-quantization", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
from IPython.display import Markdown

from experiments.calibration import tofu_calibration
from experiments.comparison import precision_table, quantization_check, quantized_results, show_recipes, small_update_run
from experiments.plotting import plot_quantization_dumbbell, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab, Protocol, eval_config, tofu_oracle, tofu_run, tofu_target, tune_rmu_on_tofu

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
config, target = eval_config("tofu", forget_split), tofu_target(size)
oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
# the controls: the target and the oracle show what 4-bit quantization does to a model nobody unlearned
folders = {"Target": lab.model(target), "Oracle": lab.model(tofu_oracle(forget_split, size))}
# every method as the TOFU chapter runs it (its paper's recipe; RMU with the pair that chapter chose
# for this target): the same runs, read back from the store; MASC's LoRA adapters are merged into its
# weights, which are what a 4-bit deployment quantizes
tuned = tune_rmu_on_tofu(lab, size, forget_split, Protocol(), rmu_grid) if "RMU" in methods else None
scales = {m: tofu_calibration(lab, m, target, size).scale for m in methods if m != "RMU"}  # as calibrated there
folders.update({m: tofu_run(lab, m, target, forget_split, tuned=tuned, scale=scales.get(m))["dir"] for m in methods})
if small_update_share:  # the contrast: GradDiff's recipe at a share of its rate
    folders["GradDiff, small steps"] = small_update_run(lab, target, size, forget_split, small_update_share)["dir"]
results = quantized_results(lab, "tofu", folders, codes, config, oracle)

# %% [markdown]
# The models are those of {doc}`06-tofu`, each method with its paper's recipe (RMU, beyond the paper,
# with the settings that chapter's tuning chose). Two controls show what 4-bit rounding does on its
# own: the target and the oracle, which nobody unlearned. One contrast shows what recovery looks
# like: GradDiff with small steps (a share of its recipe's rate, `small_update_share`), the kind of
# utility-preserving, small-weight-change unlearning that Zhang et al. found 4-bit quantization undoes.

# %% tags=["hide-input"]
show_recipes(lab, methods, target, {m: s.lr_factor for m, s in scales.items()}, forget_split=forget_split)

# %% [markdown]
# ## Full precision against 4 bits
#
# Each row of the figure is one model: the filled circle is its forget-set score in full precision,
# the square and the triangle the same model after NF4 and FP4. Knowledge coming back shows as a
# marker to the right of its circle; the two controls show how far rounding alone moves a model
# nobody unlearned, and the dotted line is the oracle's level, where a forgotten fact should stay.

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L (left) and answer probability (right) of every model in full precision (filled circle) and after 4-bit quantization (NF4 square, FP4 triangle). A move to the right after quantization is knowledge coming back.", "name": "fig-quant-dumbbell"}} tags=["hide-input"]
names = list(folders)
plot_quantization_dumbbell(results, names, oracle)
plt.show()

# %% [markdown]
# The same numbers with forget quality and model utility beside them, a column per precision: model
# utility after rounding shows what 4 bits cost a model on what it should keep, which is the price a
# deployment pays whether or not the forgetting survives.

# %% tags=["hide-input"]
precision_table(results, names).round(3)


# %% [markdown]
# (verdict-quantization)=
# ## Did the claim hold?
#
# For every unlearned model and code, `verdicts.survives_quantization` reads three differences, each
# with its paired 95 % interval over the same forget items (`experiments.intervals`): what unlearning
# removed in full precision (target minus model); the model's rise under the code minus the larger
# *rise* of the two controls under the same code (signed: a control that falls excuses nothing); and
# what is still forgotten after the code (quantized target minus quantized model). A resolved rise is
# knowledge coming back (did not hold); a model whose removal is not resolved has nothing to recover,
# and the check cannot tell. Model utility after the code is shown beside each reason. MASC's verdict
# combines its two codes (`verdicts.combine`).

# %% tags=["hide-input"]
check = quantization_check(results, codes)
glue(target_moves=check.moves("Target"), oracle_moves=check.moves("Oracle"), lines="; ".join(check.lines()))

# %% [markdown]
# **Did the claim hold in miniature?** The controls first: quantization alone moves the target's
# forget ROUGE-L by {glue:md}`target_moves` and the oracle's by {glue:md}`oracle_moves`; only a
# rise of a control is subtracted from a method's rise. A method recovers when what is left rises
# beyond its interval; the share is that rise over what unlearning removed, and a method whose
# removal is not resolved cannot pass or fail. {glue:md}`lines`. In these tiny models every Linear layer is small, so the
# 64-weight blocks see fewer outliers than in a 7B model; the effect size is not expected to
# transfer, its direction is what this chapter tests.

# %% tags=["hide-input"]
Markdown(check.record(profile))
