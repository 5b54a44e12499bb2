"""A safe Cholesky with a jitter fallback (the GPyTorch pattern) inside a compiled loss: eagerly the
`except LinAlgError` adds jitter to a kernel matrix that is not positive-definite; compiled, the traced try
body never raised, the graph has no except branch, and the error leaves the compiled function."""
import torch


def safe_cholesky(a, jitter=1e-4):
    try:
        return torch.linalg.cholesky(a)
    except torch.linalg.LinAlgError:
        return torch.linalg.cholesky(a + jitter * torch.eye(a.shape[-1]))


def gp_logdet(z):
    k = torch.exp(-0.5 * torch.cdist(z, z).pow(2))      # rank-deficient: more points than features
    return 2 * safe_cholesky(k).diagonal().log().sum()


torch.manual_seed(0)
z = torch.randn(48, 2)
logdet = torch.compile(gp_logdet, backend="aot_eager")
print("logdet", round(logdet(z).item(), 3))
