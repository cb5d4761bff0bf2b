"""The learning stage: every model that unlearning starts from or is judged against.

Mirrors how the real benchmarks get their models. A *base* model per size is pretrained on
the world's corpus (`pretrain/corpus`): it knows the countries, the famous people and the
hazard domain, so it is the WMDP-mini and RWKU-mini target, like Zephyr and Llama-3 there.
From each base, TOFU-mini's *target* is fine-tuned on all authors (`full`) and the retain-only
*oracles* on `retainXX` (TOFU arXiv 2401.06121); MUSE-mini News and Books targets are
fine-tuned on forget + retain1 + retain2 and their retrained oracles on retain1 + retain2
(MUSE arXiv 2407.06460).

Every model is written atomically and keyed by a hash of its data, size, training config,
tokenizer and parent model, so `make models` reruns only what changed; quality gates
(`laboratory.gates`) are computed after training and stored with the model.
"""

from __future__ import annotations

import dataclasses
import json
import math
import multiprocessing
import os
import re
import signal
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import torch

from laboratory.family import SIZES, TrainConfig, build_model, size_info, train_causal_lm, train_tokenizer
from laboratory.gates import gates_version, run_gates
from unlearning.benchmarks import base_name, get_benchmark, model_name
from unlearning.benchmarks.muse import CORPORA as MUSE_CORPORA
from unlearning.benchmarks.tofu import retain_split
from unlearning.choices import LEARN_PARTS
from unlearning.data import QA_PROMPT, encode_qa_split, encode_text, load_split
from unlearning.models import copy_tokenizer_files, count_parameters, load_model, load_tokenizer, save_model
from unlearning.records import write_json
from unlearning.runtime import configure_process
from unlearning.store import code_key, content_key, file_hash, weights_hash

TOFU_ORACLES = tuple(retain_split(s) for s in get_benchmark("tofu").forget_splits)  # retain99, retain95, retain90
# every fine-tuning run replays the world's question-answer documents (`pretrain/replay`) so the
# fine-tuned models keep the general knowledge TOFU's model utility measures; kind 'qa-doc' cuts
# each document into its question-answer pairs, which are as short as TOFU's and pad no batch
REPLAY = ("pretrain", "replay", "qa-doc")
STAGES = ("pretrain", "finetune", "muse_finetune")
KIND_FIELDS = {"qa": ("question", "answer"), "qa-doc": ("text",), "text": ("text",)}  # what training reads
# every model trains with this many torch threads, alone or beside others (`learn(workers=...)`),
# so its weights do not depend on `--jobs` or on the machine's thread count: PyTorch promises
# identical numbers only for the same thread count. One thread also gives the best throughput on
# 2 cores when two models train side by side.
JOB_THREADS = 1


# the files the tokenizer learns from: the pretraining corpus and, once each, every text a
# fine-tuning run or a membership test can meet (TOFU: all authors, trained or held out; MUSE:
# every raw split including the holdout)
TOKENIZER_SOURCES = (
    ("pretrain", "corpus"), ("tofu", "full"), ("tofu", "holdout10"),
    *((corpus, f"raw/{split}") for corpus in MUSE_CORPORA for split in ("forget", "retain1", "retain2", "holdout")),
)


def tokenizer_texts(data_root: Path) -> list[str]:
    """The tokenizer's training texts: each distinct text once, in file order.

    Every item enters exactly once whether it is later trained on or held out. Trained on every
    benchmark *file*, the tokenizer merged the forget authors' names (which recur in forget01,
    forget05, forget10, full, ...) into fewer tokens than the holdout authors' names, and
    membership inference told forget from holdout even for the oracle (AUC 0.03 instead of
    0.5); trained on the pretraining corpus alone, it split the authors' names into many pieces
    and the targets memorised far less (forget ROUGE-L 0.53 instead of 0.83 at size s).
    """
    texts: dict[str, None] = {}
    for benchmark, split in TOKENIZER_SOURCES:
        folder = Path(data_root) / benchmark
        if not (folder / f"{split}.json").is_file():
            continue
        for record in load_split(folder, split, fields=()):
            text = record.get("text") or QA_PROMPT.format(question=record["question"]) + " " + record["answer"]
            texts.setdefault(text)
    return list(texts)


