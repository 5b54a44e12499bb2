# expect: index_dtype fails_eager_too
import torch


@torch.compile(backend="aot_eager")
def loss_fn(logits, target):
    return torch.nn.functional.nll_loss(logits.log_softmax(-1), target)


print(loss_fn(torch.randn(4, 5), torch.tensor([1.0, 2.0, 0.0, 3.0])))
