"""Gradient synthesis rules against hand-worked vectors and their stated invariants."""

import pytest
import torch

from unlearning.synthesis import RULES, combine, conflicts, geometry


def vecs(*values):
    return [torch.tensor(v, dtype=torch.float32) for v in values]


def test_sum_rule():
    out = combine(vecs([1.0, 2.0]), vecs([3.0, -1.0]), "sum", alpha=2.0, gamma=0.5)
    assert out[0].tolist() == pytest.approx([6.5, -1.0])


def test_pcgrad_hand_example_from_reference():
    # sago.md: g_r = (4, 3), g_f = (1, -2), dot = -2 -> g_f' = g_f + 2/25 g_r = (1.32, -1.76)
    out = combine(vecs([1.0, -2.0]), vecs([4.0, 3.0]), "pcgrad")
    assert out[0].tolist() == pytest.approx([5.32, 1.24], rel=1e-5)


def test_pcgrad_leaves_non_conflicting_modules_alone():
    out = combine(vecs([1.0, 2.0], [1.0, -2.0]), vecs([1.0, 0.0], [4.0, 3.0]), "pcgrad")
    assert out[0].tolist() == pytest.approx([2.0, 2.0])  # plain sum on the aligned module
    assert out[1].tolist() == pytest.approx([5.32, 1.24], rel=1e-5)


def test_pcgrad_global_uses_one_coefficient():
    g_f = vecs([1.0, 2.0], [-3.0])
    g_r = vecs([1.0, 0.0], [2.0])
    # global dot = 1 - 6 = -5, |g_r|^2 = 5 -> g_f' = g_f + g_r = ([2, 2], [-1])
    out = combine(g_f, g_r, "pcgrad_global")
    assert out[0].tolist() == pytest.approx([3.0, 2.0]) and out[1].tolist() == pytest.approx([1.0])
    # module-wise treats the first tensor as aligned and projects only the second
    module = combine(g_f, g_r, "pcgrad")
    assert module[0].tolist() == pytest.approx([2.0, 2.0]) and module[1].tolist() == pytest.approx([2.0])


def test_sago_hand_example_and_additive_variant():
    g_f, g_r = vecs([1.0, -2.0, 0.0, 3.0]), vecs([4.0, 3.0, 5.0, 0.0])
    # coord 0 aligned -> g_f; coord 1 conflict -> g_r; zeros count as aligned -> g_f
    assert combine(g_f, g_r, "sago")[0].tolist() == pytest.approx([1.0, 3.0, 0.0, 3.0])
    assert combine(g_f, g_r, "sago_additive")[0].tolist() == pytest.approx([5.0, 3.0, 5.0, 3.0])
    assert combine(g_f, g_r, "sago", alpha=2.0, gamma=0.5)[0].tolist() == pytest.approx([0.5, 6.0, 0.0, 1.5])


def random_grads(seed, heavy=False):
    g = torch.Generator().manual_seed(seed)
    shapes = [(7, 5), (5,), (3, 4, 2)]
    draw = (lambda s: torch.randn(s, generator=g) ** 3) if heavy else (lambda s: torch.randn(s, generator=g))
    return [draw(s) for s in shapes], [draw(s) for s in shapes]


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("alpha,gamma", [(1.0, 1.0), (0.1, 1.0), (1.0, 0.3)])
def test_pcgrad_never_opposes_retain_per_module(seed, alpha, gamma):
    g_f, g_r = random_grads(seed, heavy=seed % 2 == 1)
    for out, r in zip(combine(g_f, g_r, "pcgrad", alpha, gamma), g_r):
        assert float((out * r).sum()) >= alpha * float(r.pow(2).sum()) - 1e-4


@pytest.mark.parametrize("seed", range(20))
def test_pcgrad_global_never_opposes_retain_globally(seed):
    g_f, g_r = random_grads(seed)
    out = combine(g_f, g_r, "pcgrad_global")
    total = sum(float((o * r).sum()) for o, r in zip(out, g_r))
    assert total >= sum(float(r.pow(2).sum()) for r in g_r) - 1e-4


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("rule", ["sago", "sago_additive"])
def test_sago_no_coordinate_opposes_retain(seed, rule):
    g_f, g_r = random_grads(seed, heavy=True)
    for out, r in zip(combine(g_f, g_r, rule, 0.5, 2.0), g_r):
        assert bool(((out * r) >= 0).all())