def ensure_tokenizer(data_root: Path, out_dir: Path, vocab_size: int = 2048):
    """Train the tokenizer once (its own folder) on `tokenizer_texts`; reuse it while they are
    unchanged."""
    texts = tokenizer_texts(data_root)
    key = content_key(vocab_size=vocab_size, texts=texts, code=code_key(train_tokenizer))
    stamp = Path(out_dir) / "key.txt"
    if stamp.is_file() and stamp.read_text().strip() == key:
        return load_tokenizer(out_dir)
    stamp.unlink(missing_ok=True)  # an interrupted retraining must not leave the old key beside new files
    tokenizer = train_tokenizer(texts, vocab_size, Path(out_dir))
    stamp.write_text(key + "\n")
    return tokenizer


@dataclass(frozen=True)
class Job:
    """One model to learn: `name` is its folder under the models root (e.g. 'tofu/target-s').

    `data` lists (benchmark, split, kind) with kind 'qa' (question-answer, prompt masked), 'qa-doc'
    (QA documents cut into their pairs, prompt masked) or
    'text' (every token a label); `parent` names the model it is fine-tuned from (None:
    trained from scratch); `gates` names the benchmark whose quality gates judge it
    ('pretrain' for base models).
    """

    name: str
    size: str
    data: tuple[tuple[str, str, str], ...]
    config: TrainConfig
    parent: str | None
    gates: str
    base: str | None = None      # a checkpoint outside the plan to start from (the real model), with its tokenizer
    threads: int = JOB_THREADS   # torch threads of this job (part of its key)


def _check_types(options: dict) -> None:
    """The learning plan's top-level values have their types (one-line errors, nothing trained)."""
    for key in ("sizes", "oracles", "main_oracles", "muse"):
        if key in options and not (isinstance(options[key], list) and all(isinstance(v, str) for v in options[key])):
            raise ValueError(f"learn config: {key} must be a list of names, got {options[key]!r}")
    if "main_size" in options and not isinstance(options["main_size"], str):
        raise ValueError(f"learn config: main_size must be a size name, got {options['main_size']!r}")
    for key, least in (("seed", 0), ("vocab_size", 64)):
        value = options.get(key, least)
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"learn config: {key} must be an integer >= {least}, got {value!r}")


def _stage_options(stage: str, options) -> dict:
    """A learning stage's settings: known `TrainConfig` fields with numbers (lr may map sizes to numbers)."""
    if not isinstance(options, dict):
        raise ValueError(f"learn config: {stage} must be a mapping of settings, got {options!r}")
    fields = {f.name: f.type for f in dataclasses.fields(TrainConfig)}
    for key, value in options.items():
        if key not in fields:
            raise ValueError(f"learn config: {stage}: unknown setting {key!r}; allowed: {', '.join(fields)}")
        numbers = value.values() if key == "lr" and isinstance(value, dict) else [value]
        for number in numbers:
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                raise ValueError(f"learn config: {stage}.{key} must be a finite number, got {value!r}")
            if fields[key] == "int" and number != int(number):
                raise ValueError(f"learn config: {stage}.{key} must be an integer, got {value!r}")
    return options


