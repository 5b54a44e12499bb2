"""torch.linalg.cholesky in a compiled function (blind A/B batch 40: a deep-kernel GP's marginal likelihood): its
error check (aten._linalg_check_errors) is an op with side effects, wrapped in with_effects, and the FX graph
cache bypasses every graph holding it ("Can't cache HigherOrderOperator: with_effects"). --ex: cholesky_ex, with
info checked outside the compiled function: the graph caches."""
import sys

import torch


@torch.compile
def nll(x, y, noise):
    k = torch.exp(-torch.cdist(x, x).square()) + noise * torch.eye(x.shape[0])
    if "--ex" in sys.argv:
        chol, info = torch.linalg.cholesky_ex(k)
    else:
        chol, info = torch.linalg.cholesky(k), None
    alpha = torch.cholesky_solve(y.unsqueeze(-1), chol)
    return 0.5 * (y.unsqueeze(-1) * alpha).sum() + chol.diagonal().log().sum(), info


torch.manual_seed(0)
loss, info = nll(torch.randn(16, 3), torch.randn(16), torch.tensor(0.1))
if info is not None and int(info) != 0:
    raise torch.linalg.LinAlgError(f"the kernel matrix is not positive-definite (info={int(info)})")
print(f"nll {loss.item():.4f}")
