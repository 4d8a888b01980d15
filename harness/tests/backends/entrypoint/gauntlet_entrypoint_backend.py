"""A dynamo backend that nothing imports by name: registered only through the
`torch_dynamo_backends` entry point of its distribution (beside it), as torch_npu registers "npu".
dynamo finds it when a backend name is looked up, so `--dynamo-backend gauntlet_entrypoint` alone
reaches it once this folder is on the Python path. Refuses any graph calling an op whose name
contains $GAUNTLET_TEST_REFUSE_OP; runs the others as traced.
"""

import os


def compiler(gm, example_inputs):
    refused = os.environ.get("GAUNTLET_TEST_REFUSE_OP", "")
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method") and refused and refused in str(node.target):
            raise NotImplementedError(f"gauntlet_entrypoint has no lowering for {node.target}")
    return gm.forward
