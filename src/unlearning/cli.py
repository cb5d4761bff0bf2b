"""The `unlearning` command: unlearn, evaluate, fetch. The laboratory's commands are `laboratory
world`, `laboratory rwku-real` and `laboratory learn`; the book's `experiments claims`, `experiments
execute` and `experiments check`; the classroom's `classroom assignments` and `classroom grade`.
All of them run through `run_command` below, so they fail and stop alike.

    unlearning fetch --config notebooks/profiles/paper/fetch.yaml --out .   # paper scale, needs network
    unlearning unlearn --benchmark tofu-smoke --model models/smoke/tofu/target-xs --method MASC
    unlearning unlearn --recipe masc/tofu --benchmark tofu-smoke --model models/smoke/tofu/target-xs
    unlearning evaluate --benchmark tofu-smoke --model models/smoke/tofu/target-xs

Every input is checked before work starts: a wrong value exits with status 2 and one line
naming the parameter and what is allowed, and nothing is written. An unlearning run whose loss
or gradient turns NaN or infinite stops at that step and exits with status 3.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from unlearning.choices import DEVICES, DTYPES, PROBE_SETS, RULES

# Imports inside functions: building the parser imports no torch or transformers (`unlearning --help`
# answers at once): the choices come from `unlearning.choices`, defaults that the library computes are
# None here and filled in by the command, and every command imports what it needs inside its function.


def _add_unlearn(sub) -> None:
    p = sub.add_parser("unlearn", help="run one unlearning method on a benchmark, under a paper's recipe or the book's "
                                       "protocol; stores the model and record.json in the run store")
    p.add_argument("--recipe", default="book/protocol",
                   help="a recipe, e.g. masc/tofu, openunlearning/tofu, sago/wmdp-bio (a wrong name lists them): its "
                        "optimiser, schedule, budget, LoRA, stop and settings; every flag given below overrides it "
                        "(default: book/protocol, the book's protocol for every method)")
    p.add_argument("--scale", default="paper", help="with --recipe: paper (the recipe's own numbers, default) or "
                                                    "laboratory (the book's scaling rule, unlearning.recipes)")
    p.add_argument("--benchmark",
                   help="a registered benchmark (tofu, muse-news, muse-books, wmdp, rwku, ...; a wrong name lists "
                        "them), optionally with a profile suffix such as tofu-mini (data from data/mini/tofu, runs "
                        "stored in runs/mini); default: the recipe's, else tofu")
    p.add_argument("--data", type=Path, help="the benchmark's folder (default data/<profile>/<benchmark> for a "
                                             "suffixed --benchmark)")
    p.add_argument("--model", required=True, type=Path, help="model folder to unlearn from")
    p.add_argument("--tokenizer", type=Path, help="tokenizer folder (default: the model's own, else the model "
                                                  "folder's ../tokenizer, then ../../tokenizer)")
    p.add_argument("--method", help="a registered method: GA, GradDiff, NPO, NPO+KLR, SimNPO, RMU, MASC, ... (a wrong "
                                    "name lists them all); with --recipe, the run of the recipe (default: its only run)")
    p.add_argument("--rule", help=f"update rule, one of {', '.join(RULES)} (default: the recipe's, else sum)")
    p.add_argument("--split", help="forget split (default: the benchmark's, e.g. forget10); join files with +")
    p.add_argument("--retain-split", help="retain split (default: the benchmark's, e.g. retain90)")
    _add_changes(p)
    p.add_argument("--store", type=Path, help="run store (default runs/<profile> for a suffixed --benchmark, else runs)")
    _add_runtime(p)


def _add_changes(p) -> None:
    """The flags that change the recipe's run (`recipes.Changes`)."""
    p.add_argument("--stop", help="fixed or violation (default: the method's own; violation for MASC)")
    p.add_argument("--tolerance", type=float, help="violation-rule tolerance (default: the book's protocol, 0.475)")
    p.add_argument("--probe-set", help=f"violation-rule probes: {' or '.join(PROBE_SETS)} "
                                                            "(default official: first forget sequences)")
    p.add_argument("--epochs", type=float, help="budget in passes over the forget split (a self-stopping run's cap; "
                                                "default: the recipe's)")
    p.add_argument("--max-steps", type=int, help="step budget: replaces --epochs for a fixed stop; the cap of the "
                                                 "violation rule (default: the book's protocol)")
    p.add_argument("--lr", type=float, help="learning rate (default: the book's protocol)")
    p.add_argument("--batch-size", type=int, help="the global batch: forget and retain examples per optimizer step, "
                                                  "split into --grad-accum micro-batches on each process (default: "
                                                  "the recipe's)")
    p.add_argument("--grad-accum", type=int, help="micro-batches per optimizer step (default 1)")
    p.add_argument("--optimizer", help="adamw (default, the papers') or sgd (updates proportional to the combined "
                                       "gradient)")
    p.add_argument("--lora-rank", type=int, help="train LoRA adapters of this rank instead of all weights")
    p.add_argument("--set", nargs="*", default=[], metavar="NAME=VALUE", help="method hyper-parameters, e.g. rho=0.7 k=10")
    p.add_argument("--seed", type=int, help="random seed (default: the book's protocol, 0)")


