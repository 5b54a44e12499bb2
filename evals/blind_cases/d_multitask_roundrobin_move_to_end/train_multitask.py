"""Multi-task text classifier: one shared encoder, one head per task, tasks visited round-robin.

    python train_multitask.py              # compiled
    python train_multitask.py --no-compile # eager
"""
import argparse
import collections
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 2000
SEQ = 24
TASKS = collections.OrderedDict(sentiment=3, topic=5, intent=4)


class RoundRobin:
    """Visits tasks in turn; a task can be re-queued early with bump() (used for replay of hard tasks)."""

    def __init__(self, names):
        self.queue = collections.OrderedDict((n, None) for n in names)

    def next_task(self):
        name = next(iter(self.queue))
        self.queue.move_to_end(name)
        return name

    def bump(self, name):
        self.queue.move_to_end(name, last=False)

    def order(self):
        return list(self.queue)


class SharedEncoder(nn.Module):
    def __init__(self, dim=96):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, dim, padding_idx=0)
        self.conv = nn.Conv1d(dim, dim, 3, padding=1)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, dim), nn.GELU(), nn.LayerNorm(dim))

    def forward(self, ids):
        mask = (ids != 0).float()
        h = self.emb(ids).transpose(1, 2)
        h = F.gelu(self.conv(h)).transpose(1, 2)
        mean = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True).clamp_min(1)
        mx = h.masked_fill(mask[..., None] == 0, -1e4).amax(1)
        return self.mlp(torch.cat([mean, mx], -1))


class MultiTaskModel(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.encoder = SharedEncoder()
        self.heads = nn.ModuleDict({t: nn.Linear(96, n) for t, n in tasks.items()})
        self.schedule = RoundRobin(tasks.keys())

    def forward(self, batches):
        task = self.schedule.next_task()
        ids, labels = batches[task]
        logits = self.heads[task](self.encoder(ids))
        return task, F.cross_entropy(logits, labels)

    @torch.no_grad()
    def predict(self, task, ids):
        return self.heads[task](self.encoder(ids)).argmax(-1)


def make_task_data(task_id, n_classes, n, seed):
    # each class has a small set of marker tokens; sequences are noise + a few markers
    g = torch.Generator().manual_seed(seed)
    markers = torch.randint(1, VOCAB, (n_classes, 6), generator=torch.Generator().manual_seed(1000 + task_id))
    labels = torch.randint(0, n_classes, (n,), generator=g)
    ids = torch.randint(1, VOCAB, (n, SEQ), generator=g)
    pos = torch.randint(0, SEQ, (n, 4), generator=g)
    pick = torch.randint(0, 6, (n, 4), generator=g)
    ids.scatter_(1, pos, markers[labels[:, None], pick])
    lengths = torch.randint(SEQ // 2, SEQ + 1, (n,), generator=g)
    ids[torch.arange(SEQ)[None] >= lengths[:, None]] = 0
    return ids, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--bs", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = MultiTaskModel(TASKS)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    step_fn = model if args.no_compile else torch.compile(model)

    train = {t: make_task_data(i, n, 4096, seed=i) for i, (t, n) in enumerate(TASKS.items())}
    val = {t: make_task_data(i, n, 512, seed=100 + i) for i, (t, n) in enumerate(TASKS.items())}
    gen = torch.Generator().manual_seed(1)

    t0 = time.time()
    seen = collections.Counter()
    for step in range(1, args.steps + 1):
        batches = {}
        for t, (ids, labels) in train.items():
            idx = torch.randint(0, ids.shape[0], (args.bs,), generator=gen)
            batches[t] = (ids[idx], labels[idx])
        task, loss = step_fn(batches)
        seen[task] += 1
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 50 == 0:
            accs = {t: (model.predict(t, v[0]) == v[1]).float().mean().item() for t, v in val.items()}
            acc_s = " ".join(f"{t}={a:.3f}" for t, a in accs.items())
            print(f"step {step:4d} loss {loss.item():.4f} val acc: {acc_s} ({time.time() - t0:.1f}s)", flush=True)
    print("steps per task:", dict(seen))


if __name__ == "__main__":
    main()
