"""Streaming causal TCN speech-enhancement model (chunked inference).

Each causal conv layer keeps the tail of its input from the previous chunk in a
`ctx` buffer, so a stream processed chunk by chunk gives the same output as the
whole utterance processed offline.

Usage:
    python stream_enhance.py --chunks 24 --chunk-len 16 --batch 4 [--compile]
"""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("stream_enhance")


# State commit is an op so the compiled graph updates the registered buffer in
# place (reassigning a module attribute every chunk would invalidate the graph).
@torch.library.custom_op("streamkit::commit_state", mutates_args=["state"])
def commit_state(state: torch.Tensor, new_state: torch.Tensor) -> None:
    with torch.no_grad():
        state.set_(new_state.detach().clone())


@commit_state.register_fake
def _commit_state_fake(state, new_state):
    state.set_(torch.empty_like(new_state))


class StreamingCausalConv1d(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, dilation=1):
        super().__init__()
        self.conv = nn.Conv1d(in_ch, out_ch, kernel_size, dilation=dilation)
        self.context = (kernel_size - 1) * dilation
        self.register_buffer("ctx", torch.empty(0), persistent=False)

    def reset_state(self):
        # The batch size of a stream is only known once its first chunk arrives.
        self.ctx = torch.empty(0, device=self.conv.weight.device)

    def forward(self, x):
        hist = self.ctx
        if hist.dim() != 3:
            hist = x.new_zeros(x.shape[0], x.shape[1], 0)
        if hist.shape[-1] < self.context:
            hist = F.pad(hist, (self.context - hist.shape[-1], 0))
        full = torch.cat([hist, x], dim=-1)
        commit_state(self.ctx, full[..., -self.context:])
        return self.conv(full)

    def forward_offline(self, x):
        return self.conv(F.pad(x, (self.context, 0)))


class TCNBlock(nn.Module):
    def __init__(self, ch, hidden, kernel_size, dilation):
        super().__init__()
        self.inp = nn.Conv1d(ch, hidden, 1)
        self.act1 = nn.PReLU(hidden)
        self.norm = nn.GroupNorm(1, hidden)
        self.dconv = StreamingCausalConv1d(hidden, hidden, kernel_size, dilation)
        self.act2 = nn.PReLU(hidden)
        self.out = nn.Conv1d(hidden, ch, 1)

    def _pre(self, x):
        # per-frame normalisation (channels only) keeps the block causal
        h = self.act1(self.inp(x))
        return self.norm(h.transpose(1, 2).reshape(-1, h.shape[1], 1)).reshape(
            h.shape[0], h.shape[2], h.shape[1]).transpose(1, 2)

    def forward(self, x):
        h = self._pre(x)
        h = self.act2(self.dconv(h))
        return x + self.out(h)

    def forward_offline(self, x):
        h = self._pre(x)
        h = self.act2(self.dconv.forward_offline(h))
        return x + self.out(h)


class StreamingEnhancer(nn.Module):
    def __init__(self, n_feats=64, ch=96, hidden=192, kernel_size=3,
                 dilations=(1, 2, 4, 8, 1, 2, 4, 8)):
        super().__init__()
        self.enc = nn.Conv1d(n_feats, ch, 1)
        self.blocks = nn.ModuleList(
            [TCNBlock(ch, hidden, kernel_size, d) for d in dilations])
        self.mask = nn.Conv1d(ch, n_feats, 1)

    def reset_state(self):
        for m in self.modules():
            if isinstance(m, StreamingCausalConv1d):
                m.reset_state()

    def forward(self, feats):
        h = self.enc(feats)
        for blk in self.blocks:
            h = blk(h)
        return feats * torch.sigmoid(self.mask(h))

    @torch.no_grad()
    def forward_offline(self, feats):
        h = self.enc(feats)
        for blk in self.blocks:
            h = blk.forward_offline(h)
        return feats * torch.sigmoid(self.mask(h))


def make_stream(batch, n_feats, total_frames, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(total_frames, dtype=torch.float32)
    clean = torch.sin(0.05 * t)[None, None, :] * torch.rand(batch, n_feats, 1, generator=g)
    noise = 0.3 * torch.randn(batch, n_feats, total_frames, generator=g)
    return (clean + noise).abs().log1p()


def run_stream(step_fn, model, feats, chunk_len):
    model.reset_state()
    outs, lat = [], []
    for start in range(0, feats.shape[-1], chunk_len):
        chunk = feats[..., start:start + chunk_len]
        t0 = time.perf_counter()
        with torch.no_grad():
            y = step_fn(chunk)
        lat.append(time.perf_counter() - t0)
        outs.append(y)
    return torch.cat(outs, dim=-1), lat


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--chunks", type=int, default=24)
    p.add_argument("--chunk-len", type=int, default=16)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--n-feats", type=int, default=64)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tol", type=float, default=1e-4)
    args = p.parse_args()

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    model = StreamingEnhancer(n_feats=args.n_feats).eval()
    n_params = sum(p.numel() for p in model.parameters())
    log.info("model: %.2fM params, receptive field %d frames", n_params / 1e6,
             1 + sum(b.dconv.context for b in model.blocks))

    feats = make_stream(args.batch, args.n_feats, args.chunks * args.chunk_len, args.seed)
    ref = model.forward_offline(feats)

    step_fn = torch.compile(model) if args.compile else model
    log.info("streaming %d chunks of %d frames (batch %d, compile=%s)",
             args.chunks, args.chunk_len, args.batch, args.compile)
    out, lat = run_stream(step_fn, model, feats, args.chunk_len)

    err = (out - ref).abs().max().item()
    steady = sorted(lat[2:])[len(lat[2:]) // 2] * 1e3 if len(lat) > 2 else float("nan")
    log.info("first chunk %.1f ms, median steady chunk %.2f ms", lat[0] * 1e3, steady)
    log.info("stream vs offline max abs diff: %.3e", err)
    if err > args.tol:
        raise SystemExit(f"stream/offline mismatch {err:.3e} > {args.tol}")
    log.info("OK")


if __name__ == "__main__":
    main()