def _add_runtime(p) -> None:
    p.add_argument("--device", default="auto", help=f"one of {', '.join(DEVICES)} (default auto: a GPU when there is one)")
    p.add_argument("--dtype", default="float32", help=f"one of {', '.join(DTYPES)} (default float32)")


def _add_evaluate(sub) -> None:
    p = sub.add_parser("evaluate", help="run a benchmark's metric suite on a model; prints and caches the metrics JSON")
    p.add_argument("--benchmark", required=True, help="a registered benchmark with a metric suite (a wrong name lists "
                                                      "them), optionally with a profile suffix such as tofu-mini")
    p.add_argument("--data", type=Path, help="the benchmark's folder (default data/<profile>/<benchmark>)")
    p.add_argument("--model", required=True, type=Path, help="model folder to evaluate")
    p.add_argument("--tokenizer", type=Path, help="tokenizer folder (default: found beside the model)")
    p.add_argument("--oracle", type=Path, help="retain-only model folder: adds forget quality and PrivLeak")
    p.add_argument("--split", help="forget split where a benchmark has several (TOFU: forget01, forget05, forget10; "
                                    "default forget10)")
    _add_runtime(p)


def _add_fetch(sub) -> None:
    p = sub.add_parser("fetch", help="download paper-scale datasets and checkpoints into data/<profile>, models/<profile>")
    p.add_argument("--config", type=Path, default=Path("notebooks/profiles/paper/fetch.yaml"),
                   help="fetch plan (default notebooks/profiles/paper/fetch.yaml)")
    p.add_argument("--out", type=Path, default=Path("."), help="root folder (default .)")
    p.add_argument("--mirror", type=Path, help="local copies of hub datasets in the hub's layout (offline)")


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a wrong option is one line (`-h` shows the usage) and exits with status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} -h)\n")


