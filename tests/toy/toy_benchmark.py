"""A toy benchmark in one module, as the README's "how to extend" describes: schemas, a suite
with one metric of its own, gates, an oracle rule. Registered by the tests with one line."""

from pathlib import Path

from unlearning.benchmarks.base import Benchmark, read
from unlearning.metrics.likelihood import answer_probability
from unlearning.data import encode_qa_split

SCHEMAS = ((r"facts|others", ("question", "answer")),)


def mean_answer_probability(model, tokenizer, records) -> float:
    """The toy's own metric: mean length-normalised answer probability."""
    return float(answer_probability(model, encode_qa_split(tokenizer, records), tokenizer.pad_token_id).mean())


def suite(model, tokenizer, data_dir: Path, config, oracle_metrics) -> dict:
    return {"facts_probability": mean_answer_probability(model, tokenizer, read(data_dir, "facts", SCHEMAS))}


def gates(model, tokenizer, data_root: Path, name: str) -> dict:
    return {"knows_facts": mean_answer_probability(model, tokenizer, read(Path(data_root) / name, "facts", SCHEMAS))}


TOY = Benchmark("toy", SCHEMAS, kind="qa", forget="facts", retain="others", suite=suite, gates=gates,
                oracle=lambda forget_split, size: f"toy/oracle-{size}")