@dataclass(frozen=True)
class LearnPlan:
    """What to learn for a profile (the YAML file `notebooks/profiles/<profile>/learn.yaml`)."""

    sizes: tuple[str, ...] = ("xs",)
    main_size: str = "xs"
    pretrain: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=8, lr=3e-3, batch_size=32))
    finetune: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=10, lr=2e-3, batch_size=32))
    # MUSE targets must memorise long news and book texts (VerbMem), as the real ones do after
    # many epochs; None: the same recipe as `finetune`
    muse_finetune: TrainConfig | None = None
    oracles: tuple[str, ...] = ("retain90",)
    main_oracles: tuple[str, ...] = ("retain95", "retain99")
    muse: tuple[str, ...] = MUSE_CORPORA
    vocab_size: int = 2048
    # per-size learning rates of a stage ('pretrain', 'finetune', 'muse_finetune'), overriding its
    # `lr`: one rate does not suit an 18x span of widths (the largest sizes fit far worse at the rate
    # the smallest need; see `config_for`)
    lr_by_size: dict[str, dict[str, float]] = field(default_factory=dict)
    # the real pretrained model's TOFU target and oracles (`RealPlan`), or None
    real: "RealPlan | None" = None

    def __post_init__(self) -> None:
        for size in (*self.sizes, self.main_size):
            if size not in SIZES:
                raise ValueError(f"sizes: unknown size {size!r}; allowed: {', '.join(SIZES)}")
        if self.main_size not in self.sizes:
            raise ValueError(f"main_size {self.main_size!r} must be one of sizes {list(self.sizes)}")
        for split in (*self.oracles, *self.main_oracles):
            if split not in TOFU_ORACLES:
                raise ValueError(f"oracles: unknown split {split!r}; allowed: {', '.join(TOFU_ORACLES)}")
        for corpus in self.muse:
            if corpus not in MUSE_CORPORA:
                raise ValueError(f"muse: unknown corpus {corpus!r}; allowed: {', '.join(MUSE_CORPORA)}")
        for stage, rates in self.lr_by_size.items():
            if stage not in STAGES:
                raise ValueError(f"lr_by_size: unknown stage {stage!r}; allowed: {', '.join(STAGES)}")
            missing = [size for size in self.sizes if size not in rates]
            if missing:
                raise ValueError(f"{stage}.lr gives no rate for size {missing[0]!r}; it needs one for every size")

    def config_for(self, stage: str, size: str) -> TrainConfig:
        """The training config of a stage at a size: the stage's config with its per-size rate."""
        if stage == "muse_finetune" and self.muse_finetune is None:
            stage = "finetune"
        config, rates = getattr(self, stage), self.lr_by_size.get(stage)
        return replace(config, lr=rates[size]) if rates else config

    @classmethod
    def from_dict(cls, options: dict) -> "LearnPlan":
        known = {"sizes", "main_size", *STAGES, "oracles", "main_oracles", "muse", "vocab_size", "seed", "real"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"learn config: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(known))}")
        _check_types(options)
        seed = options.get("seed", 0)
        configs, lr_by_size = {}, {}
        for stage in (s for s in STAGES if s in options):
            stage_options = {"seed": seed, **_stage_options(stage, options[stage])}
            if isinstance(stage_options.get("lr"), dict):  # lr: {xs: 6e-3, s: 3e-3, ...}
                lr_by_size[stage] = {str(k): float(v) for k, v in stage_options["lr"].items()}
                stage_options["lr"] = min(lr_by_size[stage].values())  # a valid placeholder; config_for overrides it
            configs[stage] = TrainConfig(**stage_options)
        lists = {k: tuple(options[k]) for k in ("sizes", "oracles", "main_oracles", "muse") if k in options}
        scalars = {k: options[k] for k in ("main_size", "vocab_size") if k in options}
        real = RealPlan.from_dict(options["real"], seed) if options.get("real") else None
        return cls(**lists, **configs, **scalars, lr_by_size=lr_by_size, real=real)

    def jobs(self) -> list[Job]:
        """Every model of the plan, parents before children."""
        jobs = []
        for size in self.sizes:
            base = base_name(size)
            finetune = self.config_for("finetune", size)
            jobs.append(Job(base, size, (("pretrain", "corpus", "text"),), self.config_for("pretrain", size), None,
                            "pretrain"))
            tofu = get_benchmark("tofu")
            jobs.append(Job(tofu.target(size), size, (("tofu", "full", "qa"), REPLAY), finetune, base, "tofu"))
            oracles = self.oracles + (self.main_oracles if size == self.main_size else ())
            for split in oracles:
                jobs.append(Job(model_name("tofu", split, size), size, (("tofu", split, "qa"), REPLAY), finetune, base,
                                "tofu"))
            if size == self.main_size:
                muse_config = self.config_for("muse_finetune", size)
                for corpus in self.muse:
                    bench = get_benchmark(corpus)
                    retain = ((corpus, "raw/retain1", "text"), (corpus, "raw/retain2", "text"), REPLAY)
                    jobs.append(Job(bench.target(size), size, ((corpus, bench.forget, "text"), *retain), muse_config,
                                    base, corpus))
                    jobs.append(Job(bench.oracle(bench.forget, size), size, retain, muse_config, base, corpus))
        return jobs + (self.real.jobs() if self.real else [])


