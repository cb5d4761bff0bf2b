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
# ({doc}`02-learning`), yet after MASC the forget-set metrics come out about the same at every size
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

check_parameters("07-scale", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import json

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.claims import CANNOT_TELL, record, tally
from unlearning.plotting import DIVERGED, method_color, use_book_style
from unlearning import recipes
from unlearning.protocol import Lab, eval_config, tofu_oracle

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype, recipe_scale=recipe_scale)
recipes.show(lab, "masc/scale", methods, f"tofu/target-{sizes[0]}", forget_split=forget_split)
manifest = json.loads((lab.models / "manifest.json").read_text())
config = eval_config("tofu", forget_split)
rows = []
for size in sizes:
    target = f"tofu/target-{size}"
    parameters = manifest[target]["parameters"]
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
def spread(values) -> float:
    return float(max(values) - min(values))


lines = []
target_rouge = results[results.method == "Target"]["forget_Q_A_ROUGE"]
for method in methods:
    part = results[results.method == method]
    lines.append(f"{method}: forget ROUGE-L {' / '.join(f'{v:.2f}' for v in part.forget_Q_A_ROUGE)} "
                 f"(spread {spread(part.forget_Q_A_ROUGE):.2f} across sizes, against {spread(target_rouge):.2f} for the "
                 f"targets), model utility {' / '.join(f'{v:.2f}' for v in part.model_utility)}")
masc = results[results.method == "MASC"]
grows = all(b >= a - 1e-9 for a, b in zip(masc.model_utility, masc.model_utility.iloc[1:]))
display(Markdown(
    f"**Did the claim hold in miniature?** Sizes {', '.join(sizes)}. " + "; ".join(lines) + ". "
    f"After MASC the forget metrics are {'about as spread as' if spread(masc.forget_Q_A_ROUGE) > 0.5 * spread(target_rouge) else 'much less spread than'} "
    f"the targets' across sizes, and MASC's utility {'grows with every size' if grows else 'does **not** grow monotonically with size'}."))
invariant = spread(masc.forget_Q_A_ROUGE) <= 0.5 * spread(target_rouge)
display(Markdown(record(
    "masc-scale-invariant", f"MASC forget ROUGE-L spread {spread(masc.forget_Q_A_ROUGE):.2f} across sizes (targets "
    f"{spread(target_rouge):.2f}); utility {' / '.join(f'{v:.2f}' for v in masc.model_utility)}",
    tally(int(invariant) + int(grows), 2) if len(sizes) > 1 else CANNOT_TELL, profile,
    reason="" if len(sizes) > 1 else "one model size in this profile")))
