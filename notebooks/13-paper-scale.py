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
# # Reproducing at paper scale
#
# Every chapter so far ran on the laboratory world with tiny models. The same code runs the papers'
# settings: real checkpoints by hub name, real datasets in their hub layout, a GPU, LoRA adapters for
# 7B-8B models, and several GPUs through accelerate. **None of the paper-scale commands below was run
# to produce this book** (it is built on a 2-core CPU without network access); they are the commands
# the code supports, with the resources the papers report. What *was* checked here: the hub loaders on
# local copies in the hub's layout (tests), LoRA training and merging, and two-process training with
# `torch.distributed` giving the same update as one process (tests).
#
# ## 1. Data and models
#
# `unlearning.data.load_split` reads a split from a local folder or, given a hub name, from the hub
# (`locuslab/TOFU`, `muse-bench/MUSE-News`, `muse-bench/MUSE-Books`, `cais/wmdp` with
# `cais/wmdp-corpora` and `cais/mmlu`, `jinzhuoran/RWKU`); `UNLEARNING_HUB_MIRROR=/path` reads a local
# mirror in the hub's layout instead. Models load by hub name or path with `trust_remote_code` off.
# `unlearning fetch` writes both into the layout the chapters read (`data/paper/<benchmark>/`,
# `models/paper/<name>/`), so every notebook runs unchanged with `PROFILE=paper`.

# %% tags=["parameters"]
fetch_config = "notebooks/profiles/paper/fetch.yaml"   # what `unlearning fetch` downloads

# %% tags=["hide-input"]
from pathlib import Path

import pandas as pd
import yaml
from IPython.display import Markdown, display

plan = yaml.safe_load(Path(fetch_config).read_text())

# %% [markdown]
# The checkpoints and datasets of the paper profile (`notebooks/profiles/paper/fetch.yaml`):

# %%
pd.DataFrame([{"local name": name, "hub checkpoint": source} for name, source in plan["models"].items()]).set_index("local name")

# %%
pd.DataFrame([{"benchmark": bench, "hub dataset": spec["source"], "splits": len(spec["splits"])}
              for bench, spec in plan["data"].items()]).set_index("benchmark")

# %% [markdown]
# ## 2. Commands
#
# ```bash
# pip install -e '.[gpu,book]'                 # adds datasets, bitsandbytes, peft
# unlearning fetch --config notebooks/profiles/paper/fetch.yaml --out .   # data/paper, models/paper
# make book PROFILE=paper                       # every chapter at paper scale
# ```
#
# Single runs, as in the papers:
#
# ```bash
# # MASC, TOFU forget10, Llama-2-7B-chat TOFU target, LoRA r 16 (masc.md s. 12), one GPU
# unlearning unlearn --benchmark tofu --data data/paper/tofu --model models/paper/tofu/target-7b \
#     --method MASC --stop violation --tolerance 0.475 --lr 1e-4 --batch-size 4 --lora-rank 16 \
#     --max-steps 5400 --out runs/paper/masc-forget10
# # SimNPO+GD with SAGO, WMDP, Zephyr-7B-beta, 4 GPUs x 2 per device x accumulation 4 = 32 + 32 blocks
# accelerate launch --num_processes 4 -m unlearning.cli unlearn --benchmark wmdp --data data/paper/wmdp \
#     --model models/paper/base-7b --method SimNPO+GD --rule sago --lr 1e-5 --batch-size 2 --grad-accum 4 \
#     --max-steps 150 --set beta=0.02 --set alpha=0.1 --out runs/paper/simnpo-sago-wmdp
# unlearning evaluate --benchmark tofu --data data/paper/tofu --model runs/paper/masc-forget10/model \
#     --oracle models/paper/tofu/retain90-7b
# ```
#
# ## 3. Resources the papers report
#
# | experiment | model | hardware (paper) | run time (paper) |
# |---|---|---|---|
# | MASC TOFU forget10 | Llama-2-7B-chat, LoRA r 16 | one GPU (type not stated) | minutes; baselines several times longer |
# | MASC scale study | Qwen2.5 0.5B-7B | not stated | not stated |
# | SAGO WMDP | Zephyr-7B-beta, full fine-tune | 4 GPUs, bf16, ZeRO | 100-500 steps of 32 + 32 blocks |
# | SAGO RWKU | Llama-3-8B-Instruct | 4 GPUs | 2 epochs |
#
# A 7B model in bf16 with AdamW needs about 16 bytes per parameter for a full fine-tune (112 GB:
# several GPUs), and about 15 GB plus activations with LoRA (one 24-80 GB GPU). The NPO/KL methods hold
# a reference model: with LoRA it is the same network with adapters switched off, not a copy.

# %% tags=["hide-input"]
display(Markdown(f"The fetch plan lists {len(plan['models'])} checkpoints and {len(plan['data'])} datasets."))