@dataclass(frozen=True)
class RealPlan:
    """The real pretrained model's part of the learning stage (`real:` in learn.yaml): its TOFU
    target, fine-tuned from `base` on every author of `benchmark`, and the retain-only oracles,
    each with `threads` torch threads (side by side with `learn(workers=2)`: on 2 cores a fine-tune
    of SmolLM2-135M with one thread took 4.3 s a step of 8 examples, with two 3.4 s, so two one-thread
    jobs side by side finish sooner than one after the other with two)."""

    base: str = "models/real/smollm2-135m"
    size: str = "135m"
    benchmark: str = "tofu-real"
    oracles: tuple[str, ...] = ("retain90",)
    # the recipe that gives the KS test signal on tofu-real (learn.yaml mini; measured in its comment)
    finetune: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=8, lr=1e-4, batch_size=8))
    threads: int = JOB_THREADS

    def __post_init__(self) -> None:
        for split in self.oracles:
            if split not in TOFU_ORACLES:
                raise ValueError(f"real.oracles: unknown split {split!r}; allowed: {', '.join(TOFU_ORACLES)}")
        if self.threads < 1:
            raise ValueError(f"real.threads must be >= 1, got {self.threads}")

    @classmethod
    def from_dict(cls, options: dict, seed: int = 0) -> "RealPlan":
        known = {"base", "size", "benchmark", "oracles", "finetune", "threads"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"learn config: real: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(known))}")
        if not isinstance(options, dict):
            raise ValueError(f"learn config: real must be a mapping, got {type(options).__name__}")
        values = {k: options[k] for k in ("base", "size", "benchmark", "threads") if k in options}
        if "oracles" in options:
            values["oracles"] = tuple(options["oracles"])
        if "finetune" in options:  # over the defaults of the real recipe, not TrainConfig's
            values["finetune"] = TrainConfig(**{**asdict(cls().finetune), "seed": seed,
                                                **_stage_options("real.finetune", options["finetune"])})
        return cls(**values)

    def jobs(self) -> list[Job]:
        name = lambda role: model_name(self.benchmark, role, self.size)  # noqa: E731
        common = dict(size=self.size, config=self.finetune, parent=None, gates=self.benchmark, base=self.base,
                      threads=self.threads)
        return [Job(name("target"), data=((self.benchmark, "full", "qa"),), **common),
                *(Job(name(split), data=((self.benchmark, split, "qa"),), **common) for split in self.oracles)]


def job_key(job: Job, data_root: Path, tokenizer_dir: Path, parent_key: str | None) -> str:
    """Hash of everything that determines a learned model (training code included)."""
    if job.base is not None:  # a real checkpoint: its weights and its own tokenizer
        parent_key, tokenizer_dir = weights_hash(job.base), Path(job.base)
    return content_key(
        data=[file_hash(Path(data_root) / benchmark / f"{split}.json") + kind for benchmark, split, kind in job.data],
        size=job.size, config=asdict(job.config), parent=parent_key,
        tokenizer=file_hash(Path(tokenizer_dir) / "tokenizer.json"), threads=job.threads,
        code=code_key(build_model, train_causal_lm, encode_job_data))


def gates_key_of(job: Job, key: str) -> str:
    """The model's key and the code of its gates: a change of either re-measures them."""
    return content_key(model=key, gates=gates_version(job.gates))


