import torch
from torch.optim import Optimizer

from compile_utils import compile_or_eager


@compile_or_eager(fullgraph=True)
def _lion_update(params, grads, exp_avgs, lr, beta1, beta2, weight_decay):
    # decoupled weight decay
    torch._foreach_mul_(params, 1.0 - lr * weight_decay)
    # update direction: sign(beta1 * m + (1 - beta1) * g)
    updates = torch._foreach_lerp(exp_avgs, grads, 1.0 - beta1)
    updates = torch._foreach_sign(updates)
    torch._foreach_mul_(updates, lr)
    torch._foreach_sub_(params, updates)
    # momentum tracks the gradient with the slower beta2
    torch._foreach_lerp_(exp_avgs, grads, 1.0 - beta2)


class Lion(Optimizer):
    """Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms")."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params, grads, exp_avgs = [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)
                params.append(p)
                grads.append(p.grad)
                exp_avgs.append(state["exp_avg"])
            if not params:
                continue
            beta1, beta2 = group["betas"]
            lr = torch.tensor(group["lr"], dtype=torch.float32)
            _lion_update(params, grads, exp_avgs, lr, beta1, beta2, group["weight_decay"])
        return loss
