"""Reading, checking, encoding and batching splits (`unlearning.data`), with a word-level tokenizer
written here so that every id and label can be read off by hand."""

import json

import pytest
import torch

from unlearning.data import (IDK_ANSWERS, DataError, Encoded, batches, collate, cycle_batches, encode_qa, encode_text,
                             idk_records, load_split, read_jsonl, validate_records, write_jsonl)
from unlearning.margin import IGNORE_INDEX


class WordTokenizer:
    """Each whitespace-separated word is one id (in order of first sight, from 10); no chat template."""

    eos_token_id = 1
    chat_template = None

    def __init__(self):
        self.ids = {}

    def __call__(self, text, add_special_tokens=False):
        return {"input_ids": [self.ids.setdefault(word, 10 + len(self.ids)) for word in text.split()]}


def test_json_lines_and_json_arrays_read_alike_and_write_back_sorted(tmp_path):
    lines, array = tmp_path / "a.json", tmp_path / "b.json"
    lines.write_text('{"q": "x", "a": 1}\n\n{"q": "y", "a": 2}\n')
    array.write_text('[{"q": "x", "a": 1}, {"q": "y", "a": 2}]')
    assert read_jsonl(lines) == read_jsonl(array) == [{"q": "x", "a": 1}, {"q": "y", "a": 2}]
    out = tmp_path / "c.json"
    write_jsonl(out, [{"b": "é", "a": 1}])
    assert out.read_text(encoding="utf-8") == '{"a": 1, "b": "é"}\n'


@pytest.mark.parametrize("text, message", [
    (None, "missing data file"),
    ("  \n", "empty data file"),
    ('{"q": 1}\n{"q": \n', r"not valid JSON lines \(line 2"),
    ('[{"q": 1},\n oops]', r"not valid JSON lines \(line 2"),
    ('[1, 2]', "every record must be a JSON object"),
])
def test_a_broken_data_file_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "split.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(DataError, match=message) as error:
        read_jsonl(path)
    assert "\n" not in str(error.value)


def test_a_split_is_checked_against_its_schema(tmp_path):
    (tmp_path / "forget.json").write_text(json.dumps({"question": "q", "answer": "a"}) + "\n")
    assert load_split(tmp_path, "forget", ("question", "answer")) == [{"question": "q", "answer": "a"}]
    with pytest.raises(DataError, match=r"record 0 lacks field 'paraphrase' \(has \['answer', 'question'\]\)"):
        load_split(tmp_path, "forget", ("question", "paraphrase"))
    with pytest.raises(DataError, match="where: split is empty"):
        validate_records([], ("question",), "where")


def test_a_missing_local_folder_is_not_mistaken_for_a_hub_name(tmp_path):
    for source in (tmp_path / "absent", "./no/such/folder", "tofu"):
        with pytest.raises(DataError, match="data folder not found"):
            load_split(source, "forget10")
    with pytest.raises(DataError, match="hub mirror lacks locuslab/TOFU"):
        load_split("locuslab/TOFU", "forget10", mirror=tmp_path)


def test_a_qa_item_is_its_prompt_masked_then_its_answer_and_eos():
    tokenizer = WordTokenizer()
    encoded = encode_qa(tokenizer, "who wrote it?", "Ann did")
    # the prompt "Question: who wrote it?\nAnswer:" is 5 words, " Ann did" 2, then EOS
    assert encoded.input_ids == [10, 11, 12, 13, 14, 15, 16, 1]
    assert encoded.labels == [IGNORE_INDEX] * 5 + [15, 16, 1]
    assert encode_qa(tokenizer, "who wrote it?", "Ann did", max_length=6).labels == [IGNORE_INDEX] * 5 + [15]
    assert encode_qa(tokenizer, "who wrote it?", "Ann did", eos=False).input_ids[-1] == 16
    with pytest.raises(DataError, match="max_length=5 leaves no answer token"):
        encode_qa(tokenizer, "who wrote it?", "Ann did", max_length=5)


def test_a_text_opens_with_eos_so_its_first_word_is_a_label():
    tokenizer = WordTokenizer()
    encoded = encode_text(tokenizer, "a b c")
    assert encoded.input_ids == [1, 10, 11, 12, 1] and encoded.labels == [IGNORE_INDEX, 10, 11, 12, 1]
    bare = encode_text(tokenizer, "a b c", bos=False, eos=False, max_length=2)
    assert bare.input_ids == bare.labels == [10, 11]


def test_collate_pads_right_to_the_longest_and_masks_the_padding():
    batch = collate([Encoded([5, 6, 7], [IGNORE_INDEX, 6, 7]), Encoded([8], [8])], pad_token_id=0)
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [[IGNORE_INDEX, 6, 7], [8, IGNORE_INDEX, IGNORE_INDEX]]


def _examples(lengths):
    return [Encoded([i] * n, [i] * n) for i, n in enumerate(lengths)]


def _firsts(batch) -> list[int]:
    return batch["input_ids"][:, 0].tolist()


def test_batches_keep_order_without_a_generator_and_shuffle_reproducibly_with_one():
    examples = _examples([1, 2, 3, 4, 5])
    assert [_firsts(b) for b in batches(examples, 2, pad_token_id=-1)] == [[0, 1], [2, 3], [4]]
    order = torch.randperm(5, generator=torch.Generator().manual_seed(3)).tolist()
    shuffled = [_firsts(b) for b in batches(examples, 2, -1, torch.Generator().manual_seed(3))]
    assert sum(shuffled, []) == order
    endless = cycle_batches(examples, 5, -1, torch.Generator().manual_seed(0))
    epochs = [sorted(_firsts(next(endless))) for _ in range(3)]
    assert epochs == [[0, 1, 2, 3, 4]] * 3


def test_idk_answers_replace_the_answers_reproducibly():
    records = [{"question": f"q{i}", "answer": "a", "id": i} for i in range(30)]
    first, again = idk_records(records, seed=2), idk_records(records, seed=2)
    assert first == again and first != idk_records(records, seed=3)
    assert [r["question"] for r in first] == [r["question"] for r in records]
    assert all(r["answer"] in IDK_ANSWERS for r in first) and len({r["answer"] for r in first}) > 1
