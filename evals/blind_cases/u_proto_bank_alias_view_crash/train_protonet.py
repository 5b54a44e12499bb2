"""Online prototype classifier for open-set intent detection.

Encoder + EMA prototype bank. Row 0 of the bank is the "unknown / background"
prototype, rows 1..K are the known classes. The bank refresh runs every step,
so it is compiled.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Cfg:
    vocab = 2000
    seq_len = 32
    d_model = 64
    n_heads = 4
    n_layers = 2
    n_known = 12
    batch = 32
    steps = 30
    lr = 3e-4
    momentum = 0.9
    temperature = 0.1
    seed = 0


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, pad_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, key_padding_mask=pad_mask, need_weights=False)
        x = x + a
        return x + self.ff(self.ln2(x))


class Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, cfg.seq_len, cfg.d_model) * 0.02)
        self.blocks = nn.ModuleList([Block(cfg.d_model, cfg.n_heads) for _ in range(cfg.n_layers)])
        self.ln = nn.LayerNorm(cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, ids):
        pad = ids.eq(0)
        x = self.tok(ids) + self.pos[:, : ids.size(1)]
        for b in self.blocks:
            x = b(x, pad)
        x = self.ln(x)
        keep = (~pad).unsqueeze(-1).float()
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return F.normalize(self.proj(pooled), dim=-1)


class PrototypeBank(nn.Module):
    def __init__(self, n_known, dim):
        super().__init__()
        bank = F.normalize(torch.randn(n_known + 1, dim), dim=-1)
        self.register_buffer("bank", bank)

    @property
    def known(self):
        return self.bank[1:]


def refresh_bank(bank, known, feats, labels, momentum):
    """EMA-update the prototypes in place and return the classifier weight."""
    k1 = bank.size(0)
    onehot = F.one_hot(labels + 1, k1).to(feats.dtype)
    counts = onehot.sum(0).unsqueeze(1)
    sums = onehot.t() @ feats
    means = sums / counts.clamp_min(1.0)
    has = (counts > 0).to(feats.dtype)
    bank.mul_(1 - (1 - momentum) * has).add_((1 - momentum) * has * means)
    bank.div_(bank.norm(dim=-1, keepdim=True).clamp_min(1e-6))
    return known.t()


def make_batch(cfg, gen):
    labels = torch.randint(0, cfg.n_known, (cfg.batch,), generator=gen)
    base = (labels.unsqueeze(1) * 97 + 3) % (cfg.vocab - 1) + 1
    noise = torch.randint(1, cfg.vocab, (cfg.batch, cfg.seq_len), generator=gen)
    use_base = torch.rand(cfg.batch, cfg.seq_len, generator=gen) < 0.5
    ids = torch.where(use_base, (base + torch.arange(cfg.seq_len)) % (cfg.vocab - 1) + 1, noise)
    lengths = torch.randint(cfg.seq_len // 2, cfg.seq_len + 1, (cfg.batch,), generator=gen)
    ids = ids.masked_fill(torch.arange(cfg.seq_len) >= lengths.unsqueeze(1), 0)
    return ids, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--steps", type=int, default=Cfg.steps)
    args = ap.parse_args()
    cfg = Cfg()
    cfg.steps = args.steps

    torch.manual_seed(cfg.seed)
    enc = Encoder(cfg)
    protos = PrototypeBank(cfg.n_known, cfg.d_model)
    opt = torch.optim.AdamW(enc.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(1234)

    update = refresh_bank if args.no_compile else torch.compile(refresh_bank)
    print(f"torch {torch.__version__}  compile={not args.no_compile}")

    weight = protos.known.t()
    t0 = time.time()
    for step in range(cfg.steps):
        ids, labels = make_batch(cfg, gen)
        feats = enc(ids)
        logits = feats @ weight / cfg.temperature
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            weight = update(protos.bank, protos.known, feats.detach(), labels, cfg.momentum)
        if step % 5 == 0 or step == cfg.steps - 1:
            acc = (logits.argmax(-1) == labels).float().mean().item()
            print(f"step {step:3d} loss {loss.item():.4f} acc {acc:.3f} "
                  f"bank_norm {protos.bank.norm(dim=-1).mean().item():.4f} "
                  f"w {tuple(weight.shape)}")
    print(f"done in {time.time() - t0:.1f}s  final loss {loss.item():.4f}")
    print("checksum", round(protos.bank.sum().item(), 5))


if __name__ == "__main__":
    main()
