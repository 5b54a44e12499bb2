"""Streaming keyword spotter.

Audio arrives as 80 ms chunks of log-mel frames (8 frames x 40 mels). Each
chunk is encoded once; the encoded chunks of the last `ctx_chunks` chunks are
kept so every step attends over ~0.5 s of left context without re-encoding it.
"""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F


class ChunkEncoder(nn.Module):
    def __init__(self, n_mels, d):
        super().__init__()
        self.inp = nn.Conv1d(n_mels, d, kernel_size=3, padding=1)
        self.dw = nn.Conv1d(d, d, kernel_size=5, padding=2, groups=d)
        self.pw = nn.Conv1d(d, d, kernel_size=1)
        self.norm = nn.LayerNorm(d)

    def forward(self, mel):                      # (B, n_mels, T_chunk)
        h = F.silu(self.inp(mel))
        h = h + self.pw(F.silu(self.dw(h)))
        return self.norm(h.transpose(1, 2))      # (B, T_chunk, d)


class ContextPooling(nn.Module):
    """A few learned queries attend over the buffered context frames."""

    def __init__(self, d, n_heads=4, n_queries=2):
        super().__init__()
        self.queries = nn.Parameter(torch.randn(1, n_queries, d) * 0.02)
        self.attn = nn.MultiheadAttention(d, n_heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, ctx):                      # (B, T_ctx, d)
        q = self.queries.expand(ctx.shape[0], -1, -1)
        pooled, _ = self.attn(q, ctx, ctx, need_weights=False)
        pooled = pooled + self.ff(self.norm(pooled))
        return pooled.flatten(1)


class StreamingKWS(nn.Module):
    def __init__(self, n_mels=40, chunk_frames=8, ctx_chunks=6, d=64, n_keywords=12):
        super().__init__()
        self.n_mels = n_mels
        self.chunk_frames = chunk_frames
        self.ctx_chunks = ctx_chunks
        self.d = d
        self.encoder = ChunkEncoder(n_mels, d)
        self.pool = ContextPooling(d)
        self.classifier = nn.Linear(2 * d, n_keywords + 1)   # +1: filler / no keyword
        # learned position (age) of every frame in the left-context window
        self.ctx_pos = nn.Parameter(torch.randn(1, ctx_chunks * chunk_frames, d) * 0.02)
        self.context = None

    def reset_streams(self, n_streams):
        """Start new sessions: left context is silence (zeros)."""
        silence = torch.zeros(n_streams, self.chunk_frames, self.d)
        self.context = collections.deque([silence] * self.ctx_chunks, maxlen=self.ctx_chunks)

    def forward(self, mel_chunk):
        h = self.encoder(mel_chunk)
        self.context.append(h)
        ctx = torch.cat(list(self.context), dim=1) + self.ctx_pos
        return self.classifier(self.pool(ctx))


def synth_stream(n_streams, n_chunks, n_mels=40, chunk_frames=8, seed=0):
    """Log-mel stream: background noise with a few keyword-like bursts."""
    g = torch.Generator().manual_seed(seed)
    T = n_chunks * chunk_frames
    mel = -4.0 + 0.5 * torch.randn(n_streams, n_mels, T, generator=g)
    for s in range(n_streams):
        for _ in range(3):
            start = int(torch.randint(0, T - 40, (1,), generator=g))
            band = int(torch.randint(0, n_mels - 12, (1,), generator=g))
            mel[s, band:band + 12, start:start + 40] += 3.0 + torch.rand(12, 40, generator=g)
    return mel.split(chunk_frames, dim=-1)
