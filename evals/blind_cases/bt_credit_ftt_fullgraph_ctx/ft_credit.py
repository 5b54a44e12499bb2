"""FT-Transformer style credit-default model on synthetic tabular data (train + eval).

Numerical features are tokenized per column, categorical features embedded, a [CLS] token is
prepended and a few pre-norm transformer blocks produce the default logit.
"""
import argparse
import contextlib
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

log = logging.getLogger("ftt")

N_NUM = 12
CAT_CARD = [7, 12, 4, 31, 3]
BACKENDS = {"math": [SDPBackend.MATH], "flash": [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]}


class FeatureTokenizer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.num_w = nn.Parameter(torch.randn(N_NUM, d) * 0.02)
        self.num_b = nn.Parameter(torch.zeros(N_NUM, d))
        self.cat = nn.ModuleList([nn.Embedding(c, d) for c in CAT_CARD])
        self.cls = nn.Parameter(torch.zeros(1, 1, d))

    def forward(self, x_num, x_cat):
        t_num = x_num.unsqueeze(-1) * self.num_w + self.num_b          # (B, N_NUM, d)
        t_cat = torch.stack([emb(x_cat[:, i]) for i, emb in enumerate(self.cat)], dim=1)
        cls = self.cls.expand(x_num.shape[0], -1, -1)
        return torch.cat([cls, t_num, t_cat], dim=1)


class Block(nn.Module):
    def __init__(self, d, heads, drop):
        super().__init__()
        self.h = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Dropout(drop), nn.Linear(2 * d, d))
        self.drop = drop

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.h, D // self.h).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, dropout_p=self.drop if self.training else 0.0)
        x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
        return x + self.ff(self.ln2(x))


class FTTransformer(nn.Module):
    def __init__(self, d=64, heads=4, depth=3, drop=0.1, attn_backend="math", bf16=False):
        super().__init__()
        self.tok = FeatureTokenizer(d)
        self.blocks = nn.ModuleList([Block(d, heads, drop) for _ in range(depth)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)
        self.attn_backends = BACKENDS[attn_backend]
        self.bf16 = bf16

    def _runtime_contexts(self, stack):
        stack.enter_context(sdpa_kernel(self.attn_backends))
        if self.bf16:
            stack.enter_context(torch.autocast("cpu", dtype=torch.bfloat16))

    def forward(self, x_num, x_cat):
        with contextlib.ExitStack() as stack:
            self._runtime_contexts(stack)
            h = self.tok(x_num, x_cat)
            for blk in self.blocks:
                h = blk(h)
            return self.head(self.norm(h[:, 0])).squeeze(-1).float()


def make_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x_num = torch.randn(n, N_NUM, generator=g)
    x_cat = torch.stack([torch.randint(0, c, (n,), generator=g) for c in CAT_CARD], dim=1)
    score = x_num[:, 0] - 0.7 * x_num[:, 3] + 0.5 * (x_cat[:, 1] % 3 == 0).float()
    y = (score + 0.5 * torch.randn(n, generator=g) > 0.3).float()
    return x_num, x_cat, y


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--attn-backend", default="math", choices=list(BACKENDS))
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--no-compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.manual_seed(args.seed)

    xn, xc, y = make_data(args.steps * args.batch, args.seed)
    vxn, vxc, vy = make_data(2048, args.seed + 1)
    model = FTTransformer(attn_backend=args.attn_backend, bf16=args.bf16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    # one graph for the whole model: we want to know immediately if something breaks it
    fwd = model if args.no_compile else torch.compile(model, fullgraph=True)

    model.train()
    t0 = time.perf_counter()
    for step in range(args.steps):
        sl = slice(step * args.batch, (step + 1) * args.batch)
        loss = F.binary_cross_entropy_with_logits(fwd(xn[sl], xc[sl]), y[sl])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step == 0:
            log.info("first step %.1f s", time.perf_counter() - t0)
            t1 = time.perf_counter()
        elif step % 10 == 0:
            log.info("step %3d loss %.4f", step, loss.item())
    log.info("steady %.1f ms/step", (time.perf_counter() - t1) / (args.steps - 1) * 1e3)

    model.eval()
    with torch.no_grad():
        pred = torch.sigmoid(fwd(vxn, vxc))
    acc = ((pred > 0.5).float() == vy).float().mean().item()
    log.info("val acc %.3f", acc)


if __name__ == "__main__":
    main()
