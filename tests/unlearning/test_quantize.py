"""NF4: the code book, the per-element error bound, idempotence, and the model-level pass."""

import copy

import pytest
import torch
from scipy.stats import norm

from unlearning.quantize import (FP4_LEVELS, NF4_LEVELS, code_book, dequantize_4bit, quantize_4bit,
                                 quantize_model, round_trip_4bit)


def max_level_gap(code: str = "nf4") -> float:
    """Largest distance between adjacent levels of a code: the rounding error is at most half
    of it times the block's absmax."""
    levels = code_book(code)
    return float((levels[1:] - levels[:-1]).max())


def test_levels_are_the_normal_quantiles_of_qlora():
    # QLoRA / bitsandbytes create_normal_map(offset=0.9677083): 8 positive quantiles of N(0,1)
    # between `offset` and 0.5, 7 negative ones, and an exact zero; normalised by the largest.
    offset = 0.9677083
    positive = norm.ppf(torch.linspace(offset, 0.5, 9)[:-1].numpy())
    negative = -norm.ppf(torch.linspace(offset, 0.5, 8)[:-1].numpy())
    levels = sorted(list(positive) + list(negative) + [0.0])
    expected = torch.tensor(levels) / max(levels)
    assert torch.allclose(NF4_LEVELS, expected.float(), atol=1e-6)


def test_hand_example_rounds_to_nearest_level():
    weight = torch.tensor([2.0, -2.0, 1.0, 0.0, 0.17])  # one block, absmax 2
    codes, absmax = quantize_4bit(weight, blocksize=8)
    assert absmax.tolist() == [2.0]
    # normalised: 1, -1, 0.5, 0, 0.085 -> levels 15, 0, 12 (0.4407: |0.059| < |0.5626 - 0.5|), 7, 8 (0.0796)
    assert codes.tolist() == [15, 0, 12, 7, 8]
    back = dequantize_4bit(codes, absmax, weight.shape, blocksize=8)
    assert torch.allclose(back, torch.tensor([2.0, -2.0, 2 * 0.44070982933044434, 0.0, 2 * 0.07958029955625534]))


@pytest.mark.parametrize("blocksize", [1, 7, 64])
def test_error_is_bounded_by_half_the_level_gap_times_absmax(blocksize):
    weight = torch.randn(33, 29, generator=torch.Generator().manual_seed(0))
    quantized = round_trip_4bit(weight, blocksize)
    padded = torch.nn.functional.pad(weight.reshape(-1), (0, (-weight.numel()) % blocksize)).reshape(-1, blocksize)
    absmax = padded.abs().amax(1).repeat_interleave(blocksize)[: weight.numel()].reshape(weight.shape)
    assert ((quantized - weight).abs() <= absmax * max_level_gap() / 2 + 1e-7).all()
    assert torch.equal(round_trip_4bit(quantized, blocksize), quantized)  # levels map to themselves


def test_zero_block_and_bad_blocksize():
    assert torch.equal(round_trip_4bit(torch.zeros(10), 4), torch.zeros(10))
    with pytest.raises(ValueError, match="blocksize"):
        quantize_4bit(torch.ones(3), 0)


def test_quantize_model_touches_linear_weights_only(target):
    before = copy.deepcopy(target)
    report = quantize_model(target)
    assert report.layers == sum(1 for n, m in target.named_modules() if isinstance(m, torch.nn.Linear) and n != "lm_head")
    assert report.mean_abs_change > 0
    for (name, p), q in zip(target.named_parameters(), before.parameters()):
        changed = not torch.equal(p, q)
        assert changed == (name.endswith(".weight") and "embed" not in name and "norm" not in name), name


def test_matches_bitsandbytes_nf4_when_installed():
    bnb = pytest.importorskip("bitsandbytes")
    weight = torch.randn(64, 128, generator=torch.Generator().manual_seed(1))
    packed, state = bnb.functional.quantize_4bit(weight, blocksize=64, quant_type="nf4")
    theirs = bnb.functional.dequantize_4bit(packed, state, quant_type="nf4")
    assert torch.allclose(round_trip_4bit(weight, 64), theirs.float(), atol=1e-2 * float(weight.abs().max()))


def test_fp4_code_book_is_bitsandbytes_e2m1_and_bounds_the_error():
    magnitudes = sorted({abs(float(v)) for v in FP4_LEVELS})
    assert magnitudes == pytest.approx([0.0, 1 / 192, 1 / 6, 1 / 4, 1 / 3, 1 / 2, 2 / 3, 1.0])
    assert len(FP4_LEVELS) == 16 and torch.equal(FP4_LEVELS, -FP4_LEVELS.flip(0))
    weight = torch.randn(40, 24, generator=torch.Generator().manual_seed(3))
    quantized = round_trip_4bit(weight, 64, code="fp4")
    absmax = torch.nn.functional.pad(weight.reshape(-1), (0, (-weight.numel()) % 64)).reshape(-1, 64).abs().amax(1)
    bound = absmax.repeat_interleave(64)[: weight.numel()].reshape(weight.shape) * max_level_gap("fp4") / 2
    assert ((quantized - weight).abs() <= bound + 1e-7).all()
    assert not torch.equal(quantized, round_trip_4bit(weight, 64))  # a different grid from NF4
    with pytest.raises(ValueError, match="code must be one of nf4, fp4"):
        code_book("int4")


def test_matches_bitsandbytes_fp4_when_installed():
    bnb = pytest.importorskip("bitsandbytes")
    weight = torch.randn(64, 128, generator=torch.Generator().manual_seed(1))
    packed, state = bnb.functional.quantize_4bit(weight, blocksize=64, quant_type="fp4")
    theirs = bnb.functional.dequantize_4bit(packed, state, quant_type="fp4")
    assert torch.allclose(round_trip_4bit(weight, 64, code="fp4"), theirs.float(), atol=1e-2 * float(weight.abs().max()))
