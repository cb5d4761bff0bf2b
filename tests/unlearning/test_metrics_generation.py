"""Generation, ROUGE-L and option scoring against slow, obvious references."""

import copy

import pytest
import torch

from unlearning.data import encode_qa
from unlearning.losses import sequence_logprob
from unlearning.metrics.choice import choice_accuracy, option_logprobs
from unlearning.metrics.generation import cut_at_stops, greedy_generate
from unlearning.metrics.rouge import rouge_l, rouge_l_f1, rouge_l_recall


def test_rouge_l_matches_a_hand_computed_lcs():
    # reference 6 tokens, prediction 4 tokens, LCS "the cat on mat" = 4
    scores = rouge_l(["the cat on mat"], ["the cat sat on the mat"], stemmer=False)[0]
    assert scores["recall"] == pytest.approx(4 / 6) and scores["precision"] == pytest.approx(1.0)
    assert scores["f1"] == pytest.approx(2 * (4 / 6) / (1 + 4 / 6))
    assert rouge_l_recall(["cats running"], ["cat runs"], stemmer=True) == [1.0]
    assert rouge_l_f1(["cats running"], ["cat runs"], stemmer=False) == [0.0]
    with pytest.raises(ValueError):
        rouge_l(["a"], [])


def test_cut_at_stops():
    assert cut_at_stops("Paris.\n\nQuestion: x", ("\n\n", "Question:")) == "Paris."
    assert cut_at_stops("no stop", ("\n\n",)) == "no stop"