def test_sago_supports_are_disjoint():
    g_f, g_r = random_grads(3)
    for f, r in zip(g_f, g_r):
        conflict = f * r < 0
        kept_f = torch.where(conflict, torch.zeros_like(f), f)
        kept_r = torch.where(conflict, r, torch.zeros_like(r))
        assert float((kept_f * kept_r).sum()) == 0.0


def test_combine_does_not_modify_inputs_and_loops_agree():
    g_f, g_r = random_grads(4)
    before = [t.clone() for t in g_f + g_r]
    for rule in RULES:
        combine(g_f, g_r, rule)
    assert all(torch.equal(a, b) for a, b in zip(before, g_f + g_r))
    # element loop reference for sago
    out = combine(g_f, g_r, "sago")
    for o, f, r in zip(out, g_f, g_r):
        for of, ff, rr in zip(o.flatten().tolist(), f.flatten().tolist(), r.flatten().tolist()):
            assert of == pytest.approx(rr if ff * rr < 0 else ff)


def test_combine_rejects_bad_rule_and_shapes():
    with pytest.raises(ValueError, match="rule must be one of sum, pcgrad"):
        combine(vecs([1.0]), vecs([1.0]), "pcgrad_fancy")
    with pytest.raises(ValueError, match="shape"):
        combine(vecs([1.0, 2.0]), vecs([1.0]), "sum")
    with pytest.raises(ValueError, match="gradients"):
        combine(vecs([1.0]), vecs([1.0], [2.0]), "sum")


def test_geometry_hand_values():
    g_f, g_r = vecs([1.0, -2.0]), vecs([4.0, 3.0])
    final = combine(g_f, g_r, "sago")  # (1, 3)
    geo = geometry(g_f, g_r, final)
    assert geo["cos_forget_retain"] == pytest.approx(-2 / (5 * 5 ** 0.5))
    assert geo["cos_final_retain"] == pytest.approx(13 / (5 * 10 ** 0.5))
    assert geo["conflict_coordinates"] == 0.5 and geo["conflict_modules"] == 1.0


def test_geometry_compares_every_rule_on_the_same_gradients_and_counts_per_module():
    # the counterexample of sago.md s. 5: with a global conflict PCGrad aligns better than SAGO
    g_f, g_r = vecs([1.0, -2.0]), vecs([4.0, 3.0])
    geo = geometry(g_f, g_r, combine(g_f, g_r, "sum"))
    assert geo["cos_retain_pcgrad"] == pytest.approx(0.915, abs=1e-3)
    assert geo["cos_retain_sago"] == pytest.approx(13 / (5 * 10 ** 0.5))
    assert geo["cos_retain_sum"] == pytest.approx(geo["cos_final_retain"])
    # per module kind: two tensors named like a Qwen2 model's
    g_f = [torch.tensor([1.0, -1.0, 1.0, 1.0]), torch.tensor([1.0, 1.0])]
    g_r = [torch.tensor([1.0, 1.0, -1.0, -1.0]), torch.tensor([1.0, 1.0])]
    names = ["model.layers.0.self_attn.q_proj.weight", "model.norm.weight"]
    geo = geometry(g_f, g_r, combine(g_f, g_r, "sum"), names)
    assert geo["conflict_q_proj"] == 0.75 and geo["conflict_norm"] == 0.0


def test_module_group_drops_layer_and_parameter_names():
    from unlearning.synthesis import module_group

    assert module_group("model.layers.3.mlp.down_proj.weight") == "down_proj"
    assert module_group("model.embed_tokens.weight") == "embed_tokens"
    assert module_group("lm_head") == "lm_head"


