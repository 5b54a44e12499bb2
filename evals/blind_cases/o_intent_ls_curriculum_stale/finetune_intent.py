"""Intent classifier fine-tune with a decaying label-smoothing / auxiliary-loss curriculum.

The main head predicts the fine-grained intent, an auxiliary head predicts the
coarse domain.  Early in training the targets are heavily smoothed and the
auxiliary loss carries a large weight; both decay linearly with training
progress.  `--mode both` trains an eager and a compiled copy from the same
init on the same batches and prints the two loss curves side by side.
"""
import argparse
import copy
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

N_INTENTS = 24
N_DOMAINS = 6
VOCAB = 2000
SEQ = 32


def make_corpus(n, seed):
    g = torch.Generator().manual_seed(seed)
    intents = torch.randint(0, N_INTENTS, (n,), generator=g)
    domains = intents % N_DOMAINS
    toks = torch.randint(1, VOCAB, (n, SEQ), generator=g)
    cue = (intents[:, None] * 53 + torch.arange(3)[None, :] * 11) % (VOCAB - 1) + 1
    where = torch.randint(0, SEQ, (n, 3), generator=g)
    toks.scatter_(1, where, cue)
    return toks, intents, domains


class ResidualMLP(nn.Module):
    def __init__(self, d, mult=2):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, mult * d)
        self.fc2 = nn.Linear(mult * d, d)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.fc1(self.ln(x))))


class IntentModel(nn.Module):
    """Bag-of-tokens encoder with gated attention pooling (fast enough for CPU serving)."""

    def __init__(self, d=96, layers=2):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, d, padding_idx=0)
        self.tok_mlp = nn.Sequential(*[ResidualMLP(d) for _ in range(layers)])
        self.pool_score = nn.Linear(d, 1)
        self.ln = nn.LayerNorm(d)
        self.intent_head = nn.Linear(d, N_INTENTS)
        self.domain_head = nn.Linear(d, N_DOMAINS)

    def forward(self, toks):
        x = self.tok_mlp(self.emb(toks))
        w = self.pool_score(x).squeeze(-1).masked_fill(toks.eq(0), float("-inf")).softmax(-1)
        pooled = self.ln(torch.einsum("bt,btd->bd", w, x))
        return self.intent_head(pooled), self.domain_head(pooled)


class Curriculum:
    def __init__(self, total_steps, ls_start=0.3, aux_start=0.5):
        self.total = total_steps
        self.ls_start = ls_start
        self.aux_start = aux_start

    def remaining(self, step):
        return max(0.0, 1.0 - step / self.total)


def train_step(model, opt, toks, intents, domains, remaining, ls_start, aux_start):
    intent_logits, domain_logits = model(toks)
    main = F.cross_entropy(intent_logits, intents, label_smoothing=ls_start * remaining)
    aux = F.cross_entropy(domain_logits, domains)
    loss = main + aux_start * remaining * aux
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach(), main.detach()


def run(model, step_fn, batches, cur, tag):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    t0 = time.time()
    for step, (toks, intents, domains) in enumerate(batches):
        loss, main = step_fn(model, opt, toks, intents, domains,
                             cur.remaining(step), cur.ls_start, cur.aux_start)
        losses.append((loss.item(), main.item()))
    print(f"[{tag}] {len(batches)} steps in {time.time() - t0:.1f}s")
    return losses


@torch.no_grad()
def accuracy(model, toks, intents):
    return (model(toks)[0].argmax(-1) == intents).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--mode", choices=["eager", "compiled", "both"], default="both")
    args = ap.parse_args()
    torch._dynamo.config.recompile_limit = 64

    torch.manual_seed(0)
    toks, intents, domains = make_corpus(args.steps * args.batch, seed=1)
    vt, vi, _ = make_corpus(512, seed=2)
    batches = [(toks[i:i + args.batch], intents[i:i + args.batch], domains[i:i + args.batch])
               for i in range(0, len(toks), args.batch)]
    cur = Curriculum(total_steps=len(batches))

    base = IntentModel()
    results = {}
    if args.mode in ("eager", "both"):
        m = copy.deepcopy(base)
        results["eager"] = run(m, train_step, batches, cur, "eager")
        print(f"[eager] val acc {accuracy(m, vt, vi):.3f}")
    if args.mode in ("compiled", "both"):
        m = copy.deepcopy(base)
        results["compiled"] = run(m, torch.compile(train_step), batches, cur, "compiled")
        print(f"[compiled] val acc {accuracy(m, vt, vi):.3f}")

    print("step  remaining  " + "  ".join(f"{k:>18s}" for k in results))
    for step in range(len(batches)):
        row = "  ".join(f"{results[k][step][0]:8.4f}/{results[k][step][1]:8.4f}" for k in results)
        print(f"{step:4d}  {cur.remaining(step):9.3f}  {row}")
    if len(results) == 2:
        diffs = [abs(a[1] - b[1]) for a, b in zip(results["eager"], results["compiled"])]
        first = next((i for i, d in enumerate(diffs) if d > 1e-3), None)
        print(f"max |main loss diff| = {max(diffs):.4f}; first step over 1e-3: {first}")


if __name__ == "__main__":
    main()
