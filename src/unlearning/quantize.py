"""4-bit NormalFloat (NF4) weight quantization in pure torch (QLoRA, arXiv 2305.14314).

The MASC paper's robustness claim, and the "catastrophic failure of unlearning via
quantization" it answers (arXiv 2410.16454), are about what remains of an unlearned model once
its weights are rounded to 4 bits. Here each Linear weight (the language-model head excepted,
as in transformers' bitsandbytes integration) is cut into blocks of 64 values; every block is
scaled by its absolute maximum and each value is replaced by the nearest of the 16 NF4 levels.
`quantize_model` applies this in place as *fake quantization* (weights are dequantized back to
float32), which gives the same forward pass as a 4-bit kernel up to float rounding; the
double quantization of the block scales that bitsandbytes adds is not applied.

`code="fp4"` uses bitsandbytes' 4-bit float code book instead (its default for
`load_in_4bit=True`, and so what the MASC repository's MUSE evaluation wrapper loads, masc.md
"4-bit quantisation"); NF4 is QLoRA's and the quantization-failure paper's choice.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

# the 16 NF4 levels as bitsandbytes stores them: quantiles of N(0, 1), normalised to [-1, 1]
NF4_LEVELS = torch.tensor([
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453, -0.28444138169288635,
    -0.18477343022823334, -0.09105003625154495, 0.0, 0.07958029955625534, 0.16093020141124725,
    0.24611230194568634, 0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
    0.7229568362236023, 1.0,
])
# bitsandbytes' FP4 (1 sign, 2 exponent, 1 mantissa bit) levels, normalised to [-1, 1]: +-0 and
# +-{1/192, 1/6, 1/4, 1/3, 1/2, 2/3, 1}
FP4_LEVELS = torch.tensor(sorted(sign * v for sign in (-1.0, 1.0)
                                 for v in (0.0, 0.0625 / 12, 2 / 12, 3 / 12, 4 / 12, 6 / 12, 8 / 12, 1.0)))
CODE_BOOKS = {"nf4": NF4_LEVELS, "fp4": FP4_LEVELS}
DEFAULT_BLOCKSIZE = 64
_CHUNK = 1 << 22


def code_book(code: str) -> torch.Tensor:
    """The 16 levels of a 4-bit code ('nf4' or 'fp4')."""
    if code not in CODE_BOOKS:
        raise ValueError(f"code must be one of {', '.join(CODE_BOOKS)}; got {code!r}")
    return CODE_BOOKS[code]


def quantize_4bit(weight: torch.Tensor, blocksize: int = DEFAULT_BLOCKSIZE,
                 code: str = "nf4") -> tuple[torch.Tensor, torch.Tensor]:
    """Block-wise absmax 4-bit: returns (codes uint8 `[numel]`, absmax float32 `[n_blocks]`).

    The flattened weight is zero-padded to a multiple of `blocksize`; a block of zeros gets
    absmax 1 so it divides cleanly.
    """
    if blocksize < 1:
        raise ValueError(f"blocksize must be >= 1, got {blocksize}")
    levels = code_book(code)
    flat = weight.detach().float().reshape(-1)
    padded = torch.nn.functional.pad(flat, (0, (-flat.numel()) % blocksize)).reshape(-1, blocksize)
    absmax = padded.abs().amax(dim=1)
    absmax = torch.where(absmax > 0, absmax, torch.ones_like(absmax))
    normalised = (padded / absmax[:, None]).reshape(-1)  # in [-1, 1]
    codes = torch.empty(normalised.numel(), dtype=torch.uint8)
    for start in range(0, normalised.numel(), _CHUNK):  # bounded memory on billion-weight models
        part = normalised[start:start + _CHUNK]
        codes[start:start + _CHUNK] = (part[:, None] - levels).abs().argmin(dim=1).to(torch.uint8)
    return codes[: flat.numel()], absmax


def dequantize_4bit(codes: torch.Tensor, absmax: torch.Tensor, shape: torch.Size,
                   blocksize: int = DEFAULT_BLOCKSIZE, code: str = "nf4") -> torch.Tensor:
    """Inverse of `quantize_4bit`: level[code] * absmax of the code's block, in `shape`."""
    scale = absmax.repeat_interleave(blocksize)[: codes.numel()]
    return (code_book(code)[codes.long()] * scale).reshape(shape)


def round_trip_4bit(weight: torch.Tensor, blocksize: int = DEFAULT_BLOCKSIZE, code: str = "nf4") -> torch.Tensor:
    """The weight as a 4-bit kernel sees it (same dtype as the input)."""
    codes, absmax = quantize_4bit(weight, blocksize, code)
    return dequantize_4bit(codes, absmax, weight.shape, blocksize, code).to(weight.dtype)


@dataclass(frozen=True)
class QuantizationReport:
    """What `quantize_model` changed: layers, weights, and the mean absolute weight change."""

    layers: int
    weights: int
    mean_abs_change: float


@torch.no_grad()
def quantize_model(model: torch.nn.Module, blocksize: int = DEFAULT_BLOCKSIZE,
                   skip: tuple[str, ...] = ("lm_head",), code: str = "nf4") -> QuantizationReport:
    """Fake-quantize every `nn.Linear` weight to a 4-bit code (default NF4) in place (biases
    and embeddings stay).

    Modules whose qualified name ends with one of `skip` are left alone.
    """
    layers = weights = 0
    change = 0.0
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear) or name.endswith(skip):
            continue
        quantized = round_trip_4bit(module.weight, blocksize, code)
        change += float((quantized - module.weight).abs().sum())
        module.weight.copy_(quantized)
        layers += 1
        weights += module.weight.numel()
    if layers == 0:
        raise ValueError("the model has no nn.Linear layer to quantize")
    return QuantizationReport(layers, weights, change / weights)
