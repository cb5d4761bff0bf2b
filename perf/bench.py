"""`make bench`: the project's performance claims, measured side by side in one run (issue 20).

1. **Probe cost.** MASC self-stopping on tofu-mini forget10 with the official probe (2 sequences a
   forward pass, the confirmation recomputed) and with ours (32 a pass, the confirmation reusing
   the trigger's passes), alternated: probe seconds and their share of the run.
2. **Time to a good model.** Chapter 6's runs (through the run store, so the book shows the same
   ones): when each method first reaches the oracle's forget level with its model utility kept
   (`trajectory.good_model`), and MASC's ratio against the fastest baseline once a baseline pays
   for the evaluations that find its good checkpoint (`trajectory.selected_time`).
3. **The engine against the usual loop.** Our engine and a Hugging Face `Trainer` subclass
   (`trainer_loop.py`, the way OpenUnlearning writes it) on the mini TOFU target (125 steps) and
   the real one (SmolLM2-135M, 3 steps), the same batches and steps, each from a freshly loaded
   model: tokens per second and the ratio; peak resident memory (each measurement in a fresh
   process), NPO's against GA's.
4. **Synthesis overhead and evaluation cost.** `synthesis.combine` per rule as a share of a step of
   the mini model, and alone on parameter lists shaped like Qwen2.5-0.5B and (one decoder layer of)
   Llama-2-7B in float32 and bfloat16; one full evaluation of a model of every benchmark.
5. **Shared prompts.** TOFU's answer probabilities on the real target with each prompt run once for
   all its answers, against a whole forward pass per answer.

Every comparison is a median over repetitions whose two sides alternate (the synthesis calls at
0.5B-7B scale: the fastest of three); nothing here is asserted in a test. Writes `perf/results.md`,
`perf/results.json` and
`perf/time_to_quality.png`.

    .venv/bin/python perf/bench.py            # what `make bench` runs (needs make models)
    .venv/bin/python perf/bench.py --only shared_prompt --profile smoke   # one section, printed
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROFILE = "mini"
REAL_TARGET = "tofu-real/target-135m"
SECTIONS = ("probe", "time_to_quality", "loops", "synthesis", "evaluation", "shared_prompt", "answer_positions")


def _median(values):
    return statistics.median(values)


# --- 1. the probe ------------------------------------------------------------------------------

def probe_cost(lab, size: str, repetitions: int) -> dict:
    """MASC on tofu forget10 with the official and the batched probe, alternated, run afresh."""
    from dataclasses import replace

    from unlearning.benchmarks import get_benchmark
    from experiments.lab import Protocol
    from unlearning.runs import execute

    tofu = get_benchmark("tofu")
    target = lab.model(f"tofu/target-{size}")
    base = Protocol().spec("tofu", "MASC", target, lab.forget_size("tofu", "forget10"), forget_split="forget10").resolved()
    variants = {"official (2 a pass, no reuse)": replace(base, stop=replace(base.stop, probe_batch_size=2, probe_reuse=False)),
                "ours (32 a pass, trigger reused)": base}
    samples = {name: [] for name in variants}
    for rep in range(repetitions):
        for name in (list(variants) if rep % 2 == 0 else list(reversed(variants))):
            _, record, _ = execute(variants[name], tofu, lab.data / "tofu", lab.tokenizer)
            samples[name].append(record)
    rows = []
    for name, records in samples.items():
        probe, train = _median([r["probe_seconds"] for r in records]), _median([r["train_seconds"] for r in records])
        rows.append({"probe": name, "steps": records[0]["steps"], "stop step": records[0]["stop_step"],
                     "probe passes": records[0]["probe_passes"], "probe s": probe, "training s": train,
                     "run s": probe + train, "probe share": probe / (probe + train)})
    return {"rows": rows, "same stop": len({r["stop step"] for r in rows}) == 1}


# --- 2. time to a good model -------------------------------------------------------------------

def chapter_parameters(chapter: str) -> dict:
    from experiments.parameters import defaults_of
    from unlearning.records import read_yaml_mapping

    return {**defaults_of(chapter), **read_yaml_mapping(ROOT / "notebooks" / "profiles" / PROFILE / f"{chapter}.yaml")}


def time_to_quality(lab) -> dict:
    """Chapter 6's largest-split runs with their checkpoints, as the chapter computes them, and the
    fair time to a good model (`trajectory.selected_time`: a baseline pays for the evaluations that
    find its good checkpoint, MASC's probes are in its run time)."""
    from experiments.comparison import time_to_good_model, tofu_comparison
    from experiments.plotting import plot_time_to_quality, use_book_style
    from experiments.lab import Protocol, tune_rmu_on_tofu
    from experiments.trajectory import checkpoint_steps

    p = chapter_parameters("06-tofu")
    split, size = p["forget_splits"][-1], p["size"]
    tuned = tune_rmu_on_tofu(lab, size, split, Protocol(), p["rmu_grid"]) if "RMU" in p["methods"] else None
    budget = lab.recipe_spec("openunlearning/tofu", "GradDiff", f"tofu/target-{size}", forget_split=split).max_steps
    schedule = checkpoint_steps(budget, p["checkpoint_first"], p["checkpoint_growth"])
    tofu = tofu_comparison(lab, size, [split], p["methods"], tuned=tuned, checkpoints=schedule, checkpoint_split=split)
    main = tofu.split(split)
    start = main.loc["Target"].drop(["split", "seconds", "steps"]).to_dict()
    quality = time_to_good_model(lab, "tofu", split, {m: tofu.records[split, m] for m in p["methods"]}, start,
                                 tofu.oracles[split])
    held = quality.held
    others = {m: t for m, t in held.items() if m != "MASC" and t is not None}
    fastest = min(others, key=others.get) if others else None
    ratio = others[fastest] / max(held["MASC"], 1e-9) if fastest and held.get("MASC") is not None else None
    use_book_style()
    figure = plot_time_to_quality(quality.trajectories, main.loc["Oracle"], quality.criterion, quality.reached)
    figure.savefig(HERE / "time_to_quality.png", bbox_inches="tight")
    return {"criterion": quality.criterion.describe(), "schedule": list(schedule), "rows": quality.table(),
            "masc_ratio": ratio, "fastest_baseline": fastest}


# --- 3. the engine against the Trainer loop ----------------------------------------------------

LOOP_CASES = (("GradDiff", "sum"), ("NPO+KLR", "sum"), ("SimNPO+GD", "sago"))
REAL_LOOP_CASES = LOOP_CASES[:2]  # the two with goals; a real-model measurement costs about 30 s
MEMORY_CASES = (("engine", "GA"), ("engine", "NPO"), ("trainer", "NPO"))


def _batches(forget, retain, method, steps: int, batch_size: int, pad: int, seed: int):
    """The engine's own batches, drawn as it draws them (same generators and seeds)."""
    from unlearning.data import cycle_batches
    from unlearning.engine import _indexed_batches, _with_index

    forget_iter = _indexed_batches(_with_index(forget), batch_size, pad, torch.Generator().manual_seed(seed))
    retain_iter = cycle_batches(retain, batch_size, pad, torch.Generator().manual_seed(seed + 7)) if method.retain else None
    return [(next(forget_iter), next(retain_iter) if retain_iter else None) for _ in range(steps)]


def measure_loop(loop: str, method_name: str, rule: str, setup: dict) -> dict:
    """`loop` (engine or trainer) runs `setup['steps']` steps of a method from a freshly loaded
    model: wall seconds of the whole training call (its own setup included) and of every step,
    tokens per second over both, the norm of the update and the process's peak memory so far."""
    from unlearning.benchmarks import get_benchmark
    from unlearning.data import encode_qa_split
    from unlearning.engine import OptimConfig, unlearn
    from unlearning.methods import get_method
    from unlearning.models import load_model, load_tokenizer
    from unlearning.runs import peak_rss_mb

    torch.manual_seed(0)
    tokenizer = load_tokenizer(setup["tokenizer"])
    bench = get_benchmark(setup["benchmark"])
    forget = encode_qa_split(tokenizer, bench.load(setup["data"], "forget10"))
    retain = encode_qa_split(tokenizer, bench.load(setup["data"], "retain90"))
    method = get_method(method_name)
    hparams = method.hparams()
    pairs = _batches(forget, retain, method, setup["steps"], 4, tokenizer.pad_token_id, seed=0)
    per_step = [int(f["attention_mask"].sum()) + (int(r["attention_mask"].sum()) if r is not None else 0) for f, r in pairs]
    model = load_model(setup["model"])
    start_weights = [p.detach().clone() for p in model.parameters()]
    if loop == "engine":
        begin = time.perf_counter()
        result = unlearn(model, method, hparams, forget, retain, pad_token_id=tokenizer.pad_token_id, rule=rule,
                         max_steps=setup["steps"], optim=OptimConfig(lr=setup["lr"], batch_size=4))
        seconds = time.perf_counter() - begin
        steps = [entry["seconds"] for entry in result.log]
    else:
        sys.path.insert(0, str(HERE))
        from trainer_loop import train_with_trainer

        timing = train_with_trainer(model, pairs, method_name, hparams, rule=rule, lr=setup["lr"])
        seconds, ends = timing["seconds"], timing["step_ends"]
        # the first step from the start of train() (its setup included), then from one step's end to the next
        steps = [ends[0]] + [b - a for a, b in zip(ends, ends[1:])]
    update = torch.sqrt(sum(((p.detach() - q) ** 2).sum() for p, q in zip(model.parameters(), start_weights)))
    return {"loop": loop, "method": method_name, "rule": rule, "steps": setup["steps"], "tokens": sum(per_step),
            "seconds": seconds, "tokens_per_second": sum(per_step) / seconds,
            "steady_tokens_per_second": sum(per_step[1:]) / sum(steps[1:]) if len(steps) > 1 else None,
            "update_norm": float(update),
            "peak_rss_mb": peak_rss_mb()}


def loop_worker(args) -> dict:
    """One measurement in this fresh process (peak memory is per process)."""
    from unlearning.runtime import configure_process

    configure_process()
    setup = {"benchmark": args.benchmark, "model": args.model, "data": args.data, "tokenizer": args.tokenizer or args.model,
             "steps": args.steps, "lr": args.lr}
    return measure_loop(args.loop, args.method, args.rule, setup)


def _spawn(loop: str, method: str, rule: str, setup: dict) -> dict:
    command = [sys.executable, __file__, "--worker", "--loop", loop, "--method", method, "--rule", rule,
               "--steps", str(setup["steps"]), "--lr", str(setup["lr"]), "--benchmark", setup["benchmark"],
               "--model", str(setup["model"]), "--data", str(setup["data"]), "--tokenizer", str(setup["tokenizer"])]
    env = {**os.environ, "UNLEARNING_PROGRESS": "0", "TQDM_DISABLE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    if done.returncode != 0:
        raise RuntimeError(f"worker {loop} {method} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def loop_setups(lab, size: str) -> dict[str, dict]:
    """Where the loops are compared: the mini model (a step is cheap, so the loop's own overhead
    shows) and the real TOFU target (a step is compute-bound)."""
    real = lab.model(REAL_TARGET)
    return {f"tofu-mini target-{size}": {"benchmark": "tofu", "model": lab.model(f"tofu/target-{size}"),
                                         "data": lab.data / "tofu", "tokenizer": lab.tokenizer, "steps": 125, "lr": 1e-4,
                                         "cases": LOOP_CASES, "repetitions": 3},
            "tofu-real target-135m": {"benchmark": "tofu-real", "model": real, "data": lab.data / "tofu-real",
                                      "tokenizer": real, "steps": 3, "lr": 1e-5, "cases": REAL_LOOP_CASES,
                                      "repetitions": 2}}


def engine_against_trainer(lab, size: str) -> dict:
    """Each case on each setup, the two loops alternated, in this process (a fresh model each
    time; no import cost on either side); peak memory in a fresh process per measurement, after
    one step (the optimizer's state and, for NPO, the reference are in place by then)."""
    setups = loop_setups(lab, size)
    speed = []
    for where, setup in setups.items():
        for method, rule in setup["cases"]:
            samples = {"engine": [], "trainer": []}
            for rep in range(setup["repetitions"]):
                for loop in (("engine", "trainer") if rep % 2 == 0 else ("trainer", "engine")):
                    samples[loop].append(measure_loop(loop, method, rule, setup))
            row = {"model": where, "method": method, "rule": rule, "steps": setup["steps"],
                   "tokens": samples["engine"][0]["tokens"]}
            for key, label in (("tokens_per_second", "whole call"), ("steady_tokens_per_second", "steps 2+")):
                engine, trainer = (_median([s[key] for s in samples[k]]) for k in ("engine", "trainer"))
                row.update({f"engine tok/s, {label}": engine, f"trainer tok/s, {label}": trainer,
                            f"engine / trainer, {label}": engine / trainer})
            row.update({"update norm engine": samples["engine"][0]["update_norm"],
                        "update norm trainer": samples["trainer"][0]["update_norm"]})
            speed.append(row)
    real = {**setups["tofu-real target-135m"], "steps": 1}
    memory = [{"loop": loop, "method": method, "peak MB": _spawn(loop, method, "sum", real)["peak_rss_mb"]}
              for loop, method in MEMORY_CASES]
    return {"speed": speed, "memory": memory, "memory_model": REAL_TARGET}


# --- 4. synthesis overhead and evaluation cost --------------------------------------------------

def qwen25_05b_shapes() -> list[tuple[int, ...]]:
    """Parameter shapes of Qwen2.5-0.5B (hidden 896, 24 layers, 14/2 heads of 64, MLP 4864,
    vocabulary 151936, tied embeddings): 494M parameters."""
    hidden, inter, kv = 896, 4864, 128
    layer = [(hidden, hidden), (hidden,), (kv, hidden), (kv,), (kv, hidden), (kv,), (hidden, hidden),
             (inter, hidden), (inter, hidden), (hidden, inter), (hidden,), (hidden,)]
    return [(151936, hidden)] + layer * 24 + [(hidden,)]


def llama2_7b_layer_shapes() -> list[tuple[int, ...]]:
    """One decoder layer of Llama-2-7B (hidden 4096, MLP 11008): 202M of its 6.74B parameters."""
    hidden, inter = 4096, 11008
    return [(hidden, hidden)] * 4 + [(inter, hidden), (inter, hidden), (hidden, inter), (hidden,), (hidden,)]


LLAMA2_7B_PARAMETERS = 6_738_415_616


def _time_combine(shapes, dtype, rules, repetitions: int, statistic=_median) -> dict[str, float]:
    """Seconds a `combine` call per rule on random gradients of `shapes`: the median of
    `repetitions` calls, or another `statistic` of them."""
    from unlearning.synthesis import combine

    generator = torch.Generator().manual_seed(0)
    forget = [torch.randn(s, generator=generator).to(dtype) for s in shapes]
    retain = [torch.randn(s, generator=generator).to(dtype) for s in shapes]
    out = {}
    for rule in rules:
        times = []
        for _ in range(repetitions):
            begin = time.perf_counter()
            combine(forget, retain, rule)
            times.append(time.perf_counter() - begin)
        out[rule] = statistic(times)
    return out


def synthesis_overhead(lab, size: str, repetitions: int) -> dict:
    from unlearning.benchmarks import get_benchmark
    from experiments.lab import Protocol
    from unlearning.runs import execute
    from unlearning.synthesis import RULES

    rules = [r for r in RULES if r != "sum"] + ["sum"]
    # two-pass steps of the mini model (GradDiff under SAGO), run afresh; its parameters' shapes
    target = lab.model(f"tofu/target-{size}")
    spec = Protocol().spec("tofu", "GradDiff", target, lab.forget_size("tofu", "forget10"), forget_split="forget10",
                           rule="sago").resolved()
    model, record, _ = execute(spec, get_benchmark("tofu"), lab.data / "tofu", lab.tokenizer)
    step = _median([e["seconds"] for e in record["log"][1:]])
    model_shapes = [tuple(p.shape) for p in model.parameters()]
    mini = _time_combine(model_shapes, torch.float32, rules, repetitions * 10)
    rows = [{"parameters": f"mini model {size} ({sum(torch.Size(s).numel() for s in model_shapes) / 1e6:.2f}M)",
             "dtype": "float32", **{f"{r} s": t for r, t in mini.items()},
             **{f"{r} share of step": t / step for r, t in mini.items()}, "step s": step}]
    for name, shapes, scale in (("Qwen2.5-0.5B", qwen25_05b_shapes(), 1.0),
                                ("Llama-2-7B, one layer", llama2_7b_layer_shapes(), None)):
        count = sum(torch.Size(s).numel() for s in shapes)
        for dtype in (torch.float32, torch.bfloat16):
            # the fastest of three calls: a first call of this size spends most of its time faulting in fresh pages
            times = _time_combine(shapes, dtype, rules, 3, statistic=min)
            row = {"parameters": f"{name} ({count / 1e6:.0f}M)", "dtype": str(dtype).removeprefix("torch."),
                   **{f"{r} s": t for r, t in times.items()},
                   **{f"{r} s per 1B": t / count * 1e9 for r, t in times.items()}}
            if scale is None:  # the whole 7B model by parameter count (one layer measured)
                row.update({f"{r} s, whole 7B (scaled)": t / count * LLAMA2_7B_PARAMETERS for r, t in times.items()})
            rows.append(row)
    return {"rules": rules, "rows": rows}


EVALUATED = (("tofu", "tofu/target-{size}"), ("muse-news", "muse-news/target-{size}"),
             ("muse-books", "muse-books/target-{size}"), ("wmdp", "base-{size}"), ("rwku", "base-{size}"),
             ("tofu-real", REAL_TARGET), ("rwku-real", "real/smollm2-135m"))


def evaluation_cost(lab, size: str) -> list[dict]:
    """One full evaluation of a model of every benchmark, computed (never read from the store)."""
    from unlearning.benchmarks import EvalConfig, get_benchmark
    from unlearning.models import load_model, load_tokenizer

    rows = []
    for benchmark, name in EVALUATED:
        folder = lab.model(name.format(size=size))
        begin = time.perf_counter()
        model, tokenizer = load_model(folder), load_tokenizer(lab.tokenizer_for(folder))
        metrics = get_benchmark(benchmark).suite(model, tokenizer, lab.data / benchmark, EvalConfig(), None)
        rows.append({"benchmark": benchmark, "model": name.format(size=size), "metrics": len(metrics),
                     "seconds": time.perf_counter() - begin})
    return rows


def shared_prompt_cost(lab, repetitions: int) -> list[dict]:
    """The answer probabilities of TOFU's sets on the real target (SmolLM2's chat template), each
    prompt run once for all its answers (`answer_nll`'s default) against a whole forward pass per
    answer, alternated: seconds (median), the ratio and the largest difference of a summed NLL."""
    from unlearning.benchmarks import get_benchmark
    from unlearning.benchmarks.tofu import UTILITY_SETS
    from unlearning.data import encode_qa
    from unlearning.metrics.likelihood import answer_nll
    from unlearning.models import load_model, load_tokenizer

    folder = lab.model(REAL_TARGET)
    model, tokenizer = load_model(folder), load_tokenizer(lab.tokenizer_for(folder))
    bench = get_benchmark("tofu-real")
    rows = []
    for split in ("forget10_perturbed", *UTILITY_SETS.values()):
        items = bench.load(lab.data / "tofu-real", split)
        examples = [encode_qa(tokenizer, it["question"], answer) for it in items
                    for answer in (it["answer"], it.get("paraphrased_answer"), *it["perturbed_answer"]) if answer]
        seconds, values = {True: [], False: []}, {}
        for _ in range(repetitions):
            for share in (True, False):
                begin = time.perf_counter()
                values[share] = answer_nll(model, examples, tokenizer.pad_token_id, 32, share_prompts=share)[0]
                seconds[share].append(time.perf_counter() - begin)
        shared, whole = _median(seconds[True]), _median(seconds[False])
        rows.append({"set": split, "questions": len(items), "answers": len(examples), "shared prompt s": shared,
                     "whole pass s": whole, "speed-up": whole / shared,
                     "largest NLL difference": float((values[True] - values[False]).abs().max())})
    return rows


# --- 7. the output layer at answer positions -----------------------------------------------------

def answer_positions_cost(lab, size: str, repetitions: int) -> list[dict]:
    """A training step (forward, NLL, backward) on TOFU's answers through the output layer at the
    positions a loss reads (`margin.answer_logits`) against the whole forward pass, alternated, on
    batches of 8 of the real checkpoint's fine-tuning set (SmolLM2's chat template; the learning
    stage's batches) and of the laboratory target's forget split: seconds a step (median), the
    ratio and the largest difference of a loss."""
    from experiments.lab import REAL_BASE
    from laboratory.family import bucketed_batches
    from unlearning.benchmarks import get_benchmark
    from unlearning.data import encode_qa_split
    from unlearning.losses import nll_loss
    from unlearning.margin import answer_logits, model_inputs
    from unlearning.models import load_model, load_tokenizer

    ways = {"answer": lambda model, batch: nll_loss(*answer_logits(model, batch)),
            "whole": lambda model, batch: nll_loss(model(**model_inputs(batch)).logits, batch["labels"])}
    rows = []
    for name, folder, data, split in (("real base (SmolLM2-135M)", lab.model(REAL_BASE), "tofu-real", "full"),
                                      (f"laboratory target-{size}", lab.model(f"tofu/target-{size}"), "tofu", "forget10")):
        model, tokenizer = load_model(folder), load_tokenizer(lab.tokenizer_for(folder))
        examples = encode_qa_split(tokenizer, get_benchmark(data).load(lab.data / data, split))
        batches = list(bucketed_batches(examples, 8, tokenizer.pad_token_id, torch.Generator().manual_seed(0)))[:4]
        model.train()
        seconds, losses = {way: [] for way in ways}, {way: [] for way in ways}
        for _ in range(repetitions):
            for way, loss_of in ways.items():
                begin = time.perf_counter()
                for batch in batches:
                    loss = loss_of(model, batch)
                    loss.backward()
                    model.zero_grad(set_to_none=True)
                    losses[way].append(loss.item())
                seconds[way].append((time.perf_counter() - begin) / len(batches))
        answer, every = _median(seconds["answer"]), _median(seconds["whole"])
        rows.append({"model": name, "tokens a batch": sum(b["input_ids"].numel() for b in batches) / len(batches),
                     "answer positions s": answer, "whole pass s": every, "speed-up": every / answer,
                     "largest loss difference": max(abs(a - b) for a, b in zip(losses["answer"], losses["whole"]))})
    return rows


# --- the report ---------------------------------------------------------------------------------

def machine() -> str:
    return (f"{platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__} with {torch.get_num_threads()} threads, "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}")


def _table(rows: list[dict], digits: int = 3) -> str:
    if not rows:
        return "(none)\n"
    columns = list(dict.fromkeys(c for r in rows for c in r))  # every row's keys, first seen first
    fmt = lambda v: "never" if v is None else f"{v:.{digits}g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r[c]) if c in r else "-" for c in columns) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def report(results: dict) -> str:
    probe, quality, loops, synth = (results[k] for k in ("probe", "time_to_quality", "loops", "synthesis"))
    ours = probe["rows"][1]
    ratio = quality["masc_ratio"]
    npo = {(r["loop"], r["method"]): r["peak MB"] for r in loops["memory"]}
    mini_share = max(v for r in synth["rows"] if "step s" in r for k, v in r.items() if k.endswith("share of step"))
    lines = [
        "# Performance results (`make bench`)", "",
        f"Measured {results['date']} with `{results['command']}` on {results['machine']}; "
        f"{results['seconds']:.0f} s in all. Medians over alternated repetitions (3; 2 on the real model); "
        "only ratios within this one run are meant to be compared.", "",
        "## 1. The violation probe (MASC, tofu-mini forget10)", "", _table(probe["rows"]),
        f"Goal: probe under 15% of a self-stopped MASC run. Ours: **{ours['probe share']:.1%}** "
        f"({'met' if ours['probe share'] < 0.15 else 'not met'}); both probes stop at the same step: {probe['same stop']}.", "",
        "## 2. Time to a good model (chapter 6's runs, through the run store)", "",
        f"A good model: {quality['criterion']}. Checkpoints at steps {quality['schedule']}.", "",
        _table(quality["rows"]),
        "*Holds a good model at*: a baseline's first good checkpoint plus every checkpoint evaluation up to it (it "
        "must evaluate to find it); MASC's final model, its probes already in its time.", "",
        ("MASC held a good model **{:.1f}x** as fast as the fastest baseline ({}), evaluations counted; the paper "
         "reports about 6x on TOFU for its own question (full budgets against MASC's self-stopped run)."
         .format(ratio, quality["fastest_baseline"]) if ratio is not None else
         "No ratio: " + ("MASC did not reach a good model" if quality["fastest_baseline"]
                         else "no baseline reached a good model") + "."),
        "", "![time to a good model](time_to_quality.png)", "",
        "## 3. Our engine against a Trainer-based loop (the same batches of 4 + 4, the same steps)", "",
        _table(loops["speed"]),
        "Tokens are the forget and retain tokens of the steps; *whole call* divides by the wall time of the training "
        "call (its setup included: our NPO's one pass over the forget set to cache the reference, the Trainer's own "
        "setup), *steps 2+* by the time of the steps after the first. Our engine uses torch's fused AdamW, the Trainer "
        "its default `adamw_torch`. Goals: at least 1.5x on NPO+KLR, not slower on GradDiff. The update norms agree: "
        "both loops compute the same steps.", "", _table(loops["memory"]),
        f"Peak resident memory on {loops['memory_model']}. NPO's peak against GA's (our engine): "
        f"**{npo[('engine', 'NPO')] / npo[('engine', 'GA')]:.2f}x** "
        "(goal: at most 1.1x; the Trainer loop keeps a reference copy).", "",
        "## 4. Synthesis overhead", "", _table([r for r in synth["rows"] if "step s" in r]),
        f"`combine` per rule against a two-pass step of the mini model (GradDiff under SAGO). Goal: under 10% of "
        f"the step at mini scale: the costliest rule takes **{mini_share:.1%}** "
        f"({'met' if mini_share < 0.10 else 'not met'}).", "",
        _table([r for r in synth["rows"] if "step s" not in r]),
        "Alone, on random gradients of the shapes named (seconds a call, the fastest of three, since the first calls "
        "at this size mostly fault in fresh memory pages; per billion parameters; "
        "for Llama-2-7B one decoder layer measured and scaled to the whole model by parameter count). "
        "On a GPU these are a few memory passes each.", "",
        "## 5. One full evaluation per benchmark", "", _table(results["evaluation"]),
        "## 6. Answers that share a prompt (the real target, TOFU's sets)", "", _table(results["shared_prompt"]),
        "Each question's prompt run once, its answer, paraphrase and perturbed answers continuing from its key/value "
        "cache (`answer_nll`'s default), against a whole forward pass per answer; the largest difference of a summed "
        "answer NLL between the two.", "",
        "## 7. The output layer at answer positions (a training step)", "", _table(results["answer_positions"]),
        "Forward, NLL and backward of a batch of 8 through the output layer at the positions a loss reads "
        "(`margin.answer_logits`, what every loss of the engine and the learning stage's fine-tunes use) against the "
        "whole forward pass; the largest difference of a batch's loss between the two.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--loop", default="engine")
    parser.add_argument("--method", default="GradDiff")
    parser.add_argument("--rule", default="sum")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--benchmark", default="tofu-real")
    parser.add_argument("--model", type=Path)
    parser.add_argument("--data", type=Path)
    parser.add_argument("--tokenizer", type=Path)
    parser.add_argument("--size", default="s", help="the mini model size of sections 1, 2 and 4 (default s)")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--profile", default=PROFILE, help="whose models and data (default mini; smoke for a quick look)")
    parser.add_argument("--only", choices=SECTIONS, help="measure one section and print its table (writes nothing)")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(loop_worker(args)))
        return
    from experiments.lab import Lab

    os.chdir(ROOT)
    lab = Lab.for_profile(args.profile)
    sections = {"probe": lambda: probe_cost(lab, args.size, args.repetitions),
                "time_to_quality": lambda: time_to_quality(lab),
                "loops": lambda: engine_against_trainer(lab, args.size),
                "synthesis": lambda: synthesis_overhead(lab, args.size, args.repetitions),
                "evaluation": lambda: evaluation_cost(lab, args.size),
                "shared_prompt": lambda: shared_prompt_cost(lab, args.repetitions),
                "answer_positions": lambda: answer_positions_cost(lab, args.size, args.repetitions)}
    if args.only:
        result = sections[args.only]()
        print(_table(result) if isinstance(result, list) else json.dumps(result, indent=1, default=str))
        return
    begin = time.perf_counter()
    results = {"date": datetime.date.today().isoformat(), "machine": machine(), "repetitions": args.repetitions,
               "command": "make bench"}
    for name, compute in sections.items():
        section = time.perf_counter()
        results[name] = compute()
        print(f"bench: {name} in {time.perf_counter() - section:.0f} s", flush=True)
    results["seconds"] = time.perf_counter() - begin
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    (args.out / "results.md").write_text(report(results))
    print(f"bench: wrote {args.out / 'results.md'} ({results['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
