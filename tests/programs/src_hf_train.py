"""Source-stage test program (minify --source on a graph break): a small but complete causal-LM
training script around a tiny random-init GPT-2 (no downloads): arguments, synthetic data, a
DataLoader, AdamW with warmup, a compiled train step, evaluation, perplexity, a metrics file. The
compiled train step logs its loss with `loss.item()`, which breaks the graph; the source stage
reduces the script to the few lines that still break it the same way (tests/test_source_minify.py).
The backend is aot_eager: the graph break is Dynamo's, and this keeps each run short on a CPU."""
import argparse
import json
import math
import os
import time
from dataclasses import dataclass, field

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import GPT2Config, GPT2LMHeadModel


@dataclass
class TrainConfig:
    vocab_size: int = 256
    seq_len: int = 32
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 64
    batch_size: int = 8
    steps: int = 12
    eval_every: int = 6
    eval_batches: int = 2
    lr: float = 3e-3
    warmup: int = 4
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    seed: int = 0
    out_dir: str = "runs"
    tags: list = field(default_factory=lambda: ["tiny", "gpt2"])


def parse_args():
    p = argparse.ArgumentParser(description="train a tiny GPT-2 on synthetic tokens")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--out-dir", default="runs")
    a = p.parse_args()
    return TrainConfig(steps=a.steps, batch_size=a.batch_size, lr=a.lr, out_dir=a.out_dir)


class SyntheticTokens(Dataset):
    """Random token sequences with a little structure (each token is likely the previous + 1)."""

    def __init__(self, n, seq_len, vocab, seed):
        g = torch.Generator().manual_seed(seed)
        start = torch.randint(0, vocab, (n, 1), generator=g)
        steps = torch.arange(seq_len).unsqueeze(0)
        noise = (torch.rand(n, seq_len, generator=g) < 0.1).long() * torch.randint(0, vocab, (n, seq_len), generator=g)
        self.data = (start + steps + noise) % vocab

    def __len__(self):
        return self.data.shape[0]

    def __getitem__(self, i):
        return self.data[i]


def collate(batch):
    ids = torch.stack(batch)
    return {"input_ids": ids, "labels": ids.clone()}


def build_model(cfg):
    mcfg = GPT2Config(vocab_size=cfg.vocab_size, n_positions=cfg.seq_len, n_embd=cfg.n_embd,
                      n_layer=cfg.n_layer, n_head=cfg.n_head, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(mcfg)


def param_groups(model, weight_decay):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "ln" in name else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def lr_at(step, cfg):
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * 0.5 * (1 + math.cos(math.pi * progress))


class Meter:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def add(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def mean(self):
        return self.total / max(1, self.count)


def make_train_step(model, meter):
    @torch.compile(backend="aot_eager")
    def train_step(batch):
        out = model(input_ids=batch["input_ids"], labels=batch["labels"])
        loss = out.loss
        meter.add(loss.item())          # logs the loss: a graph break in the compiled step
        return loss
    return train_step


@torch.no_grad()
def evaluate(model, loader, n_batches):
    model.eval()
    losses = []
    for i, batch in enumerate(loader):
        if i >= n_batches:
            break
        losses.append(model(**batch).loss.item())
    model.train()
    mean = sum(losses) / max(1, len(losses))
    return {"eval_loss": mean, "perplexity": math.exp(min(mean, 20))}


def save_metrics(history, cfg):
    out_dir = cfg.out_dir
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "metrics.json")
    with open(path, "w") as f:
        json.dump({"config": cfg.__dict__, "history": history}, f, indent=1, default=str)
    return path


def main():
    cfg = parse_args()
    torch.manual_seed(cfg.seed)
    train_ds = SyntheticTokens(cfg.batch_size * cfg.steps, cfg.seq_len, cfg.vocab_size, cfg.seed)
    eval_ds = SyntheticTokens(cfg.batch_size * cfg.eval_batches, cfg.seq_len, cfg.vocab_size, cfg.seed + 1)
    train_loader = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True, collate_fn=collate)
    eval_loader = DataLoader(eval_ds, batch_size=cfg.batch_size, collate_fn=collate)
    model = build_model(cfg)
    opt = torch.optim.AdamW(param_groups(model, cfg.weight_decay), lr=cfg.lr)
    meter = Meter()
    train_step = make_train_step(model, meter)
    history, t0 = [], time.time()
    for step, batch in enumerate(train_loader):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, cfg)
        loss = train_step(batch)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
        if (step + 1) % cfg.eval_every == 0:
            metrics = evaluate(model, eval_loader, cfg.eval_batches)
            metrics.update(step=step + 1, train_loss=meter.mean, lr=lr_at(step, cfg))
            history.append(metrics)
            print(f"step {step + 1}: train {meter.mean:.3f} eval {metrics['eval_loss']:.3f} "
                  f"ppl {metrics['perplexity']:.1f}")
    path = save_metrics(history, cfg)
    print(f"done in {time.time() - t0:.1f}s; metrics in {path}")


if __name__ == "__main__":
    main()
