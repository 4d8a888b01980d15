"""A dynamo backend for Gauntlet's tests (docs/compile-path.md#choosing-the-dynamo-backend): it
registers `gauntlet_refusing`, which compiles like dynamo's `eager` backend (the captured graph runs
as it is) but refuses, as a vendor's compiler that lacks a lowering does, any graph that calls an
op whose name contains $GAUNTLET_TEST_REFUSE_OP ("gelu"). Loaded with
GAUNTLET_DYNAMO_BACKEND=gauntlet_refusing@<this file>.
"""

import os

from torch._dynamo import register_backend


@register_backend(name="gauntlet_refusing")
def gauntlet_refusing(gm, example_inputs):
    refused = os.environ.get("GAUNTLET_TEST_REFUSE_OP", "")
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method") and refused and refused in str(node.target):
            raise NotImplementedError(f"gauntlet_refusing has no lowering for {node.target}")
    return gm.forward
