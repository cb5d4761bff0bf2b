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
# # The pipeline, end to end
#
# This chapter runs the whole path once, on the smallest scale: a fictitious-author benchmark in
# TOFU's schema, a tiny Qwen2 *target* fine-tuned on every author, a retain-only *oracle* that never
# saw the forget authors, and two unlearning runs from the target:
#
# - **MASC** (margin self-correction) with its own stopping rule: training ends when the violation
#   rate on probe sequences falls to the tolerance;
# - **GradDiff** (gradient ascent on the forget set plus NLL on the retain set) with a fixed budget.
#
# Every number on this page was produced by the code cells below when the book was built.

# %% tags=["parameters"]
profile = "mini"            # which lab: data/<profile>, models/<profile>, runs/<profile>
size = "s"                  # the profile's main model size
forget_split = "forget10"
masc_cap = 400              # MASC's step cap; the violation rule normally stops far earlier
graddiff_steps = 60         # GradDiff's fixed budget
graddiff_lr = 1e-3
device = "auto"      # auto (a GPU when there is one), cpu or cuda
dtype = "float32"    # or bfloat16

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("01-pipeline", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd

from unlearning.benchmarks import get_benchmark
from experiments.comparison import run_summary
from unlearning.engine import OptimConfig
from experiments.plotting import plot_forget_retain, plot_violation_trace, use_book_style
from experiments.presentation import glue
from experiments.lab import Lab, Protocol, tofu_oracle, tofu_target

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
protocol = Protocol(cap=masc_cap)
target, oracle, retain_split = tofu_target(size), tofu_oracle(forget_split, size), get_benchmark("tofu").retain
glue(target=f"`{target}`", oracle=f"`{oracle}`", forget_split=f"`{forget_split}`", retain_split=f"`{retain_split}`",
     protocol=protocol.describe())
RUN_NUMBERS = ("steps", "train_seconds", "probe_seconds", "forget_probability", "retain_probability")

# %% [markdown]
# This page runs the target {glue:md}`target` against the oracle {glue:md}`oracle`, forgetting the
# split {glue:md}`forget_split` and keeping {glue:md}`retain_split`, under the book's shared protocol:
# {glue:md}`protocol`.
#
# ## Starting points
#
# The target has seen the forget authors, the oracle has not. Their mean answer probability
# $\bar p(y \mid x) = \exp(-\mathrm{NLL}/|y|)$ on the forget and retain sets frames everything below.

# %%
references = [{"name": name, "forget": lab.answer_probability(model, "tofu", forget_split),
               "retain": lab.answer_probability(model, "tofu", retain_split)}
              for name, model in (("Target", target), ("Oracle", oracle))]
pd.DataFrame(references).set_index("name").round(3)

# %% [markdown]
# ## Two unlearning runs
#
# MASC runs under the book's shared protocol and stops by itself; GradDiff runs a fixed budget.
# Both go through the run store, so the same command line (`unlearning unlearn`) or a later
# chapter asking for the same run reads this one back. A MASC run like it from a shell (the step cap
# given as the chapter's `masc_cap`):
#
# ```bash
# unlearning unlearn --benchmark tofu-mini --model models/mini/tofu/target-s --method MASC --max-steps 400
# ```
#
# Each step of GradDiff ascends the forget set's negative log-likelihood and descends the retain
# set's; MASC instead pushes only the forget tokens whose restricted margin still exceeds
# $\tau = \mathrm{logit}(\rho)$, so its loss vanishes on tokens it has already corrected. The table
# reads: `steps` taken, whether the run ended by its own rule, seconds spent training and probing,
# and the mean answer probability on the forget and retain sets after the run.

# %%
masc = lab.run("tofu", "MASC", target, protocol, forget_split=forget_split)
graddiff = lab.run("tofu", "GradDiff", target, forget_split=forget_split, max_steps=graddiff_steps,
                   optim=OptimConfig(lr=graddiff_lr, batch_size=protocol.batch_size), seed=protocol.seed)
runs = {"MASC": masc, "GradDiff": graddiff}
run_summary(runs)

# %% [markdown]
# MASC's probes are the heart of its stopping rule. Every `every` steps it measures the violation
# rate, the share of forget positions whose restricted margin still exceeds $\tau$, on a few forget
# sequences (the *trigger*); once that falls to the tolerance, a larger *confirmation* set must agree
# before training stops. The figure shows each probe of this run.

# %% mystnb={"figure": {"caption": "MASC's violation rate at each trigger probe (first forget sequences). Rings mark confirmation probes on the larger confirmation set; training stops at the first confirmation at or below the tolerance.", "name": "fig-pipeline-violation"}} tags=["hide-input"]
plot_violation_trace(masc["probes"], protocol.tolerance, plt.subplots()[1])
plt.show()

# %% [markdown]
# The second figure puts the four models side by side. Forgetting as the oracle forgot means the
# oracle's hatched bar on the forget set and the target's plain bar on the retain set; a model
# that forgot by breaking lowers both bars at once.

# %% mystnb={"figure": {"caption": "Mean answer probability on the forget set (hatched) and the retain set (plain) for the target, the oracle and the two unlearned models.", "name": "fig-pipeline-bars"}} tags=["hide-input"]
plot_forget_retain(references + [{"name": name, "forget": r["forget_probability"], "retain": r["retain_probability"]}
                                 for name, r in runs.items()], plt.subplots()[1])
plt.show()

# %% tags=["hide-input"]
glue(masc_stop=f"stopped by itself after **{masc['steps']}** steps" if masc["stopped"] else
     f"did **not** stop within its cap of {masc_cap} steps", **{f"masc_{k}": masc[k] for k in RUN_NUMBERS},
     **{f"graddiff_{k}": graddiff[k] for k in RUN_NUMBERS}, tolerance=protocol.tolerance,
     **{f"{r['name'].lower()}_{k}": r[k] for r in references for k in ("forget", "retain")})

# %% [markdown]
# **What this run shows.** MASC {glue:md}`masc_stop` ({glue:text}`masc_train_seconds:.1f` s training,
# {glue:text}`masc_probe_seconds:.1f` s probing, tolerance {glue:text}`tolerance`); its forget-set
# answer probability went from {glue:text}`target_forget:.3f` to {glue:text}`masc_forget_probability:.3f`
# (oracle: {glue:text}`oracle_forget:.3f`) while the retain set went from {glue:text}`target_retain:.3f`
# to {glue:text}`masc_retain_probability:.3f`. GradDiff ran its fixed {glue:text}`graddiff_steps` steps
# ({glue:text}`graddiff_train_seconds:.1f` s) and reached {glue:text}`graddiff_forget_probability:.3f`
# on the forget set and {glue:text}`graddiff_retain_probability:.3f` on the retain set. These are
# single-seed numbers from a tiny model; the later chapters compare the methods properly:
# {doc}`04-margin` and {doc}`05-stopping` open MASC's two mechanisms, {doc}`06-tofu` runs every
# method of the MASC paper with its own recipe against the full TOFU metrics.
