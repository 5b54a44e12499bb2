"""What torch._dynamo.config.reorderable_logging_functions replays: a logger call in the compiled
function itself runs after the graph; one in a helper the compiled function calls is dropped without
a warning (blind A/B batch 10; measured on torch 2.14.1 and 2.15.0). tests/test_knowledge.py checks
that the installed torch still behaves as knowledge/graph_breaks.yaml says."""
import logging
import sys

import torch

logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="%(message)s")
log = logging.getLogger("monitor")
torch._dynamo.config.reorderable_logging_functions.add(log.debug)


def helper(x):
    log.debug("from helper %s", x.sum())
    return x * 2


@torch.compile(backend="eager", fullgraph=True)
def step(x):
    y = helper(x)
    log.debug("from the compiled function %s", y.sum())
    return y + 1


step(torch.ones(3))
print("done")