def _slow_greedy(model, tokenizer, prompt, steps):
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    out = []
    for _ in range(steps):
        with torch.no_grad():
            nxt = int(model(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
        if nxt == tokenizer.eos_token_id:
            break
        ids.append(nxt), out.append(nxt)
    return tokenizer.decode(out, skip_special_tokens=True).strip()


def test_batched_left_padded_generation_equals_one_by_one_decoding(target, tokenizer):
    prompts = ["Question: Where was Ann born?\nAnswer:", "Question: Who?\nAnswer:", "The capital of"]
    batched = greedy_generate(target, tokenizer, prompts, max_new_tokens=8, batch_size=3)
    assert batched == [_slow_greedy(target, tokenizer, p, 8) for p in prompts]
    assert tokenizer.padding_side == "right"  # restored


def test_option_scores_equal_summed_answer_logprobs(target, tokenizer):
    question, options = "Where was Ann born?", ["Ann was born in Fenrow.", "Ann was born in Ivel."]
    scores = option_logprobs(target, tokenizer, [(question, options)])[0]
    for score, option in zip(scores, options):
        encoded = encode_qa(tokenizer, question, option, eos=False)
        with torch.no_grad():
            logits = target(input_ids=torch.tensor([encoded.input_ids])).logits
        assert float(score) == pytest.approx(float(sequence_logprob(logits, torch.tensor([encoded.labels]))[0]), abs=1e-4)
    best = int(scores.argmax())
    assert choice_accuracy(target, tokenizer, [{"question": question, "choices": options, "answer": best}]) == 1.0
    assert choice_accuracy(target, tokenizer, [{"question": question, "choices": options, "answer": 1 - best}]) == 0.0


def test_min_k_plus_plus_by_hand_and_against_a_slow_reference(target, tokenizer):
    import math

    from unlearning.data import encode_text
    from unlearning.metrics.likelihood import labelled_tokens
    from unlearning.metrics.mia import min_k_plus_plus_score

    # by hand: standardised scores (-1, 1, 0, -5) -> lowest 50 % = (-5, -1) -> mean -3
    lp = torch.tensor([-2.0, -1.0, -1.5, -4.0])
    mu, variance = torch.full((4,), -1.5), torch.full((4,), 0.25)
    assert min_k_plus_plus_score(lp, mu, variance, 0.5) == pytest.approx(-3.0)
    # the moments of one text, position by position, from the full softmax
    example = encode_text(tokenizer, "Dentisia exports salt and its capital is Marrowdale.")
    (token_lp, _, labels, mean, variance), = labelled_tokens(target, [example], tokenizer.pad_token_id, with_moments=True)
    with torch.no_grad():
        logits = target(input_ids=torch.tensor([example.input_ids])).logits[0, :-1].double()
    for t in range(len(labels)):
        p = torch.softmax(logits[t], -1)
        logp = torch.log_softmax(logits[t], -1)
        mu_t = float((p * logp).sum())
        sd_t = math.sqrt(float((p * (logp - mu_t) ** 2).sum()))
        assert float(mean[t]) == pytest.approx(mu_t, abs=1e-4) and float(variance[t]) == pytest.approx(sd_t ** 2, abs=1e-3)


def _full_forward_reference(model, examples, pad_token_id):
    """Per example, the slow obvious way: the whole forward pass over the padded batch, then the
    log-probs, argmax and log-softmax moments at its labelled positions, summed NLL and length."""
    from unlearning.data import collate
    from unlearning.margin import IGNORE_INDEX

    batch = collate(examples, pad_token_id)
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1].float()
    out = []
    for row in range(len(examples)):
        keep = batch["labels"][row, 1:] != IGNORE_INDEX
        logprobs = logits[row][keep].log_softmax(-1)
        labels = batch["labels"][row, 1:][keep]
        token = logprobs.gather(-1, labels[:, None]).squeeze(-1)
        mean = (logprobs.exp() * logprobs).sum(-1)
        out.append({"nll": float(-token.sum()), "length": int(keep.sum()), "token": token, "argmax": logits[row][keep].argmax(-1),
                    "labels": labels, "mean": mean, "variance": (logprobs.exp() * logprobs.pow(2)).sum(-1) - mean.pow(2)})
    return out


def _llama_shaped(vocab_size: int):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    return LlamaForCausalLM(LlamaConfig(vocab_size=vocab_size, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2)).eval()


@pytest.mark.parametrize("shape", ["qwen2", "llama", "whole forward"])
def test_labelled_positions_give_the_whole_forward_passes_values(target, tokenizer, splits, shape):
    """answer_nll and labelled_tokens (the output layer on labelled positions only, for the
    decoders of HEAD_ON_HIDDEN) against the whole forward pass, on a right-padded batch of
    answers of different lengths; `whole forward` is a model type outside HEAD_ON_HIDDEN."""
    from unlearning.metrics.likelihood import answer_nll, labelled_tokens

    model = _llama_shaped(len(tokenizer)) if shape == "llama" else copy.deepcopy(target)
    if shape == "whole forward":
        model.config.model_type = "some-other-decoder"
    examples = splits["forget10"][:7]
    assert len({len(e.input_ids) for e in examples}) > 1  # the batch is padded
    expected = _full_forward_reference(model, examples, tokenizer.pad_token_id)
    nll, length = answer_nll(model, examples, tokenizer.pad_token_id, batch_size=4)
    assert length.tolist() == [e["length"] for e in expected]
    assert nll.tolist() == pytest.approx([e["nll"] for e in expected], rel=1e-5, abs=1e-5)
    tokens = labelled_tokens(model, examples, tokenizer.pad_token_id, batch_size=4, with_moments=True)
    for (token, argmax, labels, mean, variance), e in zip(tokens, expected, strict=True):
        assert torch.equal(labels, e["labels"]) and torch.equal(argmax, e["argmax"])
        for got, want in ((token, e["token"]), (mean, e["mean"]), (variance, e["variance"])):
            assert torch.allclose(got, want, rtol=1e-5, atol=1e-5)


def test_prompt_groups_and_their_batches_by_hand():
    from unlearning.data import Encoded
    from unlearning.metrics.likelihood import _group_batches, prompt_groups

    def qa(prompt, answer):
        return Encoded(prompt + answer, [-100] * len(prompt) + answer)

    examples = [qa([1, 2], [5]), qa([1, 3], [6]), qa([1, 2], [7, 8]), qa([1, 2], [9]), qa([1, 3], [4])]
    assert prompt_groups(examples) == [[0, 2, 3], [1, 4]]
    assert prompt_groups(examples[:2]) is None  # no prompt shared
    assert prompt_groups([qa([1], [5]), qa([1], [6])]) is None  # a one-token prompt: nothing to share
    assert list(_group_batches([[0, 2, 3], [1, 4]], 4)) == [[[0, 2, 3]], [[1, 4]]]
    assert list(_group_batches([[0, 2, 3], [1, 4]], 2)) == [[[0, 2]], [[3]], [[1, 4]]]
    assert list(_group_batches([[0], [1], [2, 3]], 4)) == [[[0], [1], [2, 3]]]


@pytest.mark.parametrize("shape", ["qwen2", "llama", "whole forward"])
def test_answers_that_share_a_prompt_give_the_whole_forward_passes_values(target, tokenizer, world, shape):
    """answer_nll over questions with several answers each (TOFU's answer, paraphrase and
    perturbed answers; a question's options): each prompt runs once and its answers continue from
    its key/value cache, at their own positions after prompts of different lengths; the values are
    those of the whole forward pass over each example (a batch size that splits a question's answers
    across batches, and one that packs several questions)."""
    from unlearning.data import load_split
    from unlearning.metrics.likelihood import answer_nll, prompt_groups

    model = _llama_shaped(len(tokenizer)) if shape == "llama" else copy.deepcopy(target)
    if shape == "whole forward":
        model.config.model_type = "some-other-decoder"
    items = load_split(world / "tofu", "forget10")[:4]
    answers = [it["answer"] for it in items]
    examples = [encode_qa(tokenizer, it["question"], answer) for it in items for answer in answers[:3]]
    assert len({len(e.input_ids) - len(examples[0].input_ids) for e in examples}) > 1
    assert len({e.labels.count(-100) for e in examples}) > 1  # prompts of different lengths
    assert len(prompt_groups(examples)) == 4
    expected = _full_forward_reference(model, examples, tokenizer.pad_token_id)
    for batch_size in (2, 7):
        nll, length = answer_nll(model, examples, tokenizer.pad_token_id, batch_size=batch_size)
        assert length.tolist() == [e["length"] for e in expected]
        assert nll.tolist() == pytest.approx([e["nll"] for e in expected], rel=1e-5, abs=1e-5)
