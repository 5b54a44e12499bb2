"""Support-ticket router: small transformer encoder trained on hashed token ids.

Trains for a couple of epochs with a compiled train step and reports
validation accuracy after every epoch.
"""
import argparse
import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class RouterConfig:
    vocab_size: int = 4096
    max_len: int = 48
    d_model: int = 96
    n_heads: int = 4
    n_layers: int = 2
    ffn_mult: int = 4
    n_queues: int = 12
    dropout: float = 0.1
    batch_size: int = 32
    lr: float = 3e-4
    epochs: int = 2


class TicketDataset(Dataset):
    """Synthetic stand-in for the hashed ticket dump (token ids + queue label)."""

    def __init__(self, n_items, cfg, seed):
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, cfg.n_queues, (n_items,), generator=g)
        base = torch.randint(1, cfg.vocab_size, (n_items, cfg.max_len), generator=g)
        # queue-specific keyword tokens so the task is learnable
        kw = (self.labels[:, None] * 37 + torch.arange(4)[None, :] * 5) % cfg.vocab_size + 1
        pos = torch.randint(0, cfg.max_len, (n_items, 4), generator=g)
        base.scatter_(1, pos, kw)
        lengths = torch.randint(cfg.max_len // 2, cfg.max_len + 1, (n_items,), generator=g)
        pad = torch.arange(cfg.max_len)[None, :] >= lengths[:, None]
        self.tokens = base.masked_fill(pad, 0)

    def __len__(self):
        return self.tokens.shape[0]

    def __getitem__(self, i):
        return self.tokens[i], self.labels[i]


class SelfAttention(nn.Module):
    def __init__(self, cfg: RouterConfig):
        super().__init__()
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads
        self.batch_size = cfg.batch_size
        self.seq_len = cfg.max_len
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.drop = cfg.dropout

    def _heads(self, t):
        return t.view(self.batch_size, self.seq_len, self.n_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, key_padding):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = self._heads(q), self._heads(k), self._heads(v)
        attn_mask = ~key_padding[:, None, None, :]
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, dropout_p=self.drop if self.training else 0.0
        )
        out = out.transpose(1, 2).reshape(x.shape)
        return self.proj(out)


class EncoderBlock(nn.Module):
    def __init__(self, cfg: RouterConfig):
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.ffn = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.ffn_mult * cfg.d_model),
            nn.GELU(),
            nn.Linear(cfg.ffn_mult * cfg.d_model, cfg.d_model),
        )
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, key_padding):
        x = x + self.drop(self.attn(self.ln1(x), key_padding))
        x = x + self.drop(self.ffn(self.ln2(x)))
        return x


class TicketRouter(nn.Module):
    def __init__(self, cfg: RouterConfig):
        super().__init__()
        self.tok = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, cfg.max_len, cfg.d_model) * 0.02)
        self.blocks = nn.ModuleList([EncoderBlock(cfg) for _ in range(cfg.n_layers)])
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.n_queues)

    def forward(self, tokens):
        key_padding = tokens.eq(0)
        x = self.tok(tokens) + self.pos
        for blk in self.blocks:
            x = blk(x, key_padding)
        x = self.ln_f(x)
        keep = (~key_padding).unsqueeze(-1).to(x.dtype)
        pooled = (x * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        return self.head(pooled)


def train_step(model, opt, tokens, labels):
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.05)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.detach(), (logits.argmax(-1) == labels).float().mean()


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    for tokens, labels in loader:
        pred = model(tokens).argmax(-1)
        correct += (pred == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / max(total, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train-items", type=int, default=1000)
    ap.add_argument("--val-items", type=int, default=256)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    cfg = RouterConfig()
    train_ds = TicketDataset(args.train_items, cfg, seed=1)
    val_ds = TicketDataset(args.val_items, cfg, seed=2)
    train_dl = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True)
    val_dl = DataLoader(val_ds, batch_size=cfg.batch_size, shuffle=False)

    model = TicketRouter(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    step_fn = train_step if args.no_compile else torch.compile(train_step)
    print(f"params={sum(p.numel() for p in model.parameters())/1e6:.2f}M "
          f"train_batches={math.ceil(len(train_ds)/cfg.batch_size)} compile={not args.no_compile}")

    step = 0
    for epoch in range(cfg.epochs):
        t0 = time.time()
        for tokens, labels in train_dl:
            loss, acc = step_fn(model, opt, tokens, labels)
            if step % 10 == 0:
                print(f"epoch {epoch} step {step:4d} loss {loss.item():.4f} acc {acc.item():.3f}")
            step += 1
        val_acc = evaluate(model, val_dl)
        print(f"epoch {epoch} done in {time.time()-t0:.1f}s  val_acc={val_acc:.3f}")


if __name__ == "__main__":
    main()
