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
model's host-op unit is that time over the host-op times the model counts per layer of the step:
every count of the step (its kernels' issue, the implementation's own work, the layers outside the
loop) is then paid at the pace of that implementation's code on that host.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..opdefs import OpDef

# A host so slow that it paces any step: the GPU's share of the difference between two depths is
# then below a part in 10^5 of it (a layer's GPU work of a few ms against 60+ s of issue).
_SLOW_HOST_S = 1.0
_DEPTHS = (2, 6)


def host_ops_per_layer(opdef: OpDef, hw: Hardware, params: dict[str, Any], preset: dict[str, Any] | None) -> float:
    """The host-op times the model counts for one decoder layer of this step: the step evaluated
    at 2 and at 6 layers on a host slow enough to pace both, the difference over the 4 layers, in
    units of the host's op. 0 where Python issues nothing per layer (a CUDA graph's replay)."""
    from ..roofline import evaluate
    from ..validation import with_host_op

    slow = with_host_op(hw, _SLOW_HOST_S, "a host that paces the step")
    times = []
    for depth in _DEPTHS:
        p = dict(params)
        pre = dict(preset) if preset is not None else None
        if pre is not None and "layers" in pre and "layers" not in p:
            pre["layers"] = depth
        else:
            p["layers"] = depth
        r = evaluate(opdef, slow, p, pre, memory_reserve=None)
        if r.expected_s is None:
            raise InputError(f"--host-layer: {hw.id} has no expected time for this step, so no host pace enters it")
        times.append(r.expected_s)
    per_layer = (times[1] - times[0]) / (_DEPTHS[1] - _DEPTHS[0]) / _SLOW_HOST_S
    return per_layer if per_layer > 1e-3 else 0.0  # below a thousandth of an op: the GPU's rounding


def host_op_from_layer(
    opdef: OpDef, hw: Hardware, params: dict[str, Any], preset: dict[str, Any] | None, layer_s: float
) -> float:
    """The host's time per op at which this step's implementation runs, from its measured host time
    per decoder layer (``layer_s``, seconds): that time over the host-op times the model counts
    per layer. An InputError where the step issues nothing per layer from Python."""
    if not 0 < layer_s < 1:
        raise InputError(f"--host-layer: {layer_s!r} s is not a host time per layer (above 0, under 1 s)")
    n = host_ops_per_layer(opdef, hw, params, preset)
    if n <= 0:
        raise InputError(
            "--host-layer: this step issues nothing per layer from Python (it is replayed from a CUDA "
            "graph): its host's time does not enter it; drop --host-layer, or give --no-cuda-graphs"
        )
    return layer_s / n


__all__ = ["host_op_from_layer", "host_ops_per_layer"]
