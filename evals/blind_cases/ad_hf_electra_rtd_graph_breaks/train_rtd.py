"""Replaced-token-detection (ELECTRA discriminator) pretraining on a toy corpus.

    python train_rtd.py --steps 30                 # eager
    python train_rtd.py --steps 30 --compile       # torch.compile
    python train_rtd.py --check-graphs             # CI check: forward+loss must be one graph
"""
import argparse
import logging
import time

import torch
from transformers import ElectraConfig, ElectraForPreTraining

log = logging.getLogger("rtd")

PAD, CLS, SEP = 0, 1, 2


def build_corpus(n_docs, vocab, max_len, seed):
    g = torch.Generator().manual_seed(seed)
    docs = []
    for _ in range(n_docs):
        n = int(torch.randint(12, max_len - 2, (1,), generator=g))
        # zipf-ish token distribution
        toks = (torch.rand(n, generator=g) ** 3 * (vocab - 10)).long() + 10
        docs.append(torch.cat([torch.tensor([CLS]), toks, torch.tensor([SEP])]))
    return docs


def corrupt(ids, attn, vocab, rate, g):
    """Replace a fraction of real tokens with random ones; label 1 = replaced."""
    special = (ids == CLS) | (ids == SEP) | (attn == 0)
    pick = (torch.rand(ids.shape, generator=g) < rate) & ~special
    rnd = torch.randint(10, vocab, ids.shape, generator=g)
    new = torch.where(pick, rnd, ids)
    labels = (new != ids).long()
    return new, labels


def batches(docs, bs, max_len, vocab, rate, seed):
    g = torch.Generator().manual_seed(seed)
    while True:
        order = torch.randperm(len(docs), generator=g).tolist()
        for i in range(0, len(order) - bs + 1, bs):
            ids = torch.full((bs, max_len), PAD, dtype=torch.long)
            attn = torch.zeros((bs, max_len), dtype=torch.long)
            for r, j in enumerate(order[i:i + bs]):
                d = docs[j]
                ids[r, :len(d)] = d
                attn[r, :len(d)] = 1
            x, y = corrupt(ids, attn, vocab, rate, g)
            yield x, attn, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--max-len", type=int, default=64)
    ap.add_argument("--replace-rate", type=float, default=0.15)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--check-graphs", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    torch.manual_seed(0)

    vocab = 1000
    cfg = ElectraConfig(vocab_size=vocab, embedding_size=64, hidden_size=128, num_hidden_layers=4,
                        num_attention_heads=4, intermediate_size=256, max_position_embeddings=args.max_len)
    model = ElectraForPreTraining(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    docs = build_corpus(2000, vocab, args.max_len, seed=1)
    data = batches(docs, args.batch_size, args.max_len, vocab, args.replace_rate, seed=2)

    def forward_loss(input_ids, attention_mask, labels):
        out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
        return out.loss, out.logits

    if args.check_graphs:
        x, a, y = next(data)
        ex = torch._dynamo.explain(forward_loss)(x, a, y)
        log.info("graphs=%d graph_breaks=%d", ex.graph_count, ex.graph_break_count)
        for br in ex.break_reasons:
            frame = br.user_stack[-1] if br.user_stack else None
            log.info("  break: %s (%s:%s)", str(br.reason).splitlines()[0],
                     frame.filename.rsplit("/", 1)[-1] if frame else "?", frame.lineno if frame else "?")
        if ex.graph_count != 1:
            raise SystemExit(f"forward+loss is split into {ex.graph_count} graphs (expected 1)")
        log.info("OK: single graph")
        return

    loss_fn = torch.compile(forward_loss) if args.compile else forward_loss
    model.train()
    times = []
    for step in range(args.steps):
        x, a, y = next(data)
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss, logits = loss_fn(x, a, y)
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        if step % 10 == 0 or step == args.steps - 1:
            active = a.bool()
            acc = ((logits.detach() > 0).long() == y)[active].float().mean().item()
            log.info("step %3d loss %.4f token_acc %.4f step_time %.1f ms", step, loss.item(), acc, times[-1] * 1e3)
    steady = sorted(times[5:])[len(times[5:]) // 2] if len(times) > 6 else times[-1]
    log.info("median steady-state step time %.1f ms (first step %.1f s)", steady * 1e3, times[0])


if __name__ == "__main__":
    main()
