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
from unlearning.parameters import check_parameters

check_parameters("09-quantization", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
from dataclasses import replace

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.claims import record
from unlearning.plotting import plot_quantization_dumbbell, use_book_style
from unlearning import recipes
from unlearning import verdicts
from unlearning.recipes import load as load_recipe
from unlearning.protocol import Lab, Protocol, eval_config, tofu_oracle, tofu_recipe, tofu_run, tune_rmu_on_tofu

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
protocol = Protocol()
config = eval_config("tofu", forget_split)
target = f"tofu/target-{size}"
oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
# the controls: the target and the oracle show what 4-bit quantization does to a model nobody unlearned
folders = {"Target": lab.model(target), "Oracle": lab.model(tofu_oracle(forget_split, size))}
# every method as the TOFU chapter runs it (its paper's recipe; RMU with the pair that chapter chose
# for this target): the same runs, read back from the store; MASC's LoRA adapters are merged into its
# weights, which are what a 4-bit deployment quantizes
if "RMU" in methods:
    tuned = tune_rmu_on_tofu(lab, size, forget_split, protocol, rmu_grid)
for m in methods:
    folders[m] = tofu_run(lab, m, target, forget_split, tuned=tuned if "RMU" in methods else None)["dir"]
SMALL = "GradDiff, small steps"
if small_update_share:
    scale = lab.recipe_scale(load_recipe(tofu_recipe("GradDiff")), target, forget_split, "tofu")
    small = replace(scale, lr_factor=scale.lr_factor * small_update_share,
                    why=f"{scale.why}, then x {small_update_share:g}: the small-update contrast")
    folders[SMALL] = lab.recipe_run(tofu_recipe("GradDiff"), "GradDiff", target, forget_split=forget_split,
                                    scale=small)["dir"]
rows = []
for name, folder in folders.items():
    for precision in ["fp32", *codes]:
        model_dir = folder if precision == "fp32" else lab.quantized(folder, precision)
        metrics = lab.evaluate("tofu", model_dir, config=config, oracle=oracle)
        rows.append({"method": name, "precision": precision, **metrics})
results = pd.DataFrame(rows)

# %% [markdown]
# The models are those of {doc}`06-tofu`, each method with its paper's recipe (RMU, beyond the paper,
# with the settings that chapter's tuning chose). Two controls show what 4-bit rounding does on its
# own: the target and the oracle, which nobody unlearned. One contrast shows what recovery looks
# like: GradDiff with small steps (a share of its recipe's rate, `small_update_share`), the kind of
# utility-preserving, small-weight-change unlearning that Zhang et al. found 4-bit quantization undoes.

# %% tags=["hide-input"]
for name in dict.fromkeys(tofu_recipe(m) for m in methods if m != "RMU"):
    recipes.show(lab, name, [m for m in methods if m != "RMU" and tofu_recipe(m) == name], target,
                 forget_split=forget_split)

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L (left) and answer probability (right) of every model in full precision (filled circle) and after 4-bit quantization (NF4 square, FP4 triangle). A move to the right after quantization is knowledge coming back.", "name": "fig-quant-dumbbell"}} tags=["hide-input"]
names = list(folders)
plot_quantization_dumbbell(results, names, oracle)
plt.show()

# %% tags=["hide-input"]
wide = results.pivot_table(index="method", columns="precision",
                           values=["forget_Q_A_ROUGE", "forget_Q_A_Prob", "forget_quality", "model_utility"])
wide.loc[names].round(3)


# %% [markdown]
# (verdict-quantization)=
# ## Did the claim hold?

# %% tags=["hide-input"]
def change(name: str, code: str, key: str = "forget_Q_A_ROUGE") -> float:
    """How much 4-bit `code` moves `name`'s forget ROUGE-L (positive: knowledge coming back)."""
    part = results[results.method == name].set_index("precision")[key]
    return float(part[code] - part["fp32"])


def fp32(name: str, key: str = "forget_Q_A_ROUGE") -> float:
    return float(results[(results.method == name) & (results.precision == "fp32")][key].iloc[0])


resolution = verdicts.item_resolution(lab.forget_size("tofu", forget_split))  # one forget item
control = {c: max(abs(change("Target", c)), abs(change("Oracle", c))) for c in codes}  # what 4-bit does on its own
unlearned = [m for m in folders if m not in ("Target", "Oracle")]  # the methods and the small-update contrast
cases = {m: {c: verdicts.survives_quantization(fp32(m), fp32(m) + change(m, c), fp32("Target"), resolution, control[c])
             for c in codes} for m in unlearned}
said = {"held": "its forgetting survives", "did not hold": "knowledge comes back", "cannot tell here": "cannot tell"}
lines = [f"{m}: " + ", ".join(f"{c.upper()} {change(m, c):+.2f} ({said[v.verdict]}: {v.reason})" for c, v in cases[m].items())
         for m in unlearned]
display(Markdown(
    "**Did the claim hold in miniature?** The controls first: quantization alone moves the target's forget ROUGE-L by "
    + ", ".join(f"{c.upper()} {change('Target', c):+.2f}" for c in codes) + " and the oracle's by "
    + ", ".join(f"{c.upper()} {change('Oracle', c):+.2f}" for c in codes) + f"; with one forget item ({resolution:.3f}) "
    "that is the smallest rise the check can see. A method recovers when its forget ROUGE-L rises by more than that; "
    "the share is (quantized - unlearned) / (target - unlearned), and a method that removed no more than the noise "
    "cannot pass or fail. " + "; ".join(lines) + ". In these tiny models every Linear layer is small, so the "
    "64-weight blocks see fewer outliers than in a 7B model; the effect size is not expected to transfer, its "
    "direction is what this chapter tests."))
display(Markdown(record("masc-quantization", "MASC's forget ROUGE-L after 4-bit: " + ", ".join(
    f"{c.upper()} {change('MASC', c):+.2f}" for c in codes) + " (controls " + ", ".join(
    f"{c.upper()} ±{control[c]:.2f}" for c in codes) + ")",
    verdicts.combine(list(cases["MASC"].values()), [c.upper() for c in codes]), profile)))
