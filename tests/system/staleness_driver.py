"""Everything the store holds, made once for a small laboratory (run by tests/test_staleness.py in a
subprocess whose `unlearning` package is an editable copy): the learned models with their gates,
an unlearning run, the TOFU evaluations of the oracle, the target, the run and a 4-bit copy of the
target. What is already in the store is read back; the test looks at which files were written.

    python staleness_driver.py ROOT     (ROOT holds data/, learn.yaml; writes models/, runs/)
"""

import sys
from pathlib import Path

from laboratory.learning import LearnPlan, learn
from unlearning.records import read_yaml_mapping
from experiments.lab import Lab
from unlearning.runs import RunSpec, run
from unlearning.runtime import configure_process


def main(root: Path) -> None:
    configure_process()
    learn(LearnPlan.from_dict(read_yaml_mapping(root / "learn.yaml")), root / "data", root / "models", log=lambda _: None)
    lab = Lab(root / "data", root / "models", root / "runs")
    target = lab.model("tofu/target-xs")
    oracle = lab.evaluate("tofu", lab.model("tofu/retain90-xs"))
    record = run(RunSpec("tofu", "GA", str(target), forget_split="forget10", max_steps=4), lab.data / "tofu",
                 lab.tokenizer, lab.runs)
    for model_dir in (target, record["dir"], lab.quantized(target)):
        lab.evaluate("tofu", model_dir, oracle=oracle)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
