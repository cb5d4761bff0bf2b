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
from unlearning.parameters import check_parameters

check_parameters("01-pipeline", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from unlearning.benchmarks import get_benchmark
from unlearning.data import encode_qa_split
from unlearning.engine import OptimConfig
from unlearning.metrics.likelihood import answer_probability
from unlearning.models import load_model, load_tokenizer
from unlearning.plotting import plot_forget_retain, plot_violation_trace, use_book_style
from unlearning.protocol import Lab, Protocol, tofu_oracle

use_book_style()
lab = Lab.for_profile(profile, device=device, dtype=dtype)
protocol = Protocol(cap=masc_cap)
target, oracle = f"tofu/target-{size}", tofu_oracle(forget_split, size)
tofu = get_benchmark("tofu")
display(Markdown(f"Profile **{profile}**: target `{target}`, oracle `{oracle}`, forget split `{forget_split}`, "
                 f"retain split `{tofu.retain}`; learning rate {protocol.lr:g}, {protocol.batch_size} forget and "
                 f"{protocol.batch_size} retain examples per step."))

# %% [markdown]
# ## Starting points
#
# The target has seen the forget authors, the oracle has not. Their mean answer probability
# $\bar p(y \mid x) = \exp(-\mathrm{NLL}/|y|)$ on the forget and retain sets frames everything below.

# %%
tokenizer = load_tokenizer(lab.tokenizer)
forget = encode_qa_split(tokenizer, tofu.load(lab.data / "tofu", forget_split))
retain = encode_qa_split(tokenizer, tofu.load(lab.data / "tofu", tofu.retain))
references = []
for name, model_name in (("Target", target), ("Oracle", oracle)):
    model = load_model(lab.model(model_name))
    references.append({"name": name,
                       "forget": float(answer_probability(model, forget, tokenizer.pad_token_id).mean()),
                       "retain": float(answer_probability(model, retain, tokenizer.pad_token_id).mean())})
pd.DataFrame(references).set_index("name").round(3)

# %% [markdown]
# ## Two unlearning runs
#
# MASC runs under the book's shared protocol and stops by itself; GradDiff runs a fixed budget.
# Both go through the run store, so the same command line (`unlearning unlearn`) or a later
# chapter asking for the same run reads this one back.

# %%
masc = lab.run("tofu", "MASC", target, protocol, forget_split=forget_split)
graddiff = lab.run("tofu", "GradDiff", target, forget_split=forget_split, max_steps=graddiff_steps,
                   optim=OptimConfig(lr=graddiff_lr, batch_size=protocol.batch_size), seed=protocol.seed)
runs = {"MASC": masc, "GradDiff": graddiff}
table = pd.DataFrame([{
    "method": name, "steps": r["steps"], "stopped by itself": r["stopped"],
    "train s": round(r["train_seconds"], 2), "probe s": round(r["probe_seconds"], 2),
    "forget p": round(r["forget_probability"], 3), "retain p": round(r["retain_probability"], 3)}
    for name, r in runs.items()])
table.set_index("method")

# %% mystnb={"figure": {"caption": "MASC's violation rate at each trigger probe (first forget sequences). Rings mark confirmation probes on the larger confirmation set; training stops at the first confirmation at or below the tolerance.", "name": "fig-pipeline-violation"}} tags=["hide-input"]
fig, ax = plt.subplots()
plot_violation_trace(masc["probes"], protocol.tolerance, ax)
plt.show()

# %% mystnb={"figure": {"caption": "Mean answer probability on the forget set (hatched) and the retain set (plain) for the target, the oracle and the two unlearned models.", "name": "fig-pipeline-bars"}} tags=["hide-input"]
fig, ax = plt.subplots()
rows = references + [{"name": name, "forget": r["forget_probability"], "retain": r["retain_probability"]}
                     for name, r in runs.items()]
plot_forget_retain(rows, ax)
plt.show()

# %% tags=["hide-input"]
stop_text = (f"stopped by itself after **{masc['steps']}** steps" if masc["stopped"]
             else f"did **not** stop within its cap of {masc_cap} steps")
display(Markdown(
    f"**What this run shows.** MASC {stop_text} "
    f"({masc['train_seconds']:.1f} s training, {masc['probe_seconds']:.1f} s probing, tolerance "
    f"{protocol.tolerance}); its forget-set answer probability went from {references[0]['forget']:.3f} to "
    f"{masc['forget_probability']:.3f} (oracle: {references[1]['forget']:.3f}) while the retain set went from "
    f"{references[0]['retain']:.3f} to {masc['retain_probability']:.3f}. GradDiff ran its fixed {graddiff['steps']} "
    f"steps ({graddiff['train_seconds']:.1f} s) and reached {graddiff['forget_probability']:.3f} on the forget set "
    f"and {graddiff['retain_probability']:.3f} on the retain set. These are single-seed numbers from a tiny model; "
    f"the later chapters compare the methods properly."))
