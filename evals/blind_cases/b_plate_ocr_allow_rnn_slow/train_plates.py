"""License-plate recognizer training loop (synthetic plates, CPU).

    python train_plates.py --compile      # how we run it
    python train_plates.py                # eager baseline
"""
import argparse
import time

import torch
import torch._dynamo
import torch.nn.functional as F

from plate_model import CHARSET, PlateRecognizer, greedy_decode

# TORCH_LOGS=graph_breaks showed a break at self.rnn with the hint to set this,
# so we turned it on to get the whole model into one graph.
torch._dynamo.config.allow_rnn = True


def synth_batch(batch, gen, length=5, h=32, w=48):
    """Render crude 'plates': each character is a fixed random 28x8 glyph stamped on noise."""
    glyphs = torch.rand(len(CHARSET), 1, 28, 8, generator=torch.Generator().manual_seed(7))
    labels = torch.randint(1, len(CHARSET) + 1, (batch, length), generator=gen)
    img = 0.2 * torch.rand(batch, 1, h, w, generator=gen)
    for b in range(batch):
        for j in range(length):
            x0 = 4 + 8 * j
            img[b, :, 2:30, x0:x0 + 8] += glyphs[labels[b, j] - 1]
    return img, labels


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = PlateRecognizer()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3)
    fwd = torch.compile(model) if args.compile else model
    gen = torch.Generator().manual_seed(0)

    step_times = []
    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        images, labels = synth_batch(args.batch, gen)
        t0 = time.perf_counter()
        log_probs = fwd(images)                            # B, T, K
        T = log_probs.shape[1]
        loss = F.ctc_loss(log_probs.transpose(0, 1), labels,
                          torch.full((args.batch,), T, dtype=torch.long),
                          torch.full((args.batch,), labels.shape[1], dtype=torch.long))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step_times.append(time.perf_counter() - t0)
        if step == 1:
            print(f"step 1 done after {time.perf_counter() - t_start:.1f}s  loss {loss.item():.3f}")
        elif step % 10 == 0:
            print(f"step {step:3d}  loss {loss.item():.3f}")

    steady = sorted(step_times[5:])[len(step_times[5:]) // 2]
    print(f"median step time (steps 6-{args.steps}): {steady * 1e3:.1f} ms")

    model.eval()
    with torch.no_grad():
        images, labels = synth_batch(8, torch.Generator().manual_seed(99))
        preds = greedy_decode(fwd(images))
    truth = ["".join(CHARSET[k - 1] for k in row) for row in labels.tolist()]
    print("sample:", list(zip(truth[:3], preds[:3])))
    print(f"total wall {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
