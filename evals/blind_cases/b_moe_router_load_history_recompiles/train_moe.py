"""Pre-training smoke run for the MoE LM (synthetic token stream).

    python train_moe.py               # compiled (default)
    python train_moe.py --no-compile  # eager reference
"""
import argparse
import statistics
import time

import torch

from moe_lm import MoELM

AUX_COEF = 0.01


def batches(steps, batch, seq, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    # Zipf-ish token distribution so routing is not uniform
    weights = 1.0 / torch.arange(1, vocab + 1).float()
    for _ in range(steps):
        toks = torch.multinomial(weights, batch * (seq + 1), replacement=True, generator=g)
        toks = toks.view(batch, seq + 1)
        yield toks[:, :-1].contiguous(), toks[:, 1:].contiguous()


def load_report(model):
    parts = []
    for i, r in enumerate(model.routers()):
        if not r.load_history:
            continue
        load = torch.stack(r.load_history).mean(0)
        cv = (load.std() / load.mean()).item()
        parts.append(f"L{i} cv={cv:.3f}")
        r.load_history.clear()
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--steps", type=int, default=75)
    ap.add_argument("--log-every", type=int, default=25)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=16)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = MoELM()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    step_fn = model if args.no_compile else torch.compile(model)

    # wall time is noisy on the shared CI runners, so we also log process CPU time
    window, cpu_window, t_start = [], [], time.time()
    for step, (x, y) in enumerate(batches(args.steps, args.batch, args.seq, 512)):
        t0, c0 = time.perf_counter(), time.process_time()
        lm_loss, aux = step_fn(x, y)
        loss = lm_loss + AUX_COEF * aux
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        if step > 0:
            window.append(dt)
            cpu_window.append(cpu)
        if step == 0:
            print(f"step 0: loss {lm_loss.item():.4f} (first step {dt:.1f}s incl. compile)")
        if (step + 1) % args.log_every == 0:
            print(f"step {step + 1:4d}: loss {lm_loss.item():.4f} aux {aux.item():.3f} | "
                  f"step median {statistics.median(window) * 1e3:.0f} ms wall, "
                  f"{statistics.median(cpu_window) * 1e3:.0f} ms cpu (max {max(window) * 1e3:.0f} ms) | "
                  f"{load_report(model)}")
            window, cpu_window = [], []
    print(f"total wall time {time.time() - t_start:.1f}s")


if __name__ == "__main__":
    main()
