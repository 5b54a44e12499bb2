"""Next-event pretraining for a small log-sequence encoder (LogBERT-style).

Sessions of log template ids are padded per batch and fed to a Transformer
encoder. A learned "session length" embedding (bucketed) is added to every
position so the model can calibrate itself for short vs long sessions.
"""
import argparse
import bisect
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("logseq")

PAD_ID = 0


class LogSeqEncoder(nn.Module):
    def __init__(self, vocab_size=512, d_model=96, n_heads=4, n_layers=2,
                 max_len=128, length_boundaries=(16, 32, 48, 64, 96)):
        super().__init__()
        self.length_boundaries = list(length_boundaries)
        self.tok = nn.Embedding(vocab_size, d_model, padding_idx=PAD_ID)
        self.pos = nn.Embedding(max_len, d_model)
        self.len_emb = nn.Embedding(len(self.length_boundaries) + 1, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=4 * d_model,
                                           dropout=0.1, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def length_bucket(self, seq_len: int) -> int:
        return bisect.bisect_right(self.length_boundaries, seq_len)

    def forward(self, ids, pad_mask):
        B, T = ids.shape
        pos = torch.arange(T, device=ids.device)
        bucket = self.length_bucket(T)
        h = self.tok(ids) + self.pos(pos)[None] + self.len_emb.weight[bucket]
        causal = torch.triu(torch.full((T, T), float("-inf"), device=ids.device), diagonal=1)
        h = self.encoder(h, mask=causal, src_key_padding_mask=pad_mask)
        return self.head(self.norm(h))


def make_sessions(n, vocab_size, gen):
    """Synthetic log sessions: a few recurring template motifs plus noise."""
    motifs = [torch.randint(1, vocab_size, (8,), generator=gen) for _ in range(12)]
    sessions = []
    for _ in range(n):
        length = int(torch.randint(20, 60, (1,), generator=gen))
        parts = []
        while sum(p.numel() for p in parts) < length:
            if torch.rand(1, generator=gen).item() < 0.8:
                parts.append(motifs[int(torch.randint(0, 12, (1,), generator=gen))])
            else:
                parts.append(torch.randint(1, vocab_size, (3,), generator=gen))
        sessions.append(torch.cat(parts)[:length])
    return sessions


def collate(batch, multiple=16):
    T = max(s.numel() for s in batch)
    T = ((T + multiple - 1) // multiple) * multiple  # pad to a multiple of 16
    ids = torch.full((len(batch), T), PAD_ID, dtype=torch.long)
    for i, s in enumerate(batch):
        ids[i, : s.numel()] = s
    return ids, ids.eq(PAD_ID)


def batches(sessions, batch_size, gen):
    order = torch.randperm(len(sessions), generator=gen).tolist()
    for i in range(0, len(order) - batch_size + 1, batch_size):
        yield collate([sessions[j] for j in order[i:i + batch_size]])


def train_step(model, opt, ids, pad_mask):
    logits = model(ids[:, :-1], pad_mask[:, :-1])
    target = ids[:, 1:].masked_fill(pad_mask[:, 1:], -100)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=-100)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()


def run(args, compile_model):
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    sessions = make_sessions(args.sessions, args.vocab, gen)
    model = LogSeqEncoder(vocab_size=args.vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    fwd = model
    if compile_model:
        fwd = torch.compile(model, fullgraph=args.fullgraph)
    step_times, losses = [], []
    step = 0
    for epoch in range(args.epochs):
        for ids, pad_mask in batches(sessions, args.batch_size, gen):
            t0 = time.perf_counter()
            loss = train_step(fwd, opt, ids, pad_mask)
            dt = time.perf_counter() - t0
            step += 1
            losses.append(loss.item())
            if step > args.warmup:
                step_times.append(dt)
            if step % args.log_every == 0:
                log.info("step %d  T=%d  loss %.4f  %.1f ms", step, ids.shape[1], loss.item(), dt * 1e3)
    mean_ms = 1e3 * sum(step_times) / max(len(step_times), 1)
    return mean_ms, losses[-1]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["eager", "compile", "both"], default="both")
    p.add_argument("--fullgraph", action="store_true")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--sessions", type=int, default=256)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--warmup", type=int, default=6)
    p.add_argument("--log-every", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    log.info("torch %s", torch.__version__)
    if args.mode in ("eager", "both"):
        ms, last = run(args, compile_model=False)
        log.info("eager:    %.1f ms/step (after warm-up), final loss %.4f", ms, last)
    if args.mode in ("compile", "both"):
        t0 = time.perf_counter()
        ms, last = run(args, compile_model=True)
        log.info("compiled: %.1f ms/step (after warm-up), final loss %.4f, total %.1f s",
                 ms, last, time.perf_counter() - t0)


if __name__ == "__main__":
    main()
