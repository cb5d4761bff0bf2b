"""The `laboratory` command: world, rwku-real, learn (the CPU world and its models).

    laboratory world --profile smoke --out data
    laboratory rwku-real --profile smoke --model models/real/smollm2-135m --out data   # committed data
    laboratory learn --config notebooks/profiles/smoke/learn.yaml --data data/smoke --out models/smoke

It fails and stops as every command of the project does (`unlearning.cli.run_command`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from unlearning.choices import LEARN_PARTS
from unlearning.cli import command_parser, output_folder, run_command

# Imports inside functions: `laboratory --help` answers without importing torch; each command imports
# what it needs when it runs.


def _add_world(sub) -> None:
    p = sub.add_parser("world", help="generate the laboratory world (benchmarks in the real schemas)")
    p.add_argument("--profile", default="mini", help="world size: smoke or mini (default mini)")
    p.add_argument("--out", default="data", type=Path, help="root folder; writes OUT/PROFILE/<benchmark>/<split>.json")


def _add_rwku_real(sub) -> None:
    p = sub.add_parser("rwku-real", help="build RWKU on a real model: probes it answers, a corpus it writes (once; "
                                         "the result is committed with the data)")
    p.add_argument("--profile", default="mini", help="size: smoke or mini (default mini)")
    p.add_argument("--model", type=Path, default=Path("models/real/smollm2-135m"),
                   help="the original model, a local folder with its tokenizer (default models/real/smollm2-135m)")
    p.add_argument("--out", default="data", type=Path, help="root folder; writes OUT/PROFILE/rwku-real/<split>.json")


def _add_learn(sub) -> None:
    p = sub.add_parser("learn", help="train the tokenizer, base models, targets and oracles (hash-cached)")
    p.add_argument("--config", type=Path, help="YAML learning plan (sizes, main_size, pretrain, finetune, oracles, "
                                               "main_oracles, muse, vocab_size, seed); see notebooks/profiles/*/learn.yaml")
    p.add_argument("--data", type=Path, required=True, help="rendered world of one profile, e.g. data/mini")
    p.add_argument("--out", type=Path, required=True, help="models folder, e.g. models/mini")
    p.add_argument("--sizes", nargs="+", help="model sizes to train (xs s m l); overrides the config")
    p.add_argument("--seed", type=int, help="training seed; overrides the config")
    p.add_argument("--part", choices=LEARN_PARTS, default="all",
                   help="the laboratory's models (lab), the real checkpoint's fine-tunes (real), or both (all, the "
                        "default); a part writes manifest.<part>.json, all writes manifest.json")
    p.add_argument("--jobs", type=int, default=1,
                   help="models trained side by side (default 1); every model trains with one torch thread "
                        "whatever this is, so the weights do not depend on it")


def parser() -> argparse.ArgumentParser:
    return command_parser("laboratory", __doc__, (_add_world, _add_rwku_real, _add_learn))


def cmd_world(args) -> None:
    from laboratory.world import generate

    counts = generate(args.profile, output_folder("--out", args.out))
    print(f"wrote {len(counts)} splits under {args.out / args.profile}")


def cmd_rwku_real(args) -> None:
    from unlearning.data import write_jsonl
    from unlearning.models import load_model, load_tokenizer
    from laboratory.world import rwku_real

    if args.profile not in rwku_real.SIZES:
        raise ValueError(f"--profile must be one of {', '.join(rwku_real.SIZES)}; got {args.profile!r}")
    if not (args.model / "config.json").is_file():
        raise FileNotFoundError(f"--model: no model at {args.model} (run `make real-model`)")
    splits = rwku_real.build(load_model(args.model), load_tokenizer(args.model), rwku_real.SIZES[args.profile])
    folder = args.out / args.profile / "rwku-real"
    for split, records in splits.items():
        write_jsonl(folder / f"{split}.json", records)
    print(f"wrote {len(splits)} splits under {folder}: " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))


def cmd_learn(args) -> None:
    from laboratory.learning import LearnPlan, learn
    from unlearning.records import read_yaml_mapping, write_if_changed

    if args.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {args.jobs}")
    options = {}
    if args.config:
        if not args.config.is_file():
            raise ValueError(f"--config: file not found: {args.config}")
        options = read_yaml_mapping(args.config)
    if args.sizes:
        options["sizes"] = args.sizes
        options.setdefault("main_size", args.sizes[0])
        if options["main_size"] not in args.sizes:
            options["main_size"] = args.sizes[0]
    if args.seed is not None:
        options["seed"] = args.seed
    plan = LearnPlan.from_dict(options)
    if not (args.data / "pretrain").is_dir():
        raise ValueError(f"--data: no pretrain folder under {args.data}; run `laboratory world` first")
    manifest = learn(plan, args.data, args.out, log=lambda message: print(message, flush=True), workers=args.jobs,
                     part=args.part)
    write_if_changed(args.out / ("manifest.json" if args.part == "all" else f"manifest.{args.part}.json"), manifest)
    print(f"{len(manifest)} models up to date under {args.out}")


COMMANDS = {"world": cmd_world, "rwku-real": cmd_rwku_real, "learn": cmd_learn}


def main(argv: list[str] | None = None) -> int:
    """The `laboratory` command (`unlearning.cli.run_command`)."""
    return run_command("laboratory", lambda: parser(), COMMANDS, argv)


if __name__ == "__main__":
    sys.exit(main())
