"""Gauntlet's side of torch.compile in a worker (Note [Embedded interpreter] in
harness/python/include/gauntlet/python/interpreter.h).

The C++ side calls these functions with the case's tensors (the same tensors, not copies) and
judges what they return. What dynamo recorded about the last compiled call (graphs, graph breaks
with their reasons, recompiles) is read back with `last_stats()`, from dynamo's own counters.
"""

import torch
import torch._dynamo
from torch._dynamo.utils import counters


def _fresh():
    torch._dynamo.reset()
    counters.clear()


def selftest_compiled_sin(x, backend="eager"):
    """sin(x) + 1 through torch.compile with `backend`: the embedding's own check."""
    _fresh()
    fn = torch.compile(lambda a: torch.sin(a) + 1, backend=backend)
    return fn(x)


def selftest_graph_break(x, backend="eager"):
    """A data-dependent branch on a value read on the host: dynamo breaks the graph there."""
    _fresh()

    def branchy(a):
        b = a * 2
        if b.sum().item() > 0:
            return b + 1
        return b - 1

    return torch.compile(branchy, backend=backend)(x)


def last_stats():
    """What dynamo recorded since the last reset: graphs compiled, graph breaks by reason."""
    breaks = {str(reason): int(n) for reason, n in counters["graph_break"].items()}
    return {
        "unique_graphs": int(counters["stats"]["unique_graphs"]),
        "graph_breaks": sum(breaks.values()),
        "break_reasons": breaks,
    }


def fail(message):
    raise ValueError(message)
