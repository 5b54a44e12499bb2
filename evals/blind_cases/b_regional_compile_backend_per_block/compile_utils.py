"""Regional compilation helpers shared by our training entry points."""
import time
from collections import defaultdict

import torch
from torch._inductor.compile_fx import compile_fx

COMPILE_STATS = defaultdict(lambda: {"graphs": 0, "seconds": 0.0})


def inductor_with_telemetry(region: str):
    """Inductor backend that records how many graphs each region produced and how long they took."""

    def backend(gm: torch.fx.GraphModule, example_inputs):
        t0 = time.perf_counter()
        compiled = compile_fx(gm, example_inputs)
        COMPILE_STATS[region]["graphs"] += 1
        COMPILE_STATS[region]["seconds"] += time.perf_counter() - t0
        return compiled

    return backend


def compile_repeated_blocks(model: torch.nn.Module, attr: str = "blocks") -> None:
    """Compile each transformer block in place (regional compilation): the blocks share code,
    so the compiled block should be reused instead of compiling one huge graph."""
    for i, blk in enumerate(getattr(model, attr)):
        blk.compile(backend=inductor_with_telemetry(f"{attr}.{i}"))


def report() -> str:
    total = sum(v["seconds"] for v in COMPILE_STATS.values())
    regions = ", ".join(f"{k}={v['graphs']}" for k, v in COMPILE_STATS.items())
    return f"compiled regions: {len(COMPILE_STATS)} [{regions}] backend time {total:.1f}s"
