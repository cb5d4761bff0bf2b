"""Run time of every method on tofu-mini forget10, measured side by side in one process.

MASC's efficiency claim (arXiv 2606.02920, Figure 1) is a ratio: its self-stopped run against
the baselines' fixed epoch budgets. This harness runs each method once from the same target
with the same batch size and learning-rate schedule, and prints steps, wall seconds (training
and probing), whether the run stopped by itself, and each method's time relative to MASC.

    .venv/bin/python benchmarks/unlearning_speed.py --models models/mini --size s --epochs 5

Numbers depend on the machine; only the ratios within one run are meant to be compared.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from unlearning.benchmarks import get_benchmark
from unlearning.protocol import Protocol
from unlearning.runs import execute
from unlearning.runtime import configure_process

BASELINES = ("GA", "GradDiff", "NPO", "NPO+KLR", "SimNPO", "RMU", "IdkNLL")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=Path("models/mini"))
    parser.add_argument("--data", type=Path, default=Path("data/mini/tofu"))
    parser.add_argument("--size", default="s", help="model size (default s, the mini main size)")
    parser.add_argument("--split", default="forget10")
    book = Protocol()  # the book's shared settings, so the harness measures chapter 6's runs
    parser.add_argument("--epochs", type=float, default=book.epochs, help="baselines' budget in forget epochs")
    parser.add_argument("--batch-size", type=int, default=book.batch_size)
    parser.add_argument("--lr", type=float, default=book.lr)
    parser.add_argument("--masc-cap", type=int, default=book.cap)
    args = parser.parse_args()
    configure_process()

    model = args.models / "tofu" / f"target-{args.size}"
    tokenizer = args.models / "tokenizer"
    tofu = get_benchmark("tofu")
    n_forget = len(tofu.load(args.data, args.split))
    protocol = Protocol(lr=args.lr, batch_size=args.batch_size, epochs=args.epochs, cap=args.masc_cap)
    rows = []
    for method in ("MASC", *BASELINES):  # computed afresh, never read from the run store
        spec = protocol.spec("tofu", method, model, n_forget, forget_split=args.split).resolved()
        _, record, _ = execute(spec, tofu, args.data, tokenizer)
        rows.append({"method": method, "steps": record["steps"], "stopped by itself": record["stopped"],
                     "train s": round(record["train_seconds"], 1), "probe s": round(record["probe_seconds"], 1),
                     "wall s": round(record["train_seconds"] + record["probe_seconds"], 1),
                     "forget p": round(record["forget_probability"], 3),
                     "retain p": round(record["retain_probability"], 3)})
    table = pd.DataFrame(rows).set_index("method")
    table["x MASC time"] = (table["wall s"] / table.loc["MASC", "wall s"]).round(2)
    print(f"tofu-mini {args.split}, target-{args.size}, batch {args.batch_size}, lr {args.lr}, "
          f"baselines {args.epochs:g} epochs = {int(table.drop('MASC')['steps'].max())} steps")
    print(table.to_string())


if __name__ == "__main__":
    main()
