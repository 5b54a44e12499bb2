"""Next-word-prediction model release tool.

The on-device runtime consumes a torch.export artifact (.pt2).  Exporting is slow
and the graph only changes when the architecture changes, so the release flow is:

  build    - export the architecture once and save artifacts/nwp.pt2
  train    - (nightly) fine-tune and write checkpoints/nwp_<tag>.pt
  refresh  - load artifacts/nwp.pt2, load the new checkpoint into it, verify it
             against the eager model on the golden set, and ship it

`python nwp_release.py all` runs the three steps in one go (what CI does).
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 512
D_MODEL = 64
N_HEADS = 4
N_LAYERS = 2
SEQ = 16
ART_DIR = "artifacts"
CKPT_DIR = "checkpoints"


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, h, batch_first=True)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, causal_mask):
        h = self.ln1(x)
        a, _ = self.attn(h, h, h, attn_mask=causal_mask, need_weights=False)
        x = x + a
        return x + self.mlp(self.ln2(x))


class NextWordModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        nn.init.normal_(self.embed.weight, std=0.05)
        self.pos = nn.Parameter(torch.zeros(SEQ, D_MODEL))
        self.blocks = nn.ModuleList([Block(D_MODEL, N_HEADS) for _ in range(N_LAYERS)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.out_bias = nn.Parameter(torch.zeros(VOCAB))
        # output projection shares the input embedding matrix
        self._tied = [self.embed.weight]
        self.register_buffer(
            "causal_mask", torch.triu(torch.full((SEQ, SEQ), float("-inf")), diagonal=1), persistent=False
        )

    def forward(self, ids):
        x = self.embed(ids) + self.pos[: ids.shape[1]]
        for blk in self.blocks:
            x = blk(x, self.causal_mask)
        x = self.ln_f(x[:, -1])
        return F.linear(x, self._tied[0], self.out_bias)


def golden_set(n=32, seed=123):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, VOCAB, (n, SEQ), generator=g)


def synthetic_corpus(n=256, seed=7):
    # a toy "language": next token = (3 * last + 11) % VOCAB, with some noise
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, VOCAB, (n, SEQ + 1), generator=g)
    for t in range(1, SEQ + 1):
        keep = torch.rand(n, generator=g) < 0.8
        ids[:, t] = torch.where(keep, (3 * ids[:, t - 1] + 11) % VOCAB, ids[:, t])
    return ids[:, :SEQ], ids[:, SEQ]


def cmd_build():
    torch.manual_seed(0)
    model = NextWordModel().eval()
    example = (golden_set(4),)
    batch = torch.export.Dim("batch", min=1, max=256)
    ep = torch.export.export(model, example, dynamic_shapes={"ids": {0: batch}})
    os.makedirs(ART_DIR, exist_ok=True)
    path = os.path.join(ART_DIR, "nwp.pt2")
    torch.export.save(ep, path)
    with torch.no_grad():
        same = torch.allclose(ep.module()(example[0]), model(example[0]), atol=1e-5)
    print(f"[build] exported {path} ({os.path.getsize(path) / 1e3:.0f} kB), matches eager: {same}")


def cmd_train(tag, steps=60):
    torch.manual_seed(1)
    model = NextWordModel()
    ckpt_prev = os.path.join(CKPT_DIR, "nwp_base.pt")
    if os.path.exists(ckpt_prev):
        model.load_state_dict(torch.load(ckpt_prev))
    x, y = synthetic_corpus()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        idx = torch.randint(0, x.shape[0], (32,))
        loss = F.cross_entropy(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps - 1:
            print(f"[train] step {step:3d} loss {loss.item():.3f}")
    os.makedirs(CKPT_DIR, exist_ok=True)
    path = os.path.join(CKPT_DIR, f"nwp_{tag}.pt")
    torch.save(model.state_dict(), path)
    print(f"[train] wrote {path} ({len(model.state_dict())} tensors)")
    return path


@torch.no_grad()
def cmd_refresh(ckpt_path, atol=1e-4):
    state = torch.load(ckpt_path)
    ep = torch.export.load(os.path.join(ART_DIR, "nwp.pt2"))
    runtime = ep.module()
    result = runtime.load_state_dict(state, strict=True)
    print(f"[refresh] loaded {ckpt_path} into artifact: {result}")

    reference = NextWordModel().eval()
    reference.load_state_dict(state)
    ids = golden_set()
    ref_logits = reference(ids)
    art_logits = runtime(ids)
    diff = (ref_logits - art_logits).abs().max().item()
    top1 = (ref_logits.argmax(-1) == art_logits.argmax(-1)).float().mean().item()
    x, y = synthetic_corpus(n=128, seed=99)
    acc_ref = (reference(x).argmax(-1) == y).float().mean().item()
    acc_art = (runtime(x).argmax(-1) == y).float().mean().item()
    print(f"[refresh] golden max|diff| {diff:.4g}, top-1 agreement {top1:.2f}")
    print(f"[refresh] held-out accuracy: eager {acc_ref:.3f}  artifact {acc_art:.3f}")
    if diff > atol:
        raise SystemExit("[refresh] artifact does not match the checkpoint - refusing to ship")
    print("[refresh] OK, shipping")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("step", choices=["build", "train", "refresh", "all"])
    ap.add_argument("--tag", default="nightly")
    args = ap.parse_args()
    if args.step in ("build", "all"):
        cmd_build()
    ckpt = os.path.join(CKPT_DIR, f"nwp_{args.tag}.pt")
    if args.step in ("train", "all"):
        ckpt = cmd_train(args.tag)
    if args.step in ("refresh", "all"):
        cmd_refresh(ckpt)


if __name__ == "__main__":
    main()
