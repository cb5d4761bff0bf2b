"""SAGO's corpus packing (issue 36): `data.pack_corpus` against blocks written out in this test by
following the official `PretrainingDataset` (SAGO's src/data/pretraining.py and
`preprocess_pretraining_instance`), token for token."""

from pathlib import Path

import numpy as np
import pytest

from unlearning.data import DataError, pack_corpus

CORPUS = ["The lab's first document is short.", "A second one, a little longer: it has a colon and a comma, and "
          "it goes on for a while so that it spans a block boundary.", "Third.", "Fourth document, the last one."]
REAL = Path(__file__).resolve().parents[2] / "models" / "real" / "smollm2-135m"


def _official_blocks(tokenizer, texts, max_length):
    """PretrainingDataset as released: texts + "\\n\\n" tokenised in one batch as numpy arrays,
    concatenated; item idx decodes its chunk and runs preprocess_pretraining_instance(tok, "", chunk)."""
    tokenized = tokenizer([t + "\n\n" for t in texts], add_special_tokens=False, return_tensors="np")
    all_tokens = np.concatenate(list(tokenized["input_ids"]))
    out = []
    for idx in range(all_tokens.shape[0] // max_length):
        chunk_text = tokenizer.decode(all_tokens[idx * max_length:(idx + 1) * max_length], skip_special_tokens=True)
        full_seq_ids = tokenizer("" + chunk_text, add_special_tokens=True)["input_ids"]
        prefix_len = len(tokenizer("", add_special_tokens=True)["input_ids"])
        full_seq_ids = full_seq_ids[: prefix_len + max_length]
        len_matched = prefix_len if prefix_len != 0 else 1
        out.append((full_seq_ids, [-100] * len_matched + full_seq_ids[len_matched:]))
    return out


def _with_bos(tokenizer):
    """The tokenizer with a BOS token its post-processor adds (as Llama's does)."""
    import copy

    from tokenizers.processors import TemplateProcessing

    tok = copy.deepcopy(tokenizer)
    tok.add_special_tokens({"bos_token": "<s>"})
    tok._tokenizer.post_processor = TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tok.bos_token_id)])
    assert tok("", add_special_tokens=True)["input_ids"] == [tok.bos_token_id]
    return tok


@pytest.mark.parametrize("block_length", [4, 7, 16])
@pytest.mark.parametrize("kind", ["laboratory", "with BOS", "SmolLM2"])
def test_blocks_are_the_official_ones_token_for_token(tokenizer, kind, block_length):
    if kind == "SmolLM2":
        if not (REAL / "tokenizer.json").is_file():
            pytest.skip("the real model is not fetched (make real-model)")
        from unlearning.models import load_tokenizer

        tok = load_tokenizer(REAL)
    else:
        tok = _with_bos(tokenizer) if kind == "with BOS" else tokenizer
    ours = [(e.input_ids, e.labels) for e in pack_corpus(tok, CORPUS, block_length)]
    official = _official_blocks(tok, CORPUS, block_length)
    assert len(ours) >= 2 and ours == official
    assert all(labels[0] == -100 for _, labels in ours)


def test_the_remainder_is_dropped_and_a_short_corpus_is_an_error(tokenizer):
    total = sum(len(tokenizer(t + "\n\n", add_special_tokens=False)["input_ids"]) for t in CORPUS)
    assert len(pack_corpus(tokenizer, CORPUS, 5)) == total // 5
    with pytest.raises(DataError, match="fewer than one block"):
        pack_corpus(tokenizer, ["tiny"], 10_000)
    with pytest.raises(ValueError, match="block_length must be >= 1"):
        pack_corpus(tokenizer, CORPUS, 0)


def test_a_split_trains_on_its_records_or_on_its_packed_blocks(tokenizer, tmp_path):
    """`runs.training_units`, which sizes a recipe's epochs and batches: a record each, unless a
    text split is packed; then its tokens (each text with its "\\n\\n") over the block length, counted here."""
    from unlearning.runs import training_units

    tokenizer.save_pretrained(tmp_path)
    texts = [{"text": t} for t in CORPUS]
    total = sum(len(tokenizer(t + "\n\n", add_special_tokens=False)["input_ids"]) for t in CORPUS)
    assert training_units(tmp_path, texts, "text", 5) == total // 5 != len(CORPUS)
    assert training_units(tmp_path, texts, "text") == len(CORPUS)
    questions = [{"question": "Who?", "answer": "Ann."}] * 3
    assert training_units(tmp_path, questions, "qa", 5) == training_units(tmp_path, questions, "qa") == 3
