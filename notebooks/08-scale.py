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
from unlearning.parameters import check_parameters

check_parameters("08-scale", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import json

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.claims import record
from unlearning.models import SIZES
from unlearning.plotting import DIVERGED, method_color, use_book_style
from unlearning import recipes
from unlearning import verdicts
from unlearning.protocol import Lab, eval_config, tofu_oracle

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
recipes.show(lab, "masc/scale", methods, f"tofu/target-{sizes[0]}", forget_split=forget_split)
left_out = [size for size in SIZES if size not in sizes]
if left_out:
    display(Markdown(f"This profile studies the sizes {', '.join(sizes)}; {', '.join(left_out)} left out to keep the "
                     "book within its time budget (add them to `learn.yaml` and to this chapter's `sizes`)."))
config = eval_config("tofu", forget_split)
rows = []
for size in sizes:
    target = f"tofu/target-{size}"
    parameters = json.loads((lab.model(target) / "learning.json").read_text())["parameters"]
    oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
    rows.append({"size": size, "parameters": parameters, "method": "Oracle", "steps": 0, "seconds": 0.0, **oracle,
                 "forget_quality": 1.0})
    rows.append({"size": size, "parameters": parameters, "method": "Target", "steps": 0, "seconds": 0.0,
                 **lab.evaluate("tofu", lab.model(target), config=config, oracle=oracle)})
    for method in methods:
        run = lab.recipe_run("masc/scale", method, target, forget_split=forget_split)
        rows.append({"size": size, "parameters": parameters, "method": method, "steps": run["steps"],
                     "seconds": run["train_seconds"] + run["probe_seconds"],
                     **lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)})
results = pd.DataFrame(rows)

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L, forget-set answer probability and model utility against model size (log scale) for the target, the retain90 oracle of each size, MASC and SimNPO.", "name": "fig-scale-metrics"}} tags=["hide-input"]
panels = [("forget_Q_A_ROUGE", "forget ROUGE-L"), ("forget_Q_A_Prob", "forget Prob"), ("model_utility", "model utility")]
fig, axs = plt.subplots(1, len(panels), figsize=(12, 3.6))
for ax, (key, title) in zip(axs, panels):
    for name, part in results.groupby("method", sort=False):
        style = "--" if name in ("Target", "Oracle") else "-"
        ax.plot(part.parameters, part[key], style, marker="o", color=method_color(name), label=name)
    ax.set_xscale("log")
    ax.set_xlabel("parameters")
    ax.set_title(title)
    ax.set_ylim(0, 1.02)
axs[-1].legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% tags=["hide-input"]
columns = {"parameters": "parameters", "steps": "steps", "seconds": "seconds", "forget_Q_A_ROUGE": "forget ROUGE-L",
           "forget_Q_A_Prob": "forget Prob", "forget_truth_ratio": "truth ratio", "forget_quality": "forget quality",
           "model_utility": "model utility"}
results.set_index(["method", "size"])[list(columns)].rename(columns=columns).style.format(precision=3, na_rep=DIVERGED).format(
    "{:.2e}", na_rep=DIVERGED, subset=["forget quality"])


# %% [markdown]
# (verdict-scale)=
# ## Did the claim hold?

# %% tags=["hide-input"]
resolution = verdicts.item_resolution(lab.forget_size("tofu", forget_split))  # one forget item
oracle_rouge = list(results[results.method == "Oracle"]["forget_Q_A_ROUGE"])
lines = []
for method in methods:
    part = results[results.method == method]
    lines.append(f"{method}: forget ROUGE-L {' / '.join(f'{v:.2f}' for v in part.forget_Q_A_ROUGE)} "
                 f"(spread {verdicts.value_range(part.forget_Q_A_ROUGE):.2f} across sizes), model utility "
                 f"{' / '.join(f'{v:.2f}' for v in part.model_utility)}")
masc = results[results.method == "MASC"]
scale = verdicts.scale_invariant(list(masc.forget_Q_A_ROUGE), oracle_rouge, list(masc.model_utility), resolution)
display(Markdown(
    f"**Did the claim hold in miniature?** Sizes {', '.join(sizes)}. " + "; ".join(lines) + ". "
    f"The oracles, which never saw the forget set, spread by {verdicts.value_range(oracle_rouge):.2f} across sizes: "
    f"that is how flat a forget metric can be expected to be; one forget item moves it by {resolution:.3f}. "
    f"Verdict: {scale.verdict}" + (f" ({scale.reason})" if scale.reason else "") + "."))
display(Markdown(record(
    "masc-scale-invariant", f"MASC forget ROUGE-L spread {verdicts.value_range(masc.forget_Q_A_ROUGE):.2f} across "
    f"sizes (oracles {verdicts.value_range(oracle_rouge):.2f}); utility {' / '.join(f'{v:.2f}' for v in masc.model_utility)}",
    scale, profile)))
