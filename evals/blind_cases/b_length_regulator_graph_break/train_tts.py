"""Train a small FastSpeech-style acoustic model (phonemes -> mel frames) on synthetic data."""
import argparse
import logging
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("train")


class LengthRegulator(nn.Module):
    """Expand phoneme-level hidden states to frame level using integer durations."""

    def forward(self, h, durations, max_frames):
        out = []
        for i in range(h.shape[0]):
            expanded = torch.repeat_interleave(h[i], durations[i], dim=0)
            out.append(F.pad(expanded, (0, 0, 0, max_frames - expanded.shape[0])))
        return torch.stack(out)


class FFTBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln1 = nn.LayerNorm(dim)
        self.conv = nn.Sequential(nn.Conv1d(dim, dim * 2, 9, padding=4), nn.ReLU(), nn.Conv1d(dim * 2, dim, 1))
        self.ln2 = nn.LayerNorm(dim)

    def forward(self, x):
        x = self.ln1(x + self.attn(x, x, x, need_weights=False)[0])
        return self.ln2(x + self.conv(x.transpose(1, 2)).transpose(1, 2))


class AcousticModel(nn.Module):
    def __init__(self, n_phonemes=80, dim=128, heads=2, n_mels=80):
        super().__init__()
        self.emb = nn.Embedding(n_phonemes, dim)
        self.encoder = nn.Sequential(FFTBlock(dim, heads), FFTBlock(dim, heads))
        self.duration_predictor = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))
        self.regulator = LengthRegulator()
        self.decoder = nn.Sequential(FFTBlock(dim, heads), FFTBlock(dim, heads))
        self.mel = nn.Linear(dim, n_mels)

    def forward(self, phonemes, durations, max_frames):
        h = self.encoder(self.emb(phonemes))
        log_dur_pred = self.duration_predictor(h).squeeze(-1)
        frames = self.regulator(h, durations, max_frames)
        return self.mel(self.decoder(frames)), log_dur_pred


def synthetic_batch(bs, n_tokens, max_frames, n_mels, g):
    phonemes = torch.randint(1, 80, (bs, n_tokens), generator=g)
    durations = torch.randint(1, 5, (bs, n_tokens), generator=g)
    # keep every utterance within the frame budget
    durations = torch.minimum(durations, torch.full_like(durations, max_frames // n_tokens))
    mel = torch.randn(bs, max_frames, n_mels, generator=g)
    frame_mask = torch.arange(max_frames)[None] < durations.sum(1, keepdim=True)
    return phonemes, durations, mel, frame_mask


def train_step(model, opt, batch, max_frames):
    phonemes, durations, mel, frame_mask = batch
    mel_pred, log_dur_pred = model(phonemes, durations, max_frames)
    mel_loss = (F.l1_loss(mel_pred, mel, reduction="none").mean(-1) * frame_mask).sum() / frame_mask.sum()
    dur_loss = F.mse_loss(log_dur_pred, torch.log(durations.float() + 1))
    loss = mel_loss + dur_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss.detach()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--tokens", type=int, default=24)
    p.add_argument("--max-frames", type=int, default=96)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--log-every", type=int, default=10)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = AcousticModel()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    if args.compile:
        model = torch.compile(model)

    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        batch = synthetic_batch(args.batch_size, args.tokens, args.max_frames, 80, g)
        t0 = time.perf_counter()
        loss = train_step(model, opt, batch, args.max_frames)
        dt = time.perf_counter() - t0
        if step % args.log_every == 0 or step == 1:
            log.info("step %d loss %.4f step_time %.3fs", step, loss.item(), dt)
    log.info("total %.1fs for %d steps", time.perf_counter() - t_start, args.steps)


if __name__ == "__main__":
    main()