def encode_job_data(job: Job, data_root: Path, tokenizer) -> list:
    """Tokenised training examples of a job, in file order (the trainer shuffles)."""
    examples = []
    for benchmark, split, kind in job.data:
        records = load_split(Path(data_root) / benchmark, split, KIND_FIELDS[kind])
        if kind == "qa":
            examples += encode_qa_split(tokenizer, records)
        elif kind == "qa-doc":
            examples += encode_qa_split(tokenizer, [pair for r in records for pair in qa_pairs(r["text"])])
        else:
            examples += [encode_text(tokenizer, r["text"]) for r in records]
    return examples


def qa_pairs(document: str) -> list[dict]:
    """The question-answer pairs of a QA document ('Question: ...\\nAnswer: ...' blocks)."""
    pairs = []
    for block in document.split("\n\n"):
        match = re.fullmatch(r"Question: (.+)\nAnswer: (.+)", block.strip())
        if match is None:
            raise ValueError(f"not a question-answer block: {block[:80]!r}")
        pairs.append({"question": match.group(1), "answer": match.group(2)})
    return pairs


def stored_key(folder: Path) -> str | None:
    """The key recorded in `folder/learning.json`, or None when there is no finished model."""
    info = Path(folder) / "learning.json"
    return json.loads(info.read_text()).get("key") if info.is_file() else None


@contextmanager
def torch_threads(count: int):
    """Run a block with `count` torch intra-op threads, then restore the previous count."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def train_job(job: Job, key: str, gates_key: str, data_root: Path, out_root: Path) -> float:
    """Train one job from its parent, from a real `base` checkpoint or from scratch, and measure
    its gates, both with the job's torch threads; save it (with the base's own tokenizer, if
    any) and its `learning.json`; returns the training seconds."""
    tokenizer = load_tokenizer(job.base if job.base else out_root / "tokenizer")
    with torch_threads(job.threads):
        start = time.perf_counter()
        if job.base:
            model = load_model(job.base)
        else:
            model = load_model(out_root / job.parent) if job.parent else build_model(job.size, tokenizer, seed=job.config.seed)
        examples = encode_job_data(job, data_root, tokenizer)
        losses = train_causal_lm(model, examples, job.config, tokenizer.pad_token_id)
        seconds = time.perf_counter() - start
        gates = run_gates(job.gates, model, tokenizer, data_root)
    shape = size_info(model, job.size) if job.size in SIZES else {"size": job.size, "parameters": count_parameters(model)}
    info = {"key": key, "gates_key": gates_key, "name": job.name, "parent": job.parent, "base": job.base,
            "data": [list(d) for d in job.data], "examples": len(examples), "train": asdict(job.config),
            "threads": job.threads, "epoch_losses": losses, "train_seconds": round(seconds, 1), "gates": gates,
            **shape}
    save_model(model, out_root / job.name, info, also=(lambda path: copy_tokenizer_files(job.base, path)) if job.base else None,
               keep=("metrics",))
    return seconds


def _train_in_worker(job: Job, key: str, gates_key: str, data_root: Path, out_root: Path) -> float:
    os.environ["UNLEARNING_PROGRESS"] = "0"  # bars of parallel workers would interleave
    configure_process()  # a spawned worker is an entry point of its own
    return train_job(job, key, gates_key, data_root, out_root)


def _longest_first(job: Job) -> tuple:
    """Start order among ready jobs: base models first, larger sizes first (they are the long
    chains), then plan order."""
    return (job.parent is not None, -list(SIZES).index(job.size) if job.size in SIZES else 0)


def _ignore_interrupt() -> None:
    """Worker initializer: Ctrl-C reaches the whole process group, but only the parent decides."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _train_parallel(stale: list[tuple[Job, str, str]], data_root: Path, out_root: Path, workers: int, log) -> None:
    """Train `stale` jobs in `workers` processes; a job starts once its parent is trained.
    Spawned (not forked) workers, so no thread pool is inherited.

    On Ctrl-C (or any error) the workers are terminated rather than awaited: a pool's usual
    `shutdown(wait=True)` can hang on workers that a signal killed mid-message."""
    pending = {job.name: (job, key, gates_key) for job, key, gates_key in stale}
    running: dict = {}
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_ignore_interrupt)
    try:
        while pending or running:
            busy = {job.name for job, *_ in pending.values()} | set(running.values())
            ready = sorted((entry for entry in pending.values() if entry[0].parent not in busy),
                           key=lambda entry: _longest_first(entry[0]))
            for job, key, gates_key in ready[:workers - len(running)]:
                del pending[job.name]
                running[pool.submit(_train_in_worker, job, key, gates_key, data_root, out_root)] = job.name
                log(f"learning {job.name} ...")
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                name = running.pop(future)
                log(f"learned {name} in {future.result():.0f} s")
    except BaseException:
        _terminate(pool)
        raise
    pool.shutdown()


