import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 2000
N_TAGS = 17
MAX_LEN = 48


def synthetic_corpus(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    tok = torch.randint(1, VOCAB, (n, MAX_LEN), generator=g)
    lengths = torch.randint(12, MAX_LEN + 1, (n,), generator=g)
    mask = torch.arange(MAX_LEN)[None, :] < lengths[:, None]
    tok = tok * mask
    tags = (tok * 7 + torch.roll(tok, 1, dims=1) * 3) % N_TAGS
    tags = tags.masked_fill(~mask, -100)
    sent = (tok.float().mean(1) > VOCAB / 2 * 0.8).long()
    return tok, mask, tags, sent


class ConvBlock(nn.Module):
    def __init__(self, d, k=5, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(d, 2 * d, k, padding=dilation * (k // 2), dilation=dilation)
        self.norm = nn.LayerNorm(d)

    def forward(self, x, mask):
        h = self.norm(x).transpose(1, 2)
        a, b = self.conv(h).chunk(2, dim=1)
        h = (a * torch.sigmoid(b)).transpose(1, 2)
        return (x + h) * mask[..., None]


class Tagger(nn.Module):
    def __init__(self, d=128, depth=4):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d, padding_idx=0)
        self.blocks = nn.ModuleList([ConvBlock(d, dilation=2 ** (i % 3)) for i in range(depth)])
        self.tag_head = nn.Linear(d, N_TAGS)
        self.sent_head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, 2))

    def forward(self, tok, mask):
        x = self.emb(tok)
        for blk in self.blocks:
            x = blk(x, mask)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return self.tag_head(x), self.sent_head(pooled)


class Config:
    aux_max = 0.5
    aux_cycle = 50
    label_smoothing = 0.05


def aux_weight(step, cfg):
    phase = (step % cfg.aux_cycle) / cfg.aux_cycle
    return cfg.aux_max * 0.5 * (1 - math.cos(2 * math.pi * phase))


def train_step(model, tok, mask, tags, sent, step, cfg):
    tag_logits, sent_logits = model(tok, mask)
    tag_loss = F.cross_entropy(tag_logits.reshape(-1, N_TAGS), tags.reshape(-1),
                               ignore_index=-100, label_smoothing=cfg.label_smoothing)
    sent_loss = F.cross_entropy(sent_logits, sent)
    w = aux_weight(step, cfg)
    return tag_loss + w * sent_loss, tag_loss.detach(), sent_loss.detach()


@torch.no_grad()
def tag_accuracy(model, tok, mask, tags):
    model.eval()
    logits, _ = model(tok, mask)
    model.train()
    pred = logits.argmax(-1)
    valid = tags != -100
    return (pred[valid] == tags[valid]).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    tok, mask, tags, sent = synthetic_corpus(2048)
    vtok, vmask, vtags, _ = synthetic_corpus(256, seed=1)
    cfg = Config()
    model = Tagger()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    step_fn = train_step if args.no_compile else torch.compile(train_step)

    t_start = time.time()
    for step in range(args.steps):
        idx = torch.randint(0, tok.shape[0], (args.batch,))
        t0 = time.time()
        loss, tl, sl = step_fn(model, tok[idx], mask[idx], tags[idx], sent[idx], step, cfg)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dt = time.time() - t0
        if step < 3 or step % 10 == 0:
            print(f"step {step:3d} loss={loss.item():.4f} tag={tl.item():.4f} sent={sl.item():.4f} "
                  f"aux_w={aux_weight(step, cfg):.3f} ({dt * 1000:.0f} ms)")
    print(f"val tag acc={tag_accuracy(model, vtok, vmask, vtags):.4f} total {time.time() - t_start:.1f}s")


if __name__ == "__main__":
    main()
