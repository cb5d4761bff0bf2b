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
# # Beyond the papers: combining the two
#
# The two papers attack different parts of unlearning. MASC changes *what is pushed and when to
# stop*: a bounded margin objective and a violation-rate stopping rule. PCGrad/SAGO change *how the
# forget push meets retention*: the combined update never opposes the retain gradient. Nothing stops
# us from using both. This chapter asks two questions neither paper answers:
#
# 1. **MASC under SAGO or PCGrad synthesis.** MASC's forget term (the margin hinge) and its retain
#    term (KL to the original model) are combined by plain summation in the MASC paper. Does
#    retention-first synthesis buy utility, or cost forgetting?
# 2. **The violation stopping rule for NPO and SimNPO.** The rule only needs the model's margins on
#    probe sequences, so it can stop any method. Does it save the baselines' time without losing
#    their forgetting?
#
# Both run on TOFU-mini forget10 from the main-size target, with the shared protocol, next to the
# best runs of chapters 6 and 11's recipe (SimNPO+GD with SAGO) on the same data.

# %% tags=["parameters"]
profile = "mini"
size = "s"
forget_split = "forget10"
cap = 1000   # most steps a self-stopping run may take (runs that never reach the tolerance stop here)
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16

# %% tags=["remove-cell"]
from unlearning.parameters import check_parameters

check_parameters("16-beyond", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.plotting import DIVERGED, method_color, use_book_style
from unlearning.protocol import Lab, Protocol, eval_config, tofu_oracle

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
protocol = Protocol(cap=cap)
target = f"tofu/target-{size}"
config = eval_config("tofu", forget_split)
oracle = lab.evaluate("tofu", lab.model(tofu_oracle(forget_split, size)), config=config)
variants = [  # (label, method, rule, stop)
    ("MASC (paper: sum)", "MASC", "sum", "violation"),
    ("MASC + PCGrad", "MASC", "pcgrad", "violation"),
    ("MASC + SAGO", "MASC", "sago", "violation"),
    ("NPO (fixed budget)", "NPO", "sum", "fixed"),
    ("NPO + violation stop", "NPO", "sum", "violation"),
    ("SimNPO (fixed budget)", "SimNPO", "sum", "fixed"),
    ("SimNPO + violation stop", "SimNPO", "sum", "violation"),
    ("NPO+KLR (fixed budget)", "NPO+KLR", "sum", "fixed"),
    ("SimNPO+GD + SAGO (fixed budget)", "SimNPO+GD", "sago", "fixed"),
    ("SimNPO+GD + SAGO + violation stop", "SimNPO+GD", "sago", "violation"),
]
rows = []
for label, method, rule, stop in variants:
    run = lab.run("tofu", method, target, protocol, forget_split=forget_split, rule=rule, stop=stop)
    rows.append({"variant": label, "method": method, "rule": rule, "stop": stop, "steps": run["steps"],
                 "stopped by itself": run["stopped"], "seconds": run["train_seconds"] + run["probe_seconds"],
                 **lab.evaluate("tofu", run["dir"], config=config, oracle=oracle)})
results = pd.DataFrame(rows)
columns = {"steps": "steps", "stopped by itself": "stopped by itself", "seconds": "seconds",
           "forget_Q_A_ROUGE": "forget ROUGE-L", "forget_Q_A_Prob": "forget Prob", "forget_quality": "forget quality",
           "model_utility": "model utility"}

# %% [markdown]
# ## Every variant

# %% tags=["hide-input"]
results.set_index("variant")[list(columns)].rename(columns=columns).style.format(precision=3, na_rep=DIVERGED).format(
    "{:.2e}", na_rep=DIVERGED, subset=["forget quality"])

# %% mystnb={"figure": {"caption": "Forget-set ROUGE-L (lower is better) against model utility for every variant; filled markers stop by themselves (violation rule), open ones ran a fixed budget. Marker size grows with run time. The grey cross is the retain-only oracle.", "name": "fig-beyond-tradeoff"}} tags=["hide-input"]
fig, ax = plt.subplots(figsize=(7.5, 4.6))
for _, row in results.iterrows():
    color = method_color(row["method"])
    ax.scatter(row["forget_Q_A_ROUGE"], row["model_utility"], s=40 + 25 * row["seconds"],
               facecolors=color if row["stop"] == "violation" else "none", edgecolors=color, linewidth=1.5,
               marker={"sum": "o", "pcgrad": "^", "sago": "*"}[row["rule"]])
    ax.annotate(row["variant"], (row["forget_Q_A_ROUGE"], row["model_utility"]), fontsize=7,
                xytext=(4, 4), textcoords="offset points")
ax.scatter(oracle["forget_Q_A_ROUGE"], oracle["model_utility"], marker="x", s=80, color="grey")
ax.set_xlabel("forget ROUGE-L (lower is better)")
ax.set_ylabel("model utility")
plt.show()

# %% tags=["hide-input"]
r = results.set_index("variant")


def line(a: str, b: str) -> str:
    return (f"{b}: {r.loc[b, 'seconds']:.1f} s vs {r.loc[a, 'seconds']:.1f} s, forget ROUGE-L "
            f"{r.loc[b, 'forget_Q_A_ROUGE']:.2f} vs {r.loc[a, 'forget_Q_A_ROUGE']:.2f}, model utility "
            f"{r.loc[b, 'model_utility']:.2f} vs {r.loc[a, 'model_utility']:.2f}")


display(Markdown(
    "**What the run shows.** Against plain MASC — " + "; ".join(line("MASC (paper: sum)", v) for v in
                                                                 ("MASC + PCGrad", "MASC + SAGO")) + ". "
    "Violation stopping against the fixed budget — " + "; ".join(line(f"{m} (fixed budget)", f"{m} + violation stop")
                                                              for m in ("NPO", "SimNPO")) + ". "
    "A variant is only an improvement if it moves towards the lower right (less forget recall, more utility) "
    "at no greater cost; these are single-seed runs on a tiny model, so differences of a few hundredths are noise."))
