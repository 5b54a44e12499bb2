"""Train a small pyramid MLP-Mixer-ish classifier with a hand-rolled Muon optimizer.

Hidden 2-D weights are updated with Muon (momentum + Newton-Schulz orthogonalisation),
everything else (biases, norms, embeddings, head) with AdamW.

Usage: python train_muon.py [--steps N]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def zeropower_via_newtonschulz5(G, steps: int = 5):
    # quintic Newton-Schulz iteration (Keller Jordan's coefficients)
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G / (G.norm() + 1e-7)
    transposed = G.size(0) > G.size(1)
    if transposed:
        X = X.T
    for _ in range(steps):
        A = X @ X.T
        B = b * A + c * A @ A
        X = a * X + B @ X
    if transposed:
        X = X.T
    return X


@torch.compile(fullgraph=True)
def muon_update_(p, grad, buf, lr, momentum: float, weight_decay: float):
    """In-place Muon step for one weight matrix. lr is a 0-d tensor so schedules don't recompile."""
    buf.lerp_(grad, 1 - momentum)
    g = grad.lerp(buf, momentum)  # nesterov
    update = zeropower_via_newtonschulz5(g)
    scale = max(1.0, p.size(0) / p.size(1)) ** 0.5
    p.mul_(1 - lr * weight_decay)
    p.add_(update * (-lr * scale))


class Muon(torch.optim.Optimizer):
    def __init__(self, params, lr=0.02, momentum=0.95, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            lr = torch.tensor(group["lr"])
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p)
                muon_update_(p, p.grad, state["momentum_buffer"], lr,
                             group["momentum"], group["weight_decay"])


class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, expansion=2):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.tok_fc1 = nn.Linear(tokens, tokens * expansion)
        self.tok_fc2 = nn.Linear(tokens * expansion, tokens)
        self.norm2 = nn.LayerNorm(dim)
        self.ch_fc1 = nn.Linear(dim, dim * expansion)
        self.ch_fc2 = nn.Linear(dim * expansion, dim)

    def forward(self, x):  # x: [B, T, D]
        y = self.norm1(x).transpose(1, 2)
        y = self.tok_fc2(F.gelu(self.tok_fc1(y))).transpose(1, 2)
        x = x + y
        return x + self.ch_fc2(F.gelu(self.ch_fc1(self.norm2(x))))


class PyramidMixer(nn.Module):
    """Patchify 32x32 images; stages halve the token count and grow the width."""

    def __init__(self, n_classes=10, dims=(32, 48, 64, 96)):
        super().__init__()
        self.patch = nn.Linear(3 * 4 * 4, dims[0])
        tokens = 64
        stages = []
        for i, d in enumerate(dims):
            blk = [MixerBlock(tokens, d)]
            if i + 1 < len(dims):
                blk.append(nn.Linear(2 * d, dims[i + 1]))  # merge pairs of tokens
                tokens //= 2
            stages.append(nn.ModuleList(blk))
        self.stages = nn.ModuleList(stages)
        self.norm = nn.LayerNorm(dims[-1])
        self.head = nn.Linear(dims[-1], n_classes)

    def forward(self, img):
        B = img.size(0)
        x = img.unfold(2, 4, 4).unfold(3, 4, 4).permute(0, 2, 3, 1, 4, 5).reshape(B, 64, -1)
        x = self.patch(x)
        for stage in self.stages:
            x = stage[0](x)
            if len(stage) > 1:
                x = stage[1](x.reshape(B, x.size(1) // 2, -1))
        return self.head(self.norm(x.mean(1)))


def synthetic_batch(bs, gen):
    y = torch.randint(0, 10, (bs,), generator=gen)
    img = torch.randn(bs, 3, 32, 32, generator=gen) * 0.5
    img[:, y % 3, :, :] += (y.view(-1, 1, 1).float() / 10.0)
    return img, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = PyramidMixer()

    hidden = [p for n, p in model.named_parameters()
              if p.ndim == 2 and not n.startswith(("patch", "head"))]
    other = [p for n, p in model.named_parameters()
             if not (p.ndim == 2 and not n.startswith(("patch", "head")))]
    print(f"muon params: {len(hidden)} tensors, {len({tuple(p.shape) for p in hidden})} distinct shapes; "
          f"adamw params: {len(other)} tensors")
    opts = [Muon(hidden, lr=0.02, momentum=0.95, weight_decay=0.01),
            torch.optim.AdamW(other, lr=3e-3, weight_decay=0.01)]

    gen = torch.Generator().manual_seed(1)
    t0 = time.time()
    for step in range(1, args.steps + 1):
        img, y = synthetic_batch(64, gen)
        loss = F.cross_entropy(model(img), y)
        loss.backward()
        ts = time.time()
        for o in opts:
            o.step()
            o.zero_grad(set_to_none=True)
        if step == 1 or step % 10 == 0:
            print(f"step {step:3d} loss {loss.item():.4f} opt.step {1000 * (time.time() - ts):7.1f} ms "
                  f"elapsed {time.time() - t0:5.1f}s")


if __name__ == "__main__":
    main()