def _terminate(pool) -> None:
    """Stop a process pool now: cancel what has not started, kill what runs, reap the workers."""
    workers = list((pool._processes or {}).values())  # noqa: SLF001 - the pool offers no public handle
    pool.shutdown(wait=False, cancel_futures=True)
    for process in workers:
        process.terminate()
    for process in workers:
        process.join(timeout=10)


def _in_part(job: Job, part: str) -> bool:
    return part == "all" or (part == "real") == (job.base is not None)


def learn(plan: LearnPlan, data_root: Path, out_root: Path, log=print, workers: int = 1, part: str = "all") -> dict:
    """Learn every model of `plan` (of its `part`: the laboratory's, the real checkpoint's fine-tunes, or both;
    the two parts share nothing, so `make` runs them side by side) that is missing or stale; returns
    the manifest.

    The manifest maps each model name to its folder, key, parameter count, training seconds
    and quality gates; it is what notebooks read to find models. With `workers` > 1, models
    whose parents are ready train side by side in that many processes. Every job trains with
    its own thread count (`JOB_THREADS` unless the plan says otherwise) whatever `workers` is,
    so the weights are the same as with one worker (a test checks it).
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1; got {workers}")
    if part not in LEARN_PARTS:
        raise ValueError(f"part must be one of {', '.join(LEARN_PARTS)}; got {part!r}")
    data_root, out_root = Path(data_root), Path(out_root)
    tokenizer_dir = out_root / "tokenizer"
    selected = [job for job in plan.jobs() if _in_part(job, part)]
    tokenizer = None
    if any(job.base is None for job in selected):
        tokenizer = ensure_tokenizer(data_root, tokenizer_dir, plan.vocab_size)
    keys: dict[str, str] = {}
    jobs = []
    for job in selected:
        keys[job.name] = job_key(job, data_root, tokenizer_dir, keys.get(job.parent))
        jobs.append((job, keys[job.name], gates_key_of(job, keys[job.name])))
    stale = [entry for entry in jobs if stored_key(out_root / entry[0].name) != entry[1]]
    stale_names = {job.name for job, *_ in stale}
    for job, *_ in jobs:
        if job.name not in stale_names:
            log(f"up to date: {job.name}")
    for group in ([e for e in stale if e[0].base is None], [e for e in stale if e[0].base is not None]):
        if workers > 1 and len(group) > 1:
            _train_parallel(group, data_root, out_root, workers, log)
        else:
            for job, key, gates_key in group:
                log(f"learned {job.name} in {train_job(job, key, gates_key, data_root, out_root):.0f} s")
    manifest: dict[str, dict] = {}
    for job, key, gates_key in jobs:
        folder = out_root / job.name
        info = json.loads((folder / "learning.json").read_text())
        if info.get("gates_key") != gates_key:  # the gate code changed: re-measure, do not retrain
            with torch_threads(job.threads):
                job_tokenizer = load_tokenizer(job.base) if job.base else tokenizer
                gates = run_gates(job.gates, load_model(folder), job_tokenizer, data_root)
            info.update(gates=gates, gates_key=gates_key)
            write_json(folder / "learning.json", info)
            log(f"re-measured the gates of {job.name}")
        manifest[job.name] = {"path": str(folder), "key": key, "size": job.size, "parameters": info["parameters"],
                              "train_seconds": info["train_seconds"], "gates": info["gates"]}
    return manifest
