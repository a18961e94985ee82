# Operator counts of a profiled step, as bench/ops.ts compares them with tailor's
# (torch.profiler.countOps): every call, less those a _foreach_ operator's CPU fallback makes
# inside it (one fused kernel on CUDA) and those an operator makes to its own other overload
# (add_(Scalar) to add_(Tensor): one computation, two calls).
import torch


def _in_foreach(event):
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith("aten::_foreach_"):
            return True
        parent = parent.cpu_parent
    return False


def _redispatched(event):
    return event.cpu_parent is not None and event.cpu_parent.name == event.name


def count_ops(fn):
    """{operator name: calls} of fn (one call), by the rules above."""
    with torch.autograd.profiler.profile() as prof:
        fn()
    counts = {}
    for event in prof.function_events:
        if not _in_foreach(event) and not _redispatched(event):
            counts[event.name] = counts.get(event.name, 0) + 1
    return counts
