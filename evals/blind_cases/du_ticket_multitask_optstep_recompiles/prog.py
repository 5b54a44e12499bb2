"""Multi-task ticket triage model: one shared encoder, one head per labelling task.

Each labelled source only carries labels for one task, so batches are drawn
round-robin from the task datasets. The AdamW step was the hot spot in the
profile, so it is compiled (see the "compiled optimizer" recipe).
"""
import time
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FEAT_DIM = 96
HIDDEN = 192
TASKS = {
    "priority": 4,
    "category": 12,
    "sentiment": 3,
    "team": 8,
    "escalate": 2,
}
BATCH = 64
STEPS = 200
LOG_EVERY = 20


# ----------------------------------------------------------------------------
# data: hashed bag-of-words features; labels come from a hidden teacher so the
# tasks are learnable. Every source only labels one task.
# ----------------------------------------------------------------------------
class TaskSource:
    def __init__(self, name, x, y):
        self.name = name
        self.x = x
        self.y = y
        self.pos = 0

    def next_batch(self):
        if self.pos + BATCH > self.x.shape[0]:
            self.pos = 0
        sl = slice(self.pos, self.pos + BATCH)
        self.pos += BATCH
        return self.x[sl], self.y[sl]


def build_sources(n_train=2048, n_val=512):
    gen = torch.Generator().manual_seed(1234)
    train, val = {}, {}
    for t, n_classes in TASKS.items():
        n = n_train + n_val
        x = torch.randn(n, FEAT_DIM, generator=gen)
        teacher = torch.randn(FEAT_DIM, n_classes, generator=gen) / math.sqrt(FEAT_DIM)
        logits = torch.tanh(x @ teacher * 2.0) + 0.1 * torch.randn(n, n_classes, generator=gen)
        y = logits.argmax(dim=1)
        train[t] = TaskSource(t, x[:n_train], y[:n_train])
        val[t] = TaskSource(t, x[n_train:], y[n_train:])
    return train, val


# ----------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEAT_DIM, HIDDEN)
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.mid = nn.Linear(HIDDEN, HIDDEN)
        self.norm2 = nn.LayerNorm(HIDDEN)

    def forward(self, x):
        h = self.norm1(F.gelu(self.inp(x)))
        return self.norm2(h + F.gelu(self.mid(h)))


class TriageModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.heads = nn.ModuleDict({t: nn.Linear(HIDDEN, c) for t, c in TASKS.items()})

    def forward(self, x, task):
        return self.heads[task](self.encoder(x))


def evaluate(model, val):
    model.eval()
    accs = {}
    with torch.no_grad():
        for t, src in val.items():
            logits = model(src.x, t)
            accs[t] = (logits.argmax(1) == src.y).float().mean().item()
    model.train()
    return accs


def main():
    train, val = build_sources()
    model = TriageModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)

    @torch.compile(fullgraph=False)
    def optimizer_step():
        optimizer.step()

    task_names = list(TASKS)
    t_start = time.perf_counter()
    window_t = time.perf_counter()
    window_loss = []
    for step in range(1, STEPS + 1):
        task = task_names[(step - 1) % len(task_names)]
        x, y = train[task].next_batch()

        logits = model(x, task)
        loss = F.cross_entropy(logits, y)

        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer_step()
        window_loss.append(loss.item())

        if step % LOG_EVERY == 0:
            dt = time.perf_counter() - window_t
            print(f"step {step:4d}  loss {sum(window_loss) / len(window_loss):.4f}  "
                  f"{1000 * dt / LOG_EVERY:8.1f} ms/step", flush=True)
            window_t = time.perf_counter()
            window_loss = []

    total = time.perf_counter() - t_start
    accs = evaluate(model, val)
    print(f"train time {total:.1f}s for {STEPS} steps")
    for t, a in accs.items():
        print(f"  val acc {t:10s} {a:.3f}")
    torch.save(model.state_dict(), "/tmp/triage_multitask.pt")


if __name__ == "__main__":
    main()
