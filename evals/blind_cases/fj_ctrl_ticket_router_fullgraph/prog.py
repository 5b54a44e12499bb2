"""Fine-tune a small CTRL-style classifier that routes support tickets to a queue.

The model is compiled with fullgraph=True: the team's perf CI rejects any
training recipe that graph-breaks, so we want a hard error rather than a silent
slowdown.
"""
import argparse
import math
import time

import torch
import torch.nn.functional as F
from transformers import CTRLConfig, CTRLForSequenceClassification

QUEUES = ["billing", "outage", "account"]
PAD_ID = 0


def build_config(vocab_size: int) -> CTRLConfig:
    return CTRLConfig(
        vocab_size=vocab_size,
        n_positions=256,
        n_embd=128,
        dff=256,
        n_layer=3,
        n_head=4,
        resid_pdrop=0.1,
        embd_pdrop=0.1,
        pad_token_id=PAD_ID,
        num_labels=len(QUEUES),
        use_cache=False,
    )


class TicketStream:
    """Synthetic tickets: each queue has its own pool of 'keyword' tokens mixed into
    generic filler text, plus right padding to the longest ticket in the batch."""

    def __init__(self, vocab_size: int, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.g = g
        self.vocab_size = vocab_size
        self.filler = torch.arange(100, vocab_size)
        self.keywords = [torch.arange(10 + 30 * q, 40 + 30 * q) for q in range(len(QUEUES))]

    def ticket(self, label: int) -> torch.Tensor:
        n = int(torch.randint(24, 64, (1,), generator=self.g))
        toks = self.filler[torch.randint(len(self.filler), (n,), generator=self.g)]
        n_kw = max(2, n // 8)
        pos = torch.randperm(n, generator=self.g)[:n_kw]
        kw = self.keywords[label]
        toks[pos] = kw[torch.randint(len(kw), (n_kw,), generator=self.g)]
        return toks

    def batch(self, batch_size: int, max_len: int = 64):
        labels = torch.randint(len(QUEUES), (batch_size,), generator=self.g)
        tickets = [self.ticket(int(l)) for l in labels]
        ids = torch.full((batch_size, max_len), PAD_ID, dtype=torch.long)
        mask = torch.zeros((batch_size, max_len), dtype=torch.long)
        for i, t in enumerate(tickets):
            ids[i, : len(t)] = t
            mask[i, : len(t)] = 1
        return ids, mask, labels


def train_step(model, opt, ids, mask, labels):
    out = model(input_ids=ids, attention_mask=mask)
    loss = F.cross_entropy(out.logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.detach()


@torch.no_grad()
def evaluate(model, stream, n_batches=4, batch_size=32):
    model.eval()
    correct = total = 0
    for _ in range(n_batches):
        ids, mask, labels = stream.batch(batch_size)
        logits = model(input_ids=ids, attention_mask=mask).logits
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    vocab_size = 2000
    model = CTRLForSequenceClassification(build_config(vocab_size))
    model.train()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} | CTRL classifier with {n_params/1e6:.2f}M params")

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = 5
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * s / args.steps))
    )

    fwd = model if args.no_compile else torch.compile(model, fullgraph=True)

    train_stream = TicketStream(vocab_size, seed=1)
    val_stream = TicketStream(vocab_size, seed=2)

    t0 = time.perf_counter()
    for step in range(args.steps):
        ids, mask, labels = train_stream.batch(args.batch_size)
        loss = train_step(fwd, opt, ids, mask, labels)
        sched.step()
        if step == 0:
            print(f"step 0 done in {time.perf_counter() - t0:.1f}s (includes compile)")
        if (step + 1) % 10 == 0:
            print(f"step {step + 1:3d} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e}")
    print(f"train wall {time.perf_counter() - t0:.1f}s")

    acc = evaluate(fwd, val_stream)
    print(f"val routing accuracy: {acc:.3f}")


if __name__ == "__main__":
    main()