def _slow_combine(g_f, g_r, rule, alpha, gamma):
    """Each rule written out as its formula, tensor by tensor, with the sign product (float64)."""
    out = []
    dot_all = sum(float((a.double() * b.double()).sum()) for a, b in zip(g_f, g_r))
    norm_all = sum(float((b.double() ** 2).sum()) for b in g_r)
    for a, b in zip(g_f, g_r):
        a, b = a.double(), b.double()
        if rule == "sum":
            out.append(alpha * b + gamma * a)
        elif rule in ("pcgrad", "pcgrad_global"):
            dot, norm = (float((a * b).sum()), float((b ** 2).sum())) if rule == "pcgrad" else (dot_all, norm_all)
            projected = a - dot / (norm + 1e-10) * b if dot < 0 else a
            out.append(alpha * b + gamma * projected)
        else:
            conflict = torch.sign(a) * torch.sign(b) < 0
            out.append(torch.where(conflict, alpha * b, gamma * a) if rule == "sago"
                       else alpha * b + torch.where(conflict, torch.zeros_like(a), gamma * a))
    return out


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("alpha, gamma", [(1.0, 1.0), (0.3, 2.5)])
def test_every_rule_equals_its_formula_written_out(rule, alpha, gamma):
    generator = torch.Generator().manual_seed(3)
    g_f = [torch.randn(7, 5, generator=generator), torch.randn(11, generator=generator)]
    g_r = [torch.randn(7, 5, generator=generator), -g_f[1] + 0.1 * torch.randn(11, generator=generator)]
    g_f[0][0, :3] = torch.tensor([0.0, -0.0, 1e-30])  # zeros and a coordinate whose product underflows
    g_r[0][0, :3] = torch.tensor([-1.0, 2.0, -1e-30])
    fast = combine(g_f, g_r, rule, alpha=alpha, gamma=gamma)
    for got, expected in zip(fast, _slow_combine(g_f, g_r, rule, alpha, gamma)):
        assert torch.allclose(got.double(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("product_up_to", [0, 1 << 22], ids=["by comparisons", "as the sign product"])
def test_the_conflict_test_is_the_sign_product_on_every_kind_of_value(product_up_to, monkeypatch):
    import unlearning.synthesis as synthesis

    monkeypatch.setattr(synthesis, "SIGN_PRODUCT_UP_TO", product_up_to)
    values = torch.tensor([0.0, -0.0, 1e-38, -1e-38, 1e-45, -1e-45, 2.0, -3.0, float("inf"), float("-inf"), float("nan")])
    a, b = torch.meshgrid(values, values, indexing="ij")
    expected = [[x * y < 0 for y in [(v > 0) - (v < 0) for v in values.tolist()]]
                for x in [(v > 0) - (v < 0) for v in values.tolist()]]  # sign(NaN) taken as 0: never a conflict
    assert conflicts(a, b).tolist() == expected
    assert torch.equal(conflicts(a, b), torch.sign(a) * torch.sign(b) < 0)


def _float64_reference_dot(a: torch.Tensor, b: torch.Tensor) -> float:
    """The slow obvious reference: the float32 inputs as exact float64 numbers, their products
    summed with math.fsum (correctly rounded), the way numbers are written on paper."""
    import math

    return math.fsum(x * y for x, y in zip(a.reshape(-1).double().tolist(), b.reshape(-1).double().tolist()))


@pytest.fixture(scope="module")
def large_gradients():
    """Two lists of float32 tensors with 1.5M coordinates in all, correlated so that no dot
    product is near zero (relative accuracy is then meaningful), of mixed magnitudes."""
    generator = torch.Generator().manual_seed(36)
    shapes = [(1000, 800), (500, 1000), (100_000,), (3, 7)]
    g_r = [torch.randn(s, generator=generator) * 10.0 ** torch.randint(-3, 3, (1,), generator=generator).item() for s in shapes]
    g_f = [-0.3 * r + torch.randn(r.shape, generator=generator) * r.abs().mean() for r in g_r]
    assert sum(g.numel() for g in g_r) >= 10**6
    return g_f, g_r


def test_every_dot_product_and_norm_accumulates_in_float64(large_gradients):
    """Issue 36: the dots and squared norms of the rules and of `geometry`, on vectors of 10^6
    coordinates and more, within 1e-9 relative of the correctly rounded float64 reference."""
    from unlearning.synthesis import _dot

    g_f, g_r = large_gradients
    big_f, big_r = torch.cat([g.reshape(-1) for g in g_f]), torch.cat([g.reshape(-1) for g in g_r])
    for a, b in ((big_f, big_r), (big_r, big_r), (big_f, big_f), *zip(g_f, g_r)):
        assert float(_dot(a, b)) == pytest.approx(_float64_reference_dot(a, b), rel=1e-9)
    dot = _float64_reference_dot(big_f, big_r)
    norm_f, norm_r = _float64_reference_dot(big_f, big_f) ** 0.5, _float64_reference_dot(big_r, big_r) ** 0.5
    geo = geometry(g_f, g_r, combine(g_f, g_r, "sum"))
    assert geo["cos_forget_retain"] == pytest.approx(dot / (norm_f * norm_r), rel=1e-9)
    total = [f + r for f, r in zip(g_f, g_r)]  # the sum rule's update, exactly (float32 adds of these values)
    big_total = torch.cat([t.reshape(-1) for t in total])
    expected = _float64_reference_dot(big_total, big_r) / (_float64_reference_dot(big_total, big_total) ** 0.5 * norm_r)
    assert geo["cos_final_retain"] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("rule", ["pcgrad", "pcgrad_global"])
def test_pcgrad_coefficients_are_the_float64_ones(large_gradients, rule):
    """The update equals the formula evaluated in float64 (coefficients from correctly rounded
    dots and norms), up to the float32 rounding of the update itself."""
    from unlearning.synthesis import PCGRAD_EPS

    g_f, g_r = large_gradients
    alpha, gamma = 0.5, 2.0
    if rule == "pcgrad":
        dots = [(_float64_reference_dot(f, r), _float64_reference_dot(r, r)) for f, r in zip(g_f, g_r)]
    else:
        dot = sum(_float64_reference_dot(f, r) for f, r in zip(g_f, g_r))
        dots = [(dot, sum(_float64_reference_dot(r, r) for r in g_r))] * len(g_f)
    for got, f, r, (dot, norm_sq) in zip(combine(g_f, g_r, rule, alpha=alpha, gamma=gamma), g_f, g_r, dots):
        coefficient = dot / (norm_sq + PCGRAD_EPS) if dot < 0 else 0.0
        expected = gamma * f.double() + (alpha - gamma * coefficient) * r.double()
        assert got.dtype == torch.float32
        assert torch.allclose(got.double(), expected, rtol=1e-6, atol=1e-6 * float(expected.abs().max()))


def test_update_geometry_by_hand():
    from unlearning.synthesis import update_geometry

    # update (1, 0) against g_r = (-1, 0) (descends retain: cos +1) and g_f = (0, 2) (orthogonal: 0)
    out = update_geometry([torch.tensor([1.0, 0.0])], [torch.tensor([0.0, 2.0])], [torch.tensor([-1.0, 0.0])])
    assert out == {"cos_update_retain": 1.0, "cos_update_forget": 0.0}
    # (1, 1) against g_r = (1, 0): the step climbs the retain loss, cos(update, -g_r) = -1/sqrt(2)
    out = update_geometry([torch.tensor([1.0, 1.0])], [torch.tensor([1.0, 1.0])], [torch.tensor([1.0, 0.0])])
    assert out["cos_update_retain"] == pytest.approx(-2 ** -0.5) and out["cos_update_forget"] == pytest.approx(-1.0)


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_commutes_with_a_loss_scale(rule):
    """combine(s g_f, s g_r) = s combine(g_f, g_r) for a power-of-two s (fp16's GradScaler): the
    Trainer mixin combines scaled gradients and lets the scaler unscale the result (unlearning.hf)."""
    generator = torch.Generator().manual_seed(5)
    g_f = [torch.randn(6, 4, generator=generator), torch.randn(9, generator=generator)]
    g_r = [torch.randn(6, 4, generator=generator), -g_f[1] + 0.2 * torch.randn(9, generator=generator)]
    scale = 2.0 ** 16
    scaled = combine([scale * g for g in g_f], [scale * g for g in g_r], rule, alpha=0.5, gamma=2.0)
    for got, expected in zip(scaled, combine(g_f, g_r, rule, alpha=0.5, gamma=2.0)):
        assert torch.allclose(got / scale, expected, rtol=1e-6, atol=0)
