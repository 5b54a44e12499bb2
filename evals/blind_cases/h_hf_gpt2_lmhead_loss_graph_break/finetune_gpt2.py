"""Fine-tune a small GPT-2 (random init, tiny config) on synthetic log lines.

python finetune_gpt2.py            # eager
python finetune_gpt2.py --compile  # torch.compile(model, fullgraph=True)
"""
import argparse
import random
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

LEVELS = ["INFO", "WARN", "ERROR", "DEBUG"]
SERVICES = ["auth", "billing", "search", "gateway", "worker", "scheduler"]
WORDS = ["request", "timeout", "retry", "user", "token", "cache", "miss", "hit", "queue",
         "latency", "ms", "ok", "failed", "connection", "reset", "db", "commit", "rollback"]


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--compile", action="store_true")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--max-len", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--log-every", type=int, default=10)
    return p.parse_args()


class CharTokenizer:
    """Byte-level toy tokenizer: 256 byte ids + pad + bos + eos."""

    def __init__(self):
        self.pad_id, self.bos_id, self.eos_id = 256, 257, 258
        self.vocab_size = 259

    def encode(self, text):
        return [self.bos_id] + list(text.encode("utf-8")) + [self.eos_id]


def make_line(rng):
    n = rng.randint(3, 8)
    msg = " ".join(rng.choice(WORDS) for _ in range(n))
    return f"{rng.choice(LEVELS)} [{rng.choice(SERVICES)}] {msg} id={rng.randint(0, 9999)}"


def collate(tok, lines, max_len):
    ids = torch.full((len(lines), max_len), tok.pad_id, dtype=torch.long)
    mask = torch.zeros((len(lines), max_len), dtype=torch.long)
    for i, line in enumerate(lines):
        seq = tok.encode(line)[:max_len]
        ids[i, : len(seq)] = torch.tensor(seq)
        mask[i, : len(seq)] = 1
    labels = ids.masked_fill(mask == 0, -100)
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def batches(tok, batch_size, max_len, seed):
    rng = random.Random(seed)
    while True:
        yield collate(tok, [make_line(rng) for _ in range(batch_size)], max_len)


def build_model(tok, max_len):
    cfg = GPT2Config(
        vocab_size=tok.vocab_size,
        n_positions=max_len,
        n_embd=128,
        n_layer=4,
        n_head=4,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        bos_token_id=tok.bos_id,
        eos_token_id=tok.eos_id,
        pad_token_id=tok.pad_id,
    )
    cfg.use_cache = False
    return GPT2LMHeadModel(cfg)


@torch.no_grad()
def evaluate(model, tok, max_len, n_batches=4):
    model.eval()
    total = 0.0
    for i, batch in zip(range(n_batches), batches(tok, 8, max_len, seed=999)):
        total += model(**batch).loss.item()
    model.train()
    return total / n_batches


def main():
    args = parse_args()
    torch.manual_seed(0)
    tok = CharTokenizer()
    model = build_model(tok, args.max_len)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    # single graph expected: fail loudly instead of silently splitting
    fwd = torch.compile(model, fullgraph=True) if args.compile else model
    print(f"params {sum(p.numel() for p in model.parameters())/1e6:.2f}M compile={args.compile}")

    data = batches(tok, args.batch_size, args.max_len, seed=0)
    step_times = []
    t_start = time.perf_counter()
    for step in range(args.steps):
        t0 = time.perf_counter()
        for _ in range(args.grad_accum):
            batch = next(data)
            out = fwd(**batch)
            (out.loss / args.grad_accum).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt = time.perf_counter() - t0
        if step >= 5:
            step_times.append(dt)
        if step % args.log_every == 0 or step == args.steps - 1:
            print(f"step {step:3d} loss {out.loss.item():.4f} {dt*1000:8.1f} ms")

    total = time.perf_counter() - t_start
    med = sorted(step_times)[len(step_times) // 2]
    toks = args.batch_size * args.grad_accum * args.max_len
    print(f"total {total:.1f}s  median step {med*1000:.1f} ms  ({toks/med:.0f} tok/s)")
    print(f"eval loss {evaluate(fwd, tok, args.max_len):.4f}")


if __name__ == "__main__":
    main()
