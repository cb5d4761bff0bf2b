"""What the benchmarks' metric suites share: the evaluation settings, answer probabilities and
membership-inference scores of a model on a list of items (benchmarks.md s. 2)."""

from __future__ import annotations

from dataclasses import dataclass

from unlearning.data import encode_qa, encode_text
from unlearning.metrics import mia
from unlearning.metrics.likelihood import answer_nll, labelled_tokens


@dataclass(frozen=True)
class EvalConfig:
    """Evaluation settings that change numbers (all recorded in the cache key)."""

    forget_split: str = "forget10"    # TOFU: which forget split (and its holdout and oracle)
    max_new_tokens: int = 32          # TOFU / KnowMem / RWKU answers
    verbmem_new_tokens: int = 64      # MUSE VerbMem continuations (our texts are short)
    min_k: float = 0.4                # Min-K% for PrivLeak
    stemmer: bool = True              # ROUGE stemming (OU: on; MUSE's code: off)
    batch_size: int = 32
    forget_only: bool = False         # TOFU: the forget-set metrics alone (a cheap check, e.g. after 4-bit)

    def __post_init__(self) -> None:
        for name in ("max_new_tokens", "verbmem_new_tokens", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if not 0 < self.min_k <= 1:
            raise ValueError(f"min_k must lie in (0, 1], got {self.min_k!r}")


def mean_of(values) -> float:
    """Mean of an iterable of numbers (NaN when empty)."""
    values = list(values)
    return float(sum(values) / len(values)) if values else float("nan")


def mean_statistic(part: str, field: str):
    """The statistic of an aggregate that is a plain mean over one evaluation set's items (items
    [R, n] -> [R]; `experiments.intervals`)."""
    return lambda items: items[part][field].mean(axis=-1)


def answer_probabilities(model, tokenizer, pairs: list[tuple[str, str]], batch_size: int) -> list[float]:
    """p-bar(answer | question) = exp(-NLL/|y|) for every (question, answer) pair, batched; the
    exponential in float64, as OU's numpy exp(-avg_loss), so a collapsed model's p underflows
    only far below float32's range."""
    nll, length = answer_nll(model, [encode_qa(tokenizer, q, a) for q, a in pairs], tokenizer.pad_token_id, batch_size)
    return (-nll.double() / length.clamp(min=1)).exp().tolist()


def membership_scores(model, tokenizer, texts: list[str], config: EvalConfig, examples=None) -> dict[str, list[float]]:
    """Member-likeness scores (LOSS, zlib, Min-K%, Min-K%++) of texts, or of pre-encoded
    `examples` (TOFU's QA items, scored on their answer tokens, with `texts` the answers for zlib).

    Texts (MUSE, RWKU) are scored on their own tokens only, without the appended EOS, as MUSE's
    code scores them. QA items keep their EOS label for LOSS and zlib but drop it from the
    per-token scores (Min-K%, Min-K%++), as OpenUnlearning's `tokenwise_logprobs` does."""
    cut = slice(None) if examples is None else slice(0, -1)  # per-token scores: without the QA items' EOS
    examples = examples or [encode_text(tokenizer, t, eos=False) for t in texts]
    tokens = labelled_tokens(model, examples, tokenizer.pad_token_id, config.batch_size, with_moments=True)
    return {"min_k": [mia.min_k_score(lp[cut], config.min_k) for lp, *_ in tokens],
            "min_k_pp": [mia.min_k_plus_plus_score(lp[cut], mu[cut], var[cut], config.min_k)
                         for lp, _, _, mu, var in tokens],
            "loss": [mia.loss_score(lp) for lp, *_ in tokens],
            "zlib": [mia.zlib_score(lp, t) for (lp, *_), t in zip(tokens, texts)]}


MIA_SCORES = ("min_k", "min_k_pp", "loss", "zlib")


def mia_aucs(members: dict, nonmembers: dict, prefix: str) -> dict:
    """AUC of every membership score, keyed `<prefix>_auc_<score>`."""
    return {f"{prefix}_auc_{name}": mia.auc(members[name], nonmembers[name]) for name in MIA_SCORES}
