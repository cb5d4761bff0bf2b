"""What a profile's build computed, without keys, paths or times: to show that a change of the code
leaves a build's numbers alone (issue 32: the smoke book before and after a renovation).

    python perf/smoke_snapshot.py snapshot smoke before.json     # after `make book PROFILE=smoke`
    python perf/smoke_snapshot.py compare before.json after.json  # lists every difference; status 1 if any

A snapshot holds every run of `runs/<profile>/` (identified by its specification: method, rule,
splits, hyper-parameters, stop, budget, optimiser, seed, start model and data hashes; valued by its
steps, stop, per-step losses and rates, probes, forget/retain probabilities), every evaluation
cached beside a model (identified by the model's identity and the evaluation config; valued by its
metrics), every learned model's manifest entry (epoch losses, gates) and every claim's finding.
Wall-clock seconds, memory, cache keys and folder names are left out: they differ between builds.
A store keeps the runs of both builds when a change of the training code changed their keys; a
specification computed twice is kept once, with both values, and compared as the latest.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

ROOT = Path.cwd()  # run from the repository root
TIMES = {"seconds", "probe_seconds", "train_seconds", "eval_seconds", "peak_rss_mb", "wall_seconds"}
SPEC = ("benchmark", "method", "model", "forget_split", "retain_split", "rule", "hparams", "stop", "max_steps", "optim",
        "seed", "probe_set", "lora", "packing", "record_geometry", "data_hash", "model_hash", "checkpoints_requested")
VALUES = ("steps", "stop_step", "stopped", "diverged", "forget_probability", "retain_probability", "probes",
          "forget_examples", "retain_examples")


def _untimed(value):
    """`value` without wall-clock or memory fields, at any depth."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _identity(values: dict, fields) -> str:
    return json.dumps({f: values.get(f) for f in fields}, sort_keys=True)


def _runs(store: Path) -> tuple[dict, dict]:
    """Runs by specification, and each run folder's identity (for the evaluations inside it)."""
    runs, folders = {}, {}
    for path in sorted(store.glob("*/record.json"), key=lambda p: p.stat().st_mtime_ns):
        record = json.loads(path.read_text())
        identity = _identity(record, SPEC)
        folders[path.parent.name] = identity
        runs[identity] = _untimed({**{f: record.get(f) for f in VALUES}, "log": record["log"],
                                   "checkpoint_steps": [c["step"] for c in record.get("checkpoints", [])]})
    return runs, folders


def _evaluations(roots, folders: dict) -> dict:
    """Every cached evaluation (`<model>/metrics/*.json`) by its model and config."""
    found = {}
    for root in roots:
        for path in sorted(root.rglob("metrics/*.json"), key=lambda p: p.stat().st_mtime_ns):
            entry = json.loads(path.read_text())
            model = path.parent.parent.relative_to(root)
            run = folders.get(model.parts[0]) if root.name != "models" else None
            where = f"run {run} {'/'.join(model.parts[1:])}" if run else f"model {model}"
            found[f"{where} | {entry['benchmark']} | {json.dumps(entry['config'], sort_keys=True)}"] = \
                _untimed(entry["metrics"])
    return found


def snapshot(profile: str) -> dict:
    store, models = ROOT / "runs" / profile, ROOT / "models" / profile
    runs, folders = _runs(store)
    manifest = json.loads((models / "manifest.json").read_text()) if (models / "manifest.json").is_file() else {}
    findings = ROOT / "book" / "generated" / "findings"
    return {"runs": runs, "evaluations": _evaluations([store, models], folders),
            "models": {name: _untimed({k: v for k, v in entry.items() if k in ("epoch_losses", "gates", "examples")})
                       for name, entry in manifest.items() if isinstance(entry, dict)},
            "findings": {p.stem: json.loads(p.read_text()) for p in sorted(findings.glob("*.json"))}}


def largest_difference(a, b) -> float:
    """The largest absolute difference between the numbers of two values of the same shape; infinite
    when anything but a number differs (a string, a flag, a missing field, a list's length)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return max((largest_difference(a.get(k), b.get(k)) for k in set(a) | set(b)), default=0.0)
    if isinstance(a, list) and isinstance(b, list):
        return max(map(largest_difference, a, b), default=0.0) if len(a) == len(b) else math.inf
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return abs(a - b) if numbers else (0.0 if a == b else math.inf)


def compare(before: dict, after: dict) -> list[str]:
    """Every difference between two snapshots: a part missing from one, or a value that differs (with
    its largest numeric difference, `inf` when something other than a number changed)."""
    lines = []
    for part in ("runs", "evaluations", "models", "findings"):
        a, b = before[part], after[part]
        lines += [f"{part}: only before: {k[:160]}" for k in sorted(set(a) - set(b))]
        lines += [f"{part}: only after: {k[:160]}" for k in sorted(set(b) - set(a))]
        gaps = {k: largest_difference(a[k], b[k]) for k in sorted(set(a) & set(b)) if a[k] != b[k]}
        lines += [f"{part}: differs (largest difference {gap:.3g}): {k[:160]}" for k, gap in gaps.items()]
        lines.append(f"{part}: {len(set(a) & set(b))} in both, {len(set(a) & set(b)) - len(gaps)} identical"
                     + (f", the others at most {max(gaps.values()):.3g} apart" if gaps else ""))
    return lines


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "snapshot":
        Path(argv[2]).write_text(json.dumps(snapshot(argv[1]), indent=1, sort_keys=True) + "\n")
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        lines = compare(*(json.loads(Path(p).read_text()) for p in argv[1:]))
        print("\n".join(lines))
        return 1 if any(": only " in line or ": differs " in line for line in lines) else 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
