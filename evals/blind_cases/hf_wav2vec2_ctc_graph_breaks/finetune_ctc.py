"""CTC fine-tuning smoke run for our keyword-spotting ASR head (Wav2Vec2ForCTC, tiny random-init
config so it runs on a laptop CPU; the real job loads our pretrained checkpoint).

Usage: python finetune_ctc.py [--compile] [--steps N]
"""
import argparse
import time

import torch
from transformers import Wav2Vec2Config, Wav2Vec2ForCTC

VOCAB = ["<pad>", "|"] + list("abcdefghijklmnopqrstuvwxyz'")
SR = 16000


def build_model():
    cfg = Wav2Vec2Config(
        vocab_size=len(VOCAB), pad_token_id=0,
        hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32, 32), conv_stride=(5, 4, 4), conv_kernel=(10, 8, 4),
        num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4,
        feat_extract_norm="layer", do_stable_layer_norm=True,
        mask_time_prob=0.05, mask_time_length=4,          # SpecAugment, as in the HF CTC recipe
        ctc_loss_reduction="mean", ctc_zero_infinity=True,
        hidden_dropout=0.1, attention_dropout=0.1, layerdrop=0.0,
    )
    return Wav2Vec2ForCTC(cfg)


def synthetic_batch(gen, batch_size=4, seconds=0.5, max_label_len=8):
    """Random 'speech' + random transcripts, padded the way DataCollatorCTCWithPadding pads."""
    n = int(SR * seconds)
    lengths = torch.randint(int(0.7 * n), n + 1, (batch_size,), generator=gen)
    audio = torch.zeros(batch_size, n)
    attn = torch.zeros(batch_size, n, dtype=torch.long)
    for i, L in enumerate(lengths.tolist()):
        audio[i, :L] = torch.randn(L, generator=gen) * 0.1
        attn[i, :L] = 1
    lab_len = torch.randint(3, max_label_len + 1, (batch_size,), generator=gen)
    labels = torch.full((batch_size, max_label_len), -100, dtype=torch.long)
    for i, L in enumerate(lab_len.tolist()):
        labels[i, :L] = torch.randint(1, len(VOCAB), (L,), generator=gen)
    return audio, attn, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=12)
    args = ap.parse_args()

    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    model = build_model().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    fwd = torch.compile(model) if args.compile else model

    # clips are padded to a fixed 0.5 s window by our collator
    batches = [synthetic_batch(gen) for _ in range(args.steps)]

    times = []
    t_start = time.time()
    for step, (audio, attn, labels) in enumerate(batches, 1):
        t0 = time.time()
        out = fwd(input_values=audio, attention_mask=attn, labels=labels)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.time() - t0)
        if step in (1, 2, 3, 4) or step % 4 == 0:
            print(f"step {step:3d} loss {out.loss.item():8.3f} step_time {times[-1] * 1000:8.1f} ms")
    steady = sorted(times[len(times) // 2:])[len(times[len(times) // 2:]) // 2]
    print(f"{'compiled' if args.compile else 'eager'}: total {time.time() - t_start:.1f}s, "
          f"median step (2nd half) {steady * 1000:.1f} ms")


if __name__ == "__main__":
    main()
