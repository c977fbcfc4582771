"""The host's pace of an implementation, from its own host time per decoder layer.

A step that Python issues takes its host's time, and that time follows the implementation's own
Python (module calls, views, hooks, Triton launches) at the host's speed of the moment. A hot loop
of one PyTorch op does not track it: around host-paced prefills of transformers and of the fused
layout, the hot loop moved 1.3x where the step moved 2x in the same process, and the step's time
per layer ranged over 85-177 hot-loop op times for transformers, 27-88 for the fused layout
(validation/traces/h200/host-track1, validation/expected/h200/host-track1.json). The
implementation's own host time per layer, timed on the same process with a 4-token prefill of the
config at 2 and at 6 layers (the GPU almost idle), tracked it.

So where that time is known (``--host-layer``; the sets of ``impl_bench.py --host-layers``), the
model's host-op unit for the step's Python is that time over the host-op times the model counts per
layer of the step: its kernels' issue and the implementation's own Python work, in the layers and
outside them, are then paid at the pace of that implementation's code on that host. Native host
work (``host_ops_native``: a library's plan) stays at the hot loop's op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import DomainError, InputError, SpecError

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..opdefs import OpDef

# Hosts so slow that one paces the step: the step is evaluated at each until Python's issue is the
# larger term at both depths (a layer issues 50-200 ops, 50+ s at a 1-second op, which a prefill
# of millions of tokens can outlast), so that the difference between the depths is the host's
# alone, exactly linear in the layers.
_SLOW_HOSTS_S = (1.0, 1e3, 1e6)
_DEPTHS = (2, 6)
# A layer's host time below this is no measurement: one PyTorch op alone costs its host microseconds.
MIN_LAYER_S = 1e-6


def _at_depth(params: dict[str, Any], preset: dict[str, Any] | None, depth: int) -> tuple[dict[str, Any], Any]:
    p = dict(params)
    pre = dict(preset) if preset is not None else None
    if pre is not None and "layers" in pre and "layers" not in p:
        pre["layers"] = depth
    else:
        p["layers"] = depth
    return p, pre


def host_ops_per_layer(
    opdef: OpDef, hw: Hardware, params: dict[str, Any], preset: dict[str, Any] | None
) -> float | None:
    """The host-op times the model counts for one decoder layer of this step: the step evaluated
    at 2 and at 6 layers on a host slow enough to pace both, the difference over the 4 layers, in
    units of the host's op. 0 where Python issues nothing (a CUDA graph's replay); None where no
    host, however slow, paces the step (the GPU's work outlasts any issue of it)."""
    from ..roofline import evaluate
    from ..validation import with_host_op, with_impl_pace

    def per_layer(h: Hardware) -> float | None:
        runs = [evaluate(opdef, h, *_at_depth(params, preset, d), memory_reserve=None) for d in _DEPTHS]
        if any(r.expected_launch == "graph" for r in runs):
            return 0.0
        if all(r.expected_limiter == "host" and r.expected_s is not None for r in runs):
            t2, t6 = (float(r.expected_s) for r in runs)  # type: ignore[arg-type]
            return (t6 - t2) / (_DEPTHS[1] - _DEPTHS[0])
        return None

    for slow_s in _SLOW_HOSTS_S:
        slow = with_host_op(hw, slow_s, "a host that paces the step")
        layer = per_layer(slow)
        if layer is None:
            continue
        if layer:
            # native host work (host_ops_native) stays at the hot loop's op whatever the pace: a
            # layer's time must double with the Python pace, or that work grows with the layers
            doubled = per_layer(with_impl_pace(slow, 2 * slow_s, "twice the pace"))
            if doubled is None or abs(doubled - 2 * layer) > 1e-9 * doubled:
                raise SpecError(
                    f"{opdef.source}: host_ops_native grows with the layers; "
                    "native host work is paid once a step (per-layer work belongs in host_ops)"
                )
        return layer / slow_s
    return None


def host_op_from_layer(
    opdef: OpDef, hw: Hardware, params: dict[str, Any], preset: dict[str, Any] | None, layer_s: float
) -> float | None:
    """The host's time per op at which this step's implementation runs, from its measured host time
    per decoder layer (``layer_s``, seconds): that time over the host-op times the model counts
    per layer; None where no host paces the step (the option changes nothing). An InputError for
    an implausible time, an op without named implementations or a step replayed from a CUDA graph,
    a DomainError where the card has no expected time or no hot-loop op, for a mixture of experts
    and under tensor parallelism."""
    from ..roofline import evaluate

    if not MIN_LAYER_S <= layer_s < 1:
        raise InputError(f"--host-layer: {layer_s:.10g} s is not a host time per layer (1 us to under 1 s)")
    if "impl" not in opdef.all_params or "layers" not in opdef.all_params:
        raise InputError(f"--host-layer: op {opdef.name} has no named implementations and layers (decode, prefill do)")
    plain = evaluate(opdef, hw, params, preset)
    if plain.expected_s is None:
        raise DomainError(
            f"--host-layer: {hw.id} has no expected time for this step (its GPU figures are not measured), "
            "and the host's pace alone gives none"
        )
    if hw.expected.torch_op_floor_s is None:
        raise DomainError(
            f"--host-layer: {hw.id} gives no hot-loop op time (torch_op_floor_s), against which native host "
            "work and compiled calls are read"
        )
    # A layer timed at 4 tokens on one GPU: a mixture of experts issues more kernels a layer as its
    # tokens reach more experts, and under tensor parallelism each rank also waits for the others
    # at every collective; neither was timed, so neither is taken
    if any(float(plain.params.get(k) or 1) > 1 for k in ("experts", "gpus")):
        raise DomainError(
            "--host-layer: the implementation's host time per layer is modelled for dense models on one "
            "GPU (a mixture of experts issues more kernels a layer with more tokens, and tensor-parallel "
            "ranks wait for each other); drop --host-layer"
        )
    n = host_ops_per_layer(opdef, hw, params, preset)
    if n is None:
        return None
    if n <= 0:
        raise InputError(
            "--host-layer: this step is replayed from a CUDA graph, so no host issue enters it; drop "
            "--host-layer, or name a step issued from Python (--no-cuda-graphs where the implementation "
            "allows it; for transformers' decode, --impl hf-dynamic)"
            if plain.expected_launch == "graph"
            else "--host-layer: this step issues nothing per layer from Python, so no time per layer paces it"
        )
    return layer_s / n


def paced(
    opdef: OpDef,
    hw: Hardware,
    params: dict[str, Any],
    preset: dict[str, Any] | None,
    layer_s: float,
    whose: str | None = None,
) -> Hardware:
    """``hw`` with the pace its implementation's host time per layer ``layer_s`` gives this step
    (roofcalc.validation.with_impl_pace), noted as ``whose`` (by default, the option and the
    division); ``hw`` itself where no host paces the step. Errors as host_op_from_layer's."""
    from ..validation import with_impl_pace

    op_s = host_op_from_layer(opdef, hw, params, preset, layer_s)
    if op_s is None:  # no host paces this step: the GPU's work outlasts any issue of it
        return hw
    why = whose or f"--host-layer {layer_s * 1e6:g} us a layer over the {layer_s / op_s:.1f} host ops counted in it"
    return with_impl_pace(hw, op_s, why)


__all__ = ["MIN_LAYER_S", "host_op_from_layer", "host_ops_per_layer", "paced"]
