"""A multi-task loss over a dict of labels whose keys depend on the batch's source: each new key set (or
order) is a new graph."""
import torch
import torch.nn.functional as F

heads = {t: torch.nn.Linear(16, 3) for t in ("topic", "sentiment", "intent")}
SOURCES = [("topic",), ("topic", "sentiment"), ("sentiment", "intent"), ("intent", "topic", "sentiment")]


@torch.compile(backend="eager")
def multitask_loss(h, labels):
    loss = h.new_zeros(())
    for task, y in labels.items():
        loss = loss + F.cross_entropy(heads[task](h), y)
    return loss


for step in range(8):
    h = torch.randn(8, 16)
    labels = {t: torch.randint(0, 3, (8,)) for t in SOURCES[step % len(SOURCES)]}
    print(step, f"{multitask_loss(h, labels).item():.3f}")