def command_parser(prog: str, doc: str, adders: tuple[Callable, ...]) -> argparse.ArgumentParser:
    """The parser of a project command: its first paragraph of `doc` as the description, one
    subcommand added by each of `adders`."""
    top = OneLineParser(prog=prog, description=doc.split("\n\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    for add in adders:
        add(sub)
    return top


def parser() -> argparse.ArgumentParser:
    return command_parser("unlearning", __doc__, (_add_unlearn, _add_evaluate, _add_fetch))


def _parse_sets(pairs: list[str]) -> dict:
    import yaml

    values = {}
    for pair in pairs:
        if "=" not in pair:
            raise ValueError(f"--set: expected NAME=VALUE, got {pair!r}")
        name, raw = pair.split("=", 1)
        values[name] = yaml.safe_load(raw)
    return values


def _benchmark_and_profile(name: str) -> tuple[str, str | None]:
    """'tofu' -> ('tofu', None); 'tofu-mini' -> ('tofu', 'mini'): a registered benchmark name,
    then optionally '-' and the profile whose data/ and runs/ folders to use."""
    from unlearning.benchmarks import REGISTRY, get_benchmark

    if name in REGISTRY:
        return name, None
    for known in sorted(REGISTRY, key=len, reverse=True):
        if name.startswith(known + "-"):
            return known, name[len(known) + 1:]
    get_benchmark(name)  # raises with the list of names
    raise AssertionError("unreachable")


def _benchmark_and_data(benchmark: str, data: Path | None) -> tuple[str, Path, str | None]:
    """(registered benchmark, its data folder, the profile of a suffixed name such as tofu-mini)."""
    name, profile = _benchmark_and_profile(benchmark)
    data = data or (Path("data") / profile / name if profile else None)
    if data is None:
        raise ValueError(f"--data is required for --benchmark {benchmark} (or add a profile suffix such as "
                         f"{name}-mini)")
    if not Path(data).is_dir():
        raise ValueError(f"--data: folder not found: {data}")
    return name, Path(data), profile


def _tokenizer_for(model: Path) -> Path:
    from unlearning.models import has_tokenizer

    if has_tokenizer(model):
        return model
    for candidate in (model.parent / "tokenizer", model.parent.parent / "tokenizer"):
        if candidate.is_dir():
            return candidate
    raise ValueError(f"--tokenizer: none given and no tokenizer folder beside {model}")


def _recipe_run_name(recipe, method: str | None, rule: str | None) -> str:
    """The recipe's run of `--method` (and `--rule`, for recipes with a run per rule)."""
    if method is None:
        if len(recipe.runs) != 1:
            raise ValueError(f"--method: recipe {recipe.name} has several runs; choose one of {', '.join(recipe.runs)}")
        return next(iter(recipe.runs))
    for name in (f"{method}/{rule}" if rule else None, method, f"{method}/sum" if rule in (None, "sum") else None):
        if name in recipe.runs:
            return name
    raise ValueError(f"--method/--rule: recipe {recipe.name} has no run {method}{'/' + rule if rule else ''}; it has "
                     f"{', '.join(recipe.runs)}")


def _recipe_run(args, recipe):
    """The recipe's run the arguments name: the book's protocol's run of `--method` (by its
    stopping kind), or the recipe's run of `--method` and `--rule`."""
    from unlearning.recipes import PROTOCOL, protocol_run

    if recipe.name != PROTOCOL:
        return recipe.run(_recipe_run_name(recipe, args.method, args.rule))
    if args.method is None:
        raise ValueError("--method is required (or give --recipe)")
    return protocol_run(args.method, args.stop)


def _changes(args, processes: int):
    """The flags given, as the changes of the one spec builder (`recipes.build_spec`), checked
    there (a wrong value names its flag)."""
    from unlearning.recipes import Changes, InvalidChange

    try:
        return Changes(lr=args.lr, batch_size=args.batch_size, grad_accum=args.grad_accum or 1, processes=processes,
                       epochs=args.epochs, max_steps=args.max_steps, optimizer=args.optimizer, rule=args.rule,
                       stop=args.stop, tolerance=args.tolerance, hparams=_parse_sets(args.set), seed=args.seed,
                       probe_set=args.probe_set, lora_rank=args.lora_rank, forget_split=args.split,
                       retain_split=args.retain_split)
    except InvalidChange as error:
        raise ValueError(error.named("--" + error.name.replace("_", "-"))) from None


def _unlearn_spec(args, recipe, benchmark: str, data: Path, tokenizer: Path | None, processes: int = 1):
    """The run of the command line's arguments: the recipe's run (the book's protocol by default)
    at the paper's numbers or the laboratory's rule, every flag given changing it; every value
    checked. A recipe's packed corpus is counted in blocks of `tokenizer`."""
    from unlearning.benchmarks import get_benchmark
    from unlearning.recipes import PAPER_SCALE, build_spec, laboratory_scale, learned_rate, scaled
    from unlearning.runs import training_units

    changes = _changes(args, processes)
    bench = get_benchmark(benchmark)  # the recipe's, or one of the same schema (tofu-real for masc/tofu)
    bench.require_unlearning()
    run = _recipe_run(args, recipe)
    forget_records = bench.load(data, args.split or bench.forget)
    retain_records = bench.load(data, args.retain_split or bench.retain)  # a broken split fails here, not mid-run
    scale = PAPER_SCALE
    if args.scale == "laboratory":
        scale = laboratory_scale(recipe, model_lr=learned_rate(args.model), forget_size=len(forget_records))
    packing = (scaled(run, scale).packing or {}).get("block_length")
    n_forget = training_units(tokenizer, forget_records, bench.kind, packing)
    n_retain = training_units(tokenizer, retain_records, bench.kind, packing)
    spec = build_spec(run, benchmark, args.model, scale, n_forget=n_forget, n_retain=n_retain,
                      changes=changes).resolved()
    if spec.stop.kind == "violation" and spec.probe_set == "holdout" and spec.stop.confirm_size >= n_forget:
        raise ValueError(f"--probe-set holdout: a held-out probe set of {spec.stop.confirm_size} leaves no forget "
                         f"example to train on ({n_forget} in {spec.forget_split})")
    return spec


def output_folder(flag: str, path: Path) -> Path:
    """A folder to write into: it may not exist yet, but must not be a file (nor lie under one)."""
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise ValueError(f"{flag}: not a folder: {part}")
            break
    return path


def _model_and_tokenizer(args) -> Path:
    """The model folder (checked: loadable, complete, fits its tokenizer) and its tokenizer folder."""
    from unlearning.models import check_model

    if not args.model.is_dir():
        raise ValueError(f"--model: folder not found: {args.model}")
    tokenizer = args.tokenizer or _tokenizer_for(args.model)
    if not Path(tokenizer).is_dir():
        raise ValueError(f"--tokenizer: folder not found: {tokenizer}")
    check_model(args.model, tokenizer)
    return Path(tokenizer)


def cmd_unlearn(args) -> int:
    from unlearning.benchmarks import DEFAULT
    from unlearning.recipes import PROTOCOL
    from unlearning.recipes import load as load_recipe
    from unlearning.runs import run
    from unlearning.runtime import Runtime

    runtime = Runtime(args.device, args.dtype)
    recipe = load_recipe(args.recipe)  # the recipe, its run and the scale checked before anything is read
    if recipe.name != PROTOCOL:
        _recipe_run_name(recipe, args.method, args.rule)
    if args.scale not in ("paper", "laboratory"):
        raise ValueError(f"--scale must be paper or laboratory; got {args.scale!r}")
    benchmark, data, profile = _benchmark_and_data(args.benchmark or recipe.benchmark or DEFAULT, args.data)
    if recipe.name == PROTOCOL:  # every value checked first, then the files; nothing is written before both
        spec = _unlearn_spec(args, recipe, benchmark, data, None, runtime.processes)
        tokenizer = _model_and_tokenizer(args)
    else:  # a recipe's packed corpus is counted in blocks of the model's tokenizer
        tokenizer = _model_and_tokenizer(args)
        spec = _unlearn_spec(args, recipe, benchmark, data, tokenizer, runtime.processes)
    store = output_folder("--store", args.store or (Path("runs") / profile if profile else Path("runs")))
    say = (lambda message: print(message, flush=True)) if runtime.is_main else (lambda message: None)
    record = run(spec, data, tokenizer, store, log=say, runtime=runtime)
    if record.get("diverged"):
        return 3  # run() has said where and why; the store keeps the diverged record, no model
    say(f"{spec.method} ({spec.rule}) on {benchmark}: {record['steps']} steps, stopped={record['stopped']}, "
        f"forget p={record['forget_probability']:.3f}, retain p={record['retain_probability']:.3f} -> {record['dir']}")


def cmd_evaluate(args) -> None:
    from unlearning.evaluate import evaluate
    from unlearning.benchmarks import eval_config
    from unlearning.models import check_model
    from unlearning.runtime import Runtime

    runtime = Runtime(args.device, args.dtype)
    benchmark, data, _ = _benchmark_and_data(args.benchmark, args.data)
    tokenizer = _model_and_tokenizer(args)
    config = eval_config(benchmark, args.split)
    oracle = None
    if args.oracle is not None:
        if not args.oracle.is_dir():
            raise ValueError(f"--oracle: folder not found: {args.oracle}")
        check_model(args.oracle, tokenizer)
        oracle = evaluate(benchmark, args.oracle, data, tokenizer, config=config, runtime=runtime)
    metrics = evaluate(benchmark, args.model, data, tokenizer, config=config, oracle=oracle,
                       log=lambda message: print(message, flush=True), runtime=runtime)
    for name, value in metrics.items():
        if not isinstance(value, (list, dict)):  # per-item scores stay in the stored evaluation
            print(f"{name:32s} {value:.4f}" if isinstance(value, float) else f"{name:32s} {value}")


def cmd_fetch(args) -> None:
    from unlearning.fetch import fetch, read_plan

    if not args.config.is_file():
        raise ValueError(f"--config: file not found: {args.config}")
    written = fetch(read_plan(args.config), args.out, mirror=args.mirror, log=lambda m: print(m, flush=True))
    print(f"fetched {len(written)} items (everything else was already there)")


COMMANDS = {"unlearn": cmd_unlearn, "evaluate": cmd_evaluate, "fetch": cmd_fetch}
INTERRUPTED = "interrupted; finished work is kept, run the command again to complete it"


def run_command(prog: str, parse: Callable[[], argparse.ArgumentParser], commands: dict,
                argv: list[str] | None = None, without_torch: frozenset = frozenset()) -> int:
    """Run the command `argv` names (parsed by `parse()`); its status: 0 done, 2 a user's mistake
    (one line), 3 a diverged run, 130 interrupted. Ctrl-C ends any command with one line at any
    moment after this function starts, the imports of torch and transformers included (they happen
    in here, never before); commands in `without_torch` run no model and skip them."""
    command = None
    try:
        try:
            args = parse().parse_args(argv)
        except SystemExit as done:  # -h, or a malformed command line (one line on stderr)
            return done.code or 0
        command = args.command
        from unlearning.failpoints import reached

        reached("cli:importing")  # where a test interrupts the command before its heavy imports
        if command not in without_torch:
            from unlearning.runtime import configure_process

            configure_process()
        return commands[command](args) or 0
    except KeyboardInterrupt:  # Ctrl-C: every finished piece is stored; the rest is redone by a rerun
        print(f"{prog}{' ' + command if command else ''}: {INTERRUPTED}", file=sys.stderr)
        return 130
    except (ValueError, OSError) as error:  # a user's mistake (or a file system's refusal): one line
        message = str(error).replace("\n", " ")
        print(f"{prog} {command}: error: {message}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    """The `unlearning` command (`run_command`)."""
    return run_command("unlearning", lambda: parser(), COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(main())
