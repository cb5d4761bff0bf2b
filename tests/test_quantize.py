"""NF4: the code book, the per-element error bound, idempotence, and the model-level pass."""

import copy

import pytest
import torch
from scipy.stats import norm

from unlearning.quantize import NF4_LEVELS, max_level_gap, nf4_dequantize, nf4_quantize, nf4_round_trip, quantize_model


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
    codes, absmax = nf4_quantize(weight, blocksize=8)
    assert absmax.tolist() == [2.0]
    # normalised: 1, -1, 0.5, 0, 0.085 -> levels 15, 0, 12 (0.4407: |0.059| < |0.5626 - 0.5|), 7, 8 (0.0796)
    assert codes.tolist() == [15, 0, 12, 7, 8]
    back = nf4_dequantize(codes, absmax, weight.shape, blocksize=8)
    assert torch.allclose(back, torch.tensor([2.0, -2.0, 2 * 0.44070982933044434, 0.0, 2 * 0.07958029955625534]))


@pytest.mark.parametrize("blocksize", [1, 7, 64])
def test_error_is_bounded_by_half_the_level_gap_times_absmax(blocksize):
    weight = torch.randn(33, 29, generator=torch.Generator().manual_seed(0))
    quantized = nf4_round_trip(weight, blocksize)
    padded = torch.nn.functional.pad(weight.reshape(-1), (0, (-weight.numel()) % blocksize)).reshape(-1, blocksize)
    absmax = padded.abs().amax(1).repeat_interleave(blocksize)[: weight.numel()].reshape(weight.shape)
    assert ((quantized - weight).abs() <= absmax * max_level_gap() / 2 + 1e-7).all()
    assert torch.equal(nf4_round_trip(quantized, blocksize), quantized)  # levels map to themselves


def test_zero_block_and_bad_blocksize():
    assert torch.equal(nf4_round_trip(torch.zeros(10), 4), torch.zeros(10))
    with pytest.raises(ValueError, match="blocksize"):
        nf4_quantize(torch.ones(3), 0)


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
    assert torch.allclose(nf4_round_trip(weight, 64), theirs.float(), atol=1e-2 * float(weight.abs().max()))
