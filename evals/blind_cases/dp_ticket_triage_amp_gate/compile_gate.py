"""Release gate for the ticket-triage classifier.

Runs the eager model and the torch.compile'd model on a fixed validation
fixture under the same serving settings (bf16 autocast on CPU) and fails
the job if the logits drift beyond the tolerance we accept for bf16.
"""
import argparse
import logging
import math
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("compile_gate")

LABELS = ["billing", "outage", "login", "feature_request", "refund", "shipping", "abuse", "other"]


class TriageEncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff, dropout):
        super().__init__()
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln1 = nn.LayerNorm(d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.ff1 = nn.Linear(d_model, d_ff)
        self.ff2 = nn.Linear(d_ff, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, key_padding):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(b, t, 3, self.n_heads, d // self.n_heads).unbind(2)
        q, k, v = (z.transpose(1, 2) for z in (q, k, v))
        mask = key_padding[:, None, None, :]
        att = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.drop(self.proj(att.transpose(1, 2).reshape(b, t, d)))
        x = x + self.drop(self.ff2(F.gelu(self.ff1(self.ln2(x)))))
        return x


class TicketTriageModel(nn.Module):
    def __init__(self, vocab=8000, d_model=128, n_heads=4, n_layers=2, d_ff=512, max_len=128,
                 n_labels=len(LABELS), dropout=0.1):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model, padding_idx=0)
        self.pos = nn.Embedding(max_len, d_model)
        self.layers = nn.ModuleList(
            TriageEncoderLayer(d_model, n_heads, d_ff, dropout) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_labels)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.tok(input_ids) + self.pos(pos)[None]
        keep = attention_mask.bool()
        for layer in self.layers:
            x = layer(x, keep)
        x = self.norm(x)
        w = attention_mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * w).sum(1) / w.sum(1).clamp_min(1.0)
        return self.head(pooled)


def build_fixture(n_batches, batch_size, seq_len, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        lengths = torch.randint(seq_len // 4, seq_len + 1, (batch_size,), generator=g)
        ids = torch.randint(1, vocab, (batch_size, seq_len), generator=g)
        mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
        batches.append((ids * mask, mask))
    return batches


def load_release_checkpoint(path, args):
    model = TicketTriageModel(vocab=args.vocab, n_layers=args.layers, max_len=args.seq_len)
    if path and os.path.exists(path):
        model.load_state_dict(torch.load(path, map_location="cpu"))
        log.info("loaded checkpoint %s", path)
    else:
        torch.manual_seed(args.seed)
        model = TicketTriageModel(vocab=args.vocab, n_layers=args.layers, max_len=args.seq_len)
        with torch.no_grad():
            for p in model.parameters():
                if p.dim() > 1:
                    p.mul_(2.0)
        tmp = os.path.join(tempfile.gettempdir(), "triage_gate_ckpt.pt")
        torch.save(model.state_dict(), tmp)
        model.load_state_dict(torch.load(tmp, map_location="cpu"))
        log.info("no checkpoint given, using seeded weights (saved to %s)", tmp)
    return model.eval()


def run_candidate(compiled, batches, timeout_s):
    """Run the compiled model off the main thread so a hung compile cannot stall CI."""
    def _work():
        outs = []
        for ids, mask in batches:
            outs.append(compiled(ids, mask))
        return outs

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="compile-gate") as pool:
        fut = pool.submit(_work)
        try:
            return fut.result(timeout=timeout_s)
        except FutureTimeout:
            log.error("compiled candidate did not finish within %ss", timeout_s)
            raise


def compare(ref_outs, cand_outs, atol, rtol):
    worst_abs, worst_rel, flips, total = 0.0, 0.0, 0, 0
    for r, c in zip(ref_outs, cand_outs):
        r, c = r.float(), c.float()
        diff = (r - c).abs()
        worst_abs = max(worst_abs, diff.max().item())
        worst_rel = max(worst_rel, (diff / r.abs().clamp_min(1e-3)).max().item())
        flips += (r.argmax(-1) != c.argmax(-1)).sum().item()
        total += r.shape[0]
        ok = torch.allclose(r, c, atol=atol, rtol=rtol)
        if not ok:
            bad = ~torch.isclose(r, c, atol=atol, rtol=rtol)
            log.debug("batch mismatch: %d / %d logits out of tolerance", bad.sum().item(), bad.numel())
    return worst_abs, worst_rel, flips, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkpoint", default="")
    ap.add_argument("--batches", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--amp", choices=["bf16", "off"], default="bf16")
    ap.add_argument("--atol", type=float, default=1e-3)
    ap.add_argument("--rtol", type=float, default=1e-2)
    ap.add_argument("--compile-timeout", type=float, default=600)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log.info("torch %s, amp=%s, atol=%g rtol=%g", torch.__version__, args.amp, args.atol, args.rtol)

    model = load_release_checkpoint(args.checkpoint, args)
    batches = build_fixture(args.batches, args.batch_size, args.seq_len, args.vocab, args.seed)
    compiled = torch.compile(model)

    amp_enabled = args.amp == "bf16"
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp_enabled):
        t0 = time.perf_counter()
        ref_outs = [model(ids, mask) for ids, mask in batches]
        t_eager = time.perf_counter() - t0
        t0 = time.perf_counter()
        cand_outs = run_candidate(compiled, batches, args.compile_timeout)
        t_comp = time.perf_counter() - t0

    worst_abs, worst_rel, flips, total = compare(ref_outs, cand_outs, args.atol, args.rtol)
    log.info("eager %.2fs, compiled (incl. compile) %.2fs", t_eager, t_comp)
    log.info("max |eager - compiled| = %.3e, max rel = %.3e, label flips = %d / %d",
             worst_abs, worst_rel, flips, total)
    passed = all(torch.allclose(r.float(), c.float(), atol=args.atol, rtol=args.rtol)
                 for r, c in zip(ref_outs, cand_outs))
    if not passed:
        log.error("GATE FAILED: compiled logits differ from eager beyond atol=%g rtol=%g",
                  args.atol, args.rtol)
        return 1
    log.info("GATE PASSED")
    return 0


if __name__ == "__main__":
    sys.exit(main())
