"""Fine-tune a Whisper-encoder sound-event classifier (8 event classes) on
log-mel clips. Port of our wav2vec2 SED recipe to the Whisper encoder.

    python train_sed.py              # compiled (default)
    python train_sed.py --no-compile # eager
"""
import argparse
import math
import time

import torch
from transformers import WhisperConfig, WhisperForAudioClassification

from compile_utils import compile_model, mark_batch_dynamic

EVENTS = ["alarm", "glass", "dog", "door", "siren", "speech", "engine", "silence"]


def build_model(seed=0):
    torch.manual_seed(seed)
    cfg = WhisperConfig(
        num_mel_bins=40,
        d_model=96,
        encoder_layers=3,
        encoder_attention_heads=4,
        encoder_ffn_dim=256,
        decoder_layers=1,
        decoder_attention_heads=4,
        decoder_ffn_dim=64,
        max_source_positions=100,       # 200 mel frames per input window
        num_labels=len(EVENTS),
        classifier_proj_size=64,
        use_weighted_layer_sum=True,
    )
    return WhisperForAudioClassification(cfg)


def synth_clips(n, n_mels=40, min_frames=60, max_frames=200, seed=0):
    """Clips of variable duration; each class has its own spectral signature."""
    g = torch.Generator().manual_seed(seed)
    clips, labels = [], []
    for _ in range(n):
        y = int(torch.randint(0, len(EVENTS), (1,), generator=g))
        T = int(torch.randint(min_frames, max_frames + 1, (1,), generator=g))
        mel = -6.0 + 0.7 * torch.randn(n_mels, T, generator=g)
        lo = 4 * y
        t = torch.arange(T, dtype=torch.float32)
        mod = 1.0 + 0.5 * torch.sin(2 * math.pi * t / (6 + 3 * y))
        mel[lo:lo + 6] += 3.0 * mod
        clips.append(mel)
        labels.append(y)
    return clips, torch.tensor(labels)


def collate(clips, labels, n_frames):
    """Pad/trim every clip to the encoder window (log-mel floor value)."""
    out = torch.full((len(clips), clips[0].shape[0], n_frames), -6.0)
    for i, c in enumerate(clips):
        T = min(c.shape[1], n_frames)
        out[i, :, :T] = c[:, :T]
    return {"input_features": out, "labels": labels}


def batches(clips, labels, bs, n_frames, shuffle, seed):
    order = torch.randperm(len(clips), generator=torch.Generator().manual_seed(seed)) if shuffle \
        else torch.arange(len(clips))
    for i in range(0, len(clips), bs):
        idx = order[i:i + bs].tolist()
        yield collate([clips[j] for j in idx], labels[idx], n_frames)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--bs", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()

    model = build_model()
    n_frames = 2 * model.config.max_source_positions
    train_x, train_y = synth_clips(200, seed=1)
    val_x, val_y = synth_clips(72, seed=2)

    step_fn = compile_model(model, enabled=not args.no_compile)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    for epoch in range(args.epochs):
        model.train()
        t0, losses = time.time(), []
        for step, batch in enumerate(batches(train_x, train_y, args.bs, n_frames, True, epoch)):
            batch = mark_batch_dynamic(batch)
            out = step_fn(**batch)
            opt.zero_grad(set_to_none=True)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(out.loss.item())
        model.eval()
        correct = 0
        with torch.no_grad():
            for batch in batches(val_x, val_y, args.bs, n_frames, False, 0):
                batch = mark_batch_dynamic(batch)
                logits = step_fn(**batch).logits
                correct += (logits.argmax(-1) == batch["labels"]).sum().item()
        print(f"epoch {epoch}: train loss {sum(losses) / len(losses):.4f}  "
              f"val acc {correct / len(val_y):.3f}  ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
