"""The method registry: name -> forget objective, retain objective and default weights (`METHODS`;
a new method is its objective functions and one `Method` line).

One name per method everywhere (registry key, notebook parameter, plot legend, record field).
A method pairs a forget objective (minimised to forget) with an optional retain objective;
the engine weighs them with gamma (forget) and alpha (retain) and combines their gradients
with an update rule from `unlearning.synthesis`. Defaults follow
`shared/reference/benchmarks.md` section 3 and `masc.md` sections 4-9.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from unlearning import losses
from unlearning.data import batches, idk_records, on_device
from unlearning.margin import answer_logits, model_inputs, tau_from_rho, teacher_logits


@dataclass
class Context:
    """What objectives may need beyond the batch: a frozen reference, cached reference
    log-probs of the forget set (indexed by example), hyper-parameters, a random generator."""

    hparams: dict
    reference: torch.nn.Module | None = None
    ref_logprobs: torch.Tensor | None = None
    generator: torch.Generator = field(default_factory=lambda: torch.Generator().manual_seed(0))
    control: torch.Tensor | None = None  # RMU's c * u, drawn once per run


Objective = Callable[[torch.nn.Module, dict, Context], torch.Tensor]


def forget_ga(model, batch, ctx: Context) -> torch.Tensor:
    return losses.ga_loss(*answer_logits(model, batch))


def forget_npo(model, batch, ctx: Context) -> torch.Tensor:
    if ctx.ref_logprobs is None:
        raise RuntimeError("NPO needs cached reference log-probs of the forget set (engine computes them)")
    ref = ctx.ref_logprobs[batch["index"]]
    return losses.npo_loss(*answer_logits(model, batch), ref, ctx.hparams["beta"])


def forget_simnpo(model, batch, ctx: Context) -> torch.Tensor:
    return losses.simnpo_loss(*answer_logits(model, batch), ctx.hparams["beta"], ctx.hparams["simnpo_gamma"])


def forget_masc(model, batch, ctx: Context) -> torch.Tensor:
    logits, labels = answer_logits(model, batch)
    teacher = teacher_logits(ctx.reference, batch, ctx.hparams)
    return losses.masc_objective(logits, labels, ctx.hparams, teacher, ctx.generator)


def retain_nll(model, batch, ctx: Context) -> torch.Tensor:
    return losses.nll_loss(*answer_logits(model, batch))


def retain_kl(model, batch, ctx: Context) -> torch.Tensor:
    if ctx.reference is None:
        raise RuntimeError("a KL retain term needs the frozen reference model")
    with torch.no_grad():
        ref_logits = answer_logits(ctx.reference, batch)[0]
    logits, labels = answer_logits(model, batch)
    return losses.kl_to_reference(logits, ref_logits, labels)


def forget_idk(model, batch, ctx: Context) -> torch.Tensor:
    """IdkNLL (TOFU's "idk"): plain NLL on forget questions paired with "I don't know"-style
    answers; the caller encodes the forget set with `data.idk_answers` (see `Method.forget_answers`)."""
    return losses.nll_loss(*answer_logits(model, batch))


def rmu_layer(model, hp: dict) -> int:
    """The hooked layer: `layer` if given, else the middle decoder layer."""
    n_layers = model.config.num_hidden_layers
    layer = n_layers // 2 if hp.get("layer") is None else hp["layer"]
    if not 0 <= layer < n_layers:
        raise ValueError(f"RMU: layer must lie in [0, {n_layers - 1}], got {layer}")
    return layer


def _rmu_activations(model, batch, hp: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """Residual stream after decoder layer `layer` `[B, T, H]` and the averaging mask `[B, T]`:
    every real token (original RMU) or answer tokens only (`tokens="answer"`, a flat mean over
    the batch's answer tokens). OpenUnlearning's answer-token variant divides a `[B]` sum by a
    `[B, 1]` count, which broadcasts to `[B, B]`: the same direction as a token mean at a
    batch-dependent scale; ours is the plain token mean (metrics appendix)."""
    out = model(**model_inputs(batch), output_hidden_states=True)
    hidden = out.hidden_states[rmu_layer(model, hp) + 1]
    mask = batch["attention_mask"].bool() if hp["tokens"] == "all" else batch["labels"] != losses.IGNORE_INDEX
    return hidden, mask


def forget_rmu(model, batch, ctx: Context) -> torch.Tensor:
    """RMU forget term (WMDP paper): push layer activations on forget data towards c * u, with
    u ~ U[0, 1)^H normalised, drawn once per run (`prepare_rmu`)."""
    hidden, mask = _rmu_activations(model, batch, ctx.hparams)
    return losses.rmu_forget_loss(hidden, ctx.control.to(hidden.device), mask)


def retain_rmu(model, batch, ctx: Context) -> torch.Tensor:
    """RMU retain term: keep layer activations on retain data equal to the frozen model's."""
    if ctx.reference is None:
        raise RuntimeError("RMU's retain term needs the frozen reference model")
    hidden, mask = _rmu_activations(model, batch, ctx.hparams)
    with torch.no_grad():
        frozen, _ = _rmu_activations(ctx.reference, batch, ctx.hparams)
    return losses.rmu_retain_loss(hidden, frozen, mask)


def rmu_parameters(model, hp: dict) -> list[torch.nn.Parameter]:
    """RMU trains only `mlp.down_proj.weight` of layers layer-2 .. layer (the official recipe,
    layers 5-7 of 32 for Zephyr); `train_scope="all"` trains everything (OpenUnlearning TOFU)."""
    if hp["train_scope"] == "all":
        return all_parameters(model, hp)
    layer = rmu_layer(model, hp)
    layers = model.model.layers
    return [layers[i].mlp.down_proj.weight for i in range(max(0, layer - 2), layer + 1)]


MASC_DEFAULTS = {
    # self top-10, beta 1, rho 0.7, eta 0.25, cut U[0.2, 0.6] with 32/32 fallback (masc.md s.12, TOFU)
    "competitors": "self", "k": 10, "beta": 1.0, "delta": None, "rho": 0.7, "eta": 0.25,
    "cut_min": 0.2, "cut_max": 0.6, "min_prefix": 32, "min_suffix": 32,
    # weights of the Qwen2.5 scaling runs: lambda_f = 0.1 on the hinge, lambda_r = 1 on KL(theta_0||theta)
    "gamma": 0.1, "alpha": 1.0,
}


@torch.no_grad()
def reference_logprobs(model: torch.nn.Module, examples, pad_token_id: int, batch_size: int = 16) -> torch.Tensor:
    """Summed answer log-probs of every example under `model`, `[N]` (NPO's cached reference)."""
    was_training = model.training
    model.eval()
    values = []
    for batch in batches(examples, batch_size, pad_token_id):
        batch = on_device(batch, model)
        values.append(losses.sequence_logprob(*answer_logits(model, batch)))
    model.train(was_training)
    return torch.cat(values)


def prepare_npo(model, forget, pad_token_id: int, ctx: Context) -> None:
    """NPO's reference is the frozen start model on the forget set: cache its log-probs once."""
    ctx.ref_logprobs = reference_logprobs(model, forget, pad_token_id).to(next(model.parameters()).device)


def rmu_activation_norm(model, forget, pad_token_id: int, hp: dict, batch_size: int = 8) -> float:
    """Mean L2 norm of the hooked layer's activations over the forget set's averaged tokens (the
    start model's): the scale a control vector c * u must exceed to steer rather than shrink
    them (10-16 for the laboratory's models, about 630 for SmolLM2-135M at its middle layer)."""
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in batches(forget, batch_size, pad_token_id):
            hidden, mask = _rmu_activations(model, on_device(batch, model), hp)
            norms = hidden.float().norm(dim=-1)[mask]
            total, count = total + float(norms.sum()), count + int(norms.numel())
    return total / max(count, 1)


def prepare_rmu(model, forget, pad_token_id: int, ctx: Context) -> None:
    """RMU's control vector c * u, u ~ U[0, 1)^H normalised, drawn once from the run's generator.
    With `steering_scale="activation_norm"` the norm of the control vector is `steering` times the
    start model's mean activation norm on the forget set (`rmu_activation_norm`), so one grid of
    multiples fits models whose activations differ by orders of magnitude; "absolute" (the official
    code) takes `steering` as the norm itself."""
    u = torch.rand(model.config.hidden_size, generator=ctx.generator)
    scale = 1.0
    if ctx.hparams["steering_scale"] == "activation_norm":
        scale = rmu_activation_norm(model, forget, pad_token_id, ctx.hparams)
    ctx.control = ctx.hparams["steering"] * scale * u / u.norm()


def check_rmu_lora(hparams: dict, lora: dict | None) -> None:
    if lora is not None and hparams.get("train_scope") == "rmu":
        raise ValueError("RMU's down-projection scope and LoRA exclude each other; set train_scope=all")


def all_parameters(model, hparams: dict) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def masc_probe_settings(hparams: dict, overrides: dict | None) -> dict:
    """MASC probes with its own margin settings."""
    return hparams


def default_probe_settings(hparams: dict, overrides: dict | None) -> dict:
    """Any other method stopped by the violation rule probes with MASC's defaults (`overrides` on top)."""
    return {**MASC_DEFAULTS, **(overrides or {})}


def true_answers(records: list[dict], seed: int) -> list[dict]:
    return records


def idk_answers(records: list[dict], seed: int) -> list[dict]:
    """IdkNLL's forget set: the forget questions paired with refusals (`data.idk_records`)."""
    if any("question" not in record for record in records):
        raise ValueError("IdkNLL needs question-answer data (a benchmark of kind 'qa'); this forget set is text")
    return idk_records(records, seed)


REFERENCE_RETAIN = (retain_kl, retain_rmu)  # retain objectives that compare with the frozen start model


@dataclass(frozen=True)
class Method:
    """A registry entry: its forget objective (minimised to forget) and optional retain objective,
    each `objective(model, batch, ctx) -> loss`, default hyper-parameters, and the hooks through
    which it shapes a run, so the engine's loop never names a method.

    - `prepare(model, forget_examples, pad_token_id, ctx)`: state computed once before training
      (NPO's cached reference log-probs, RMU's control vector);
    - `parameters(model, hparams)`: what it trains (RMU: a few down-projections);
    - `check(hparams, lora)`: combinations it refuses (RMU's scope with LoRA);
    - `probe_settings(hparams, overrides)`: margin settings of the violation probe;
    - `forget_records(records, seed)`: the answers its forget set is encoded with (IdkNLL);
    - `default_stop`: 'violation' for a method that stops by itself (MASC), else 'fixed';
    - `names`: what a paper or toolkit calls the same recipe, where that differs from `name`
      (`method_name`).
    """

    name: str
    forget: Objective
    retain: Objective | None
    defaults: dict
    default_stop: str = "fixed"
    prepare: Callable | None = None
    parameters: Callable = all_parameters
    check: Callable | None = None
    probe_settings: Callable = default_probe_settings
    forget_records: Callable = true_answers
    names: dict = field(default_factory=dict)

    @property
    def needs_reference(self) -> bool:
        """A frozen copy of the initial model is held during training (KL or RMU retain, teacher mode)."""
        return self.retain in REFERENCE_RETAIN or self.defaults.get("competitors") == "teacher"

    def hparams(self, **overrides) -> dict:
        """Defaults updated by `overrides`; unknown names raise a one-line ValueError."""
        unknown = sorted(set(overrides) - set(self.defaults))
        if unknown:
            raise ValueError(f"{self.name} has no hyper-parameter {unknown[0]!r}; allowed: {', '.join(sorted(self.defaults))}")
        for key, value in overrides.items():
            _check_hparam_type(self.name, key, value, self.defaults[key])
        merged = {**self.defaults, **overrides}
        validate_hparams(self.name, merged)
        return merged


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_hparam_type(method: str, key: str, value, default) -> None:
    """An override has its default's kind (a finite number for a number, a string for a string)."""
    if _is_number(default) and not (_is_number(value) and math.isfinite(value)):
        raise ValueError(f"{method}: {key} must be a finite number like its default {default!r}, got {value!r}")
    if not _is_number(default) and default is not None and type(value) is not type(default):
        raise ValueError(f"{method}: {key} must be a {type(default).__name__} like its default {default!r}, "
                         f"got {value!r}")


def validate_hparams(name: str, hp: dict) -> None:
    """Check ranges where a wrong value would otherwise fail deep inside the loop."""
    if "rho" in hp:
        tau_from_rho(hp["rho"])
    if "k" in hp and hp["k"] < 1:
        raise ValueError(f"{name}: k must be >= 1, got {hp['k']!r}")
    for key in ("beta", "eta"):
        if key in hp and not hp[key] > 0:
            raise ValueError(f"{name}: {key} must be > 0, got {hp[key]!r}")
    for key in ("alpha", "gamma"):
        if key in hp and hp[key] < 0:
            raise ValueError(f"{name}: {key} must be >= 0, got {hp[key]!r}")
    if hp.get("tokens", "all") not in ("all", "answer"):
        raise ValueError(f"{name}: tokens must be 'all' or 'answer', got {hp['tokens']!r}")
    if hp.get("train_scope", "rmu") not in ("rmu", "all"):
        raise ValueError(f"{name}: train_scope must be 'rmu' or 'all', got {hp['train_scope']!r}")
    if hp.get("steering_scale", "absolute") not in ("absolute", "activation_norm"):
        raise ValueError(f"{name}: steering_scale must be 'absolute' or 'activation_norm', got {hp['steering_scale']!r}")
    if "steering" in hp and not hp["steering"] > 0:
        raise ValueError(f"{name}: steering must be > 0, got {hp['steering']!r}")
    if hp.get("competitors", "self") not in ("self", "teacher"):
        raise ValueError(f"{name}: competitors must be 'self' or 'teacher', got {hp['competitors']!r}")


_GD = {"alpha": 1.0, "gamma": 1.0}
_RMU = dict(prepare=prepare_rmu, parameters=rmu_parameters, check=check_rmu_lora)
METHODS: dict[str, Method] = {m.name: m for m in (
    Method("GA", forget_ga, None, {"gamma": 1.0}),
    Method("GradDiff", forget_ga, retain_nll, dict(_GD), names={"sago": "GA+GD", "masc": "GA+GDR"}),
    Method("GA+KLR", forget_ga, retain_kl, dict(_GD)),
    Method("NPO", forget_npo, None, {"gamma": 1.0, "beta": 0.1}, prepare=prepare_npo),
    Method("NPO+GD", forget_npo, retain_nll, {**_GD, "beta": 0.1}, prepare=prepare_npo,
           names={"openunlearning": "NPO"}),
    Method("NPO+KLR", forget_npo, retain_kl, {**_GD, "beta": 0.1}, prepare=prepare_npo),
    # MASC paper's SimNPO baseline (Unlearn-Simple TOFU forget10): beta 4.5, forget weight 0.125
    Method("SimNPO", forget_simnpo, None, {"gamma": 1.0, "beta": 4.5, "simnpo_gamma": 0.0}),
    Method("SimNPO+GD", forget_simnpo, retain_nll, {"alpha": 1.0, "gamma": 0.125, "beta": 4.5, "simnpo_gamma": 0.0}),
    # RMU (WMDP paper): hook the middle layer, train its and the two previous down-projections,
    # steering c and retain weight alpha need per-model tuning (official Zephyr: c 6.5, alpha 1200)
    Method("RMU", forget_rmu, retain_rmu, {"gamma": 1.0, "alpha": 100.0, "steering": 6.5, "steering_scale": "absolute",
                                           "layer": None, "tokens": "all", "train_scope": "rmu"}, **_RMU),
    Method("IdkNLL", forget_idk, retain_nll, dict(_GD), forget_records=idk_answers),
    Method("MASC", forget_masc, retain_kl, dict(MASC_DEFAULTS), default_stop="violation",
           probe_settings=masc_probe_settings),
)}


def method_name(name: str, source: str) -> str:
    """What `source` (a paper, "sago" or "masc", or a toolkit, "openunlearning") calls the method
    registered as `name`: GradDiff is the SAGO paper's GA+GD; a name outside the registry or without
    another name there is returned as it is."""
    return METHODS[name].names.get(source, name) if name in METHODS else name


def get_method(name: str) -> Method:
    """Look a method up by its one name; the error lists every allowed name."""
    if name not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {name!r}")
    return METHODS[name]
