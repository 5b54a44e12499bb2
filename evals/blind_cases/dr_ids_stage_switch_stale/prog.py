"""Network-flow intrusion classifier: denoising pretraining + supervised fine-tuning.

Stage 1 learns a flow encoder by reconstructing swap-noise corrupted feature rows
(no labels needed), stage 2 trains the attack-class head on the labelled split.
Both stages train the same (compiled) model object.
"""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Stage:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"Stage({self.name})"


PRETRAIN = Stage("pretrain")
FINETUNE = Stage("finetune")

CLASSES = ["benign", "dos", "portscan", "bruteforce", "exfil"]


def make_flows(n, n_features, seed):
    """Synthetic flow records: each attack class shifts a handful of features
    (packet rates, byte ratios, port entropy ...) and adds class-specific
    correlations, on top of heavy-tailed benign traffic."""
    n_cls = len(CLASSES)
    gp = torch.Generator().manual_seed(2024)  # traffic profile, shared by all splits
    proto = torch.randn(n_cls, n_features, generator=gp) * 0.35
    mix = torch.randn(n_cls, n_features, n_features, generator=gp) * (0.6 / math.sqrt(n_features))
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_cls, (n,), generator=g)
    z = torch.randn(n, n_features, generator=g)
    z = z + 0.25 * torch.randn(n, n_features, generator=g).pow(3).clamp(-6, 6)
    x = proto[y] + torch.einsum("nf,nfg->ng", z, mix[y]) + 0.8 * z
    return x.float(), y


class ResBlock(nn.Module):
    def __init__(self, d, p):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)
        self.drop = nn.Dropout(p)

    def forward(self, h):
        return h + self.drop(self.fc2(F.gelu(self.fc1(self.norm(h)))))


class FlowModel(nn.Module):
    def __init__(self, n_features, n_classes, d=160, depth=2, p=0.1, swap_prob=0.15):
        super().__init__()
        self.inp = nn.Linear(n_features, d)
        self.blocks = nn.ModuleList([ResBlock(d, p) for _ in range(depth)])
        self.out_norm = nn.LayerNorm(d)
        self.decoder = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, n_features))
        self.cls_head = nn.Linear(d, n_classes)
        self.swap_prob = swap_prob
        self.stage = PRETRAIN

    def set_stage(self, stage):
        self.stage = stage

    def encode(self, x):
        h = self.inp(x)
        for blk in self.blocks:
            h = blk(h)
        return self.out_norm(h)

    def swap_noise(self, x):
        # replace each cell, with prob swap_prob, by the same column of another row
        perm = torch.argsort(torch.rand(x.shape, device=x.device), dim=0)
        shuffled = torch.gather(x, 0, perm)
        mask = torch.rand(x.shape, device=x.device) < self.swap_prob
        return torch.where(mask, shuffled, x)

    def forward(self, x, y):
        if self.stage is PRETRAIN:
            x_in = self.swap_noise(x) if self.training else x
            recon = self.decoder(self.encode(x_in))
            return F.mse_loss(recon, x), recon
        logits = self.cls_head(self.encode(x))
        return F.cross_entropy(logits, y, label_smoothing=0.05), logits


def standardize(train_x, *others):
    mu = train_x.mean(0, keepdim=True)
    sd = train_x.std(0, keepdim=True).clamp_min(1e-6)
    return [(t - mu) / sd for t in (train_x, *others)]


def batches(x, y, bs, shuffle, g=None):
    idx = torch.randperm(len(x), generator=g) if shuffle else torch.arange(len(x))
    for i in range(0, len(x) - bs + 1, bs):
        j = idx[i:i + bs]
        yield x[j], y[j]


@torch.no_grad()
def evaluate(step_fn, model, x, y, bs):
    model.eval()
    tot, correct, n = 0.0, 0, 0
    for xb, yb in batches(x, y, bs, shuffle=False):
        loss, out = step_fn(xb, yb)
        tot += loss.item() * len(xb)
        if model.stage is FINETUNE:
            correct += (out.argmax(-1) == yb).sum().item()
        n += len(xb)
    model.train()
    return tot / n, correct / max(n, 1)


def run_stage(stage, model, step_fn, data, epochs, lr, bs, g, log_every):
    x_tr, y_tr, x_va, y_va = data
    model.set_stage(stage)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
    total = epochs * (len(x_tr) // bs)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total, pct_start=0.15)
    step = 0
    for ep in range(epochs):
        run = 0.0
        for xb, yb in batches(x_tr, y_tr, bs, shuffle=True, g=g):
            loss, _ = step_fn(xb, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            run += loss.item()
            step += 1
            if step % log_every == 0:
                print(f"  [{stage.name}] step {step:4d}  loss {run / log_every:.4f}")
                run = 0.0
        va_loss, va_acc = evaluate(step_fn, model, x_va, y_va, bs)
        msg = f"[{stage.name}] epoch {ep + 1}/{epochs}  val_loss {va_loss:.4f}"
        if stage is FINETUNE:
            msg += f"  val_acc {va_acc:.3f}"
        print(msg)
    return va_loss, va_acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--pretrain-epochs", type=int, default=3)
    ap.add_argument("--finetune-epochs", type=int, default=4)
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--min-acc", type=float, default=0.80)
    args = ap.parse_args()

    torch.manual_seed(0)
    n_features = 48
    x_unl, _ = make_flows(12000, n_features, seed=1)
    x_tr, y_tr = make_flows(6000, n_features, seed=2)
    x_va, y_va = make_flows(2048, n_features, seed=3)
    x_unl, x_tr, x_va = standardize(x_unl, x_tr, x_va)

    model = FlowModel(n_features, len(CLASSES))
    step_fn = model if args.no_compile else torch.compile(model)
    g = torch.Generator().manual_seed(123)

    t0 = time.perf_counter()
    dummy_y = torch.zeros(len(x_unl), dtype=torch.long)
    run_stage(PRETRAIN, model, step_fn, (x_unl, dummy_y, x_va, y_va),
              args.pretrain_epochs, 2e-3, args.bs, g, log_every=20)
    _, acc = run_stage(FINETUNE, model, step_fn, (x_tr, y_tr, x_va, y_va),
                       args.finetune_epochs, 1e-3, args.bs, g, log_every=10)
    print(f"done in {time.perf_counter() - t0:.1f}s  (compile={'off' if args.no_compile else 'on'})")
    print(f"final val_acc {acc:.3f}")
    if acc < args.min_acc:
        raise SystemExit(f"FAIL: val_acc {acc:.3f} below release bar {args.min_acc}")
    print("PASS")


if __name__ == "__main__":
    main()
