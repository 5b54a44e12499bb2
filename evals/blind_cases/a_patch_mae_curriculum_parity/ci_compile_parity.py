"""CI gate: the compiled pretraining loop must track the eager loop.

Trains the same init for a few short epochs eagerly and with torch.compile and compares per-epoch
train / validation loss.
"""
import copy
import sys
import time

import torch

from patch_mae import PatchMAE, init_weights
from train_utils import PretrainConfig, maybe_compile, sensor_batches

RTOL = 1e-3


def train(cfg: PretrainConfig, init_state, train_data, val_data):
    model = PatchMAE(n_patches=cfg.seq_len // 16)
    model.load_state_dict(init_state)
    step_fn = maybe_compile(model, cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    history = []
    it = iter(train_data)
    for epoch in range(cfg.epochs):
        model.mask_ratio = cfg.mask_schedule.get(epoch, model.mask_ratio)
        model.train()
        losses = []
        for _ in range(cfg.steps_per_epoch):
            x, noise = next(it)
            loss = step_fn(x, noise)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            val = sum(step_fn(x, noise).item() for x, noise in val_data) / len(val_data)
        history.append((model.mask_ratio, sum(losses) / len(losses), val))
    return history


def main():
    torch.manual_seed(0)
    base = PretrainConfig()
    ref_model = PatchMAE(n_patches=base.seq_len // 16)
    ref_model.apply(init_weights)
    init_state = copy.deepcopy(ref_model.state_dict())

    n_train = base.steps_per_epoch * base.epochs
    train_data = sensor_batches(base, n_train, seed=1)
    val_data = sensor_batches(base, 4, seed=2)

    t0 = time.perf_counter()
    eager = train(PretrainConfig(compile=False), init_state, train_data, val_data)
    t_eager = time.perf_counter() - t0
    t0 = time.perf_counter()
    compiled = train(PretrainConfig(compile=True), init_state, train_data, val_data)
    t_comp = time.perf_counter() - t0
    print(f"eager {t_eager:.1f}s | compiled {t_comp:.1f}s (incl. compilation)")

    ok = True
    print(f"{'epoch':>5} {'mask':>5} {'train eager':>12} {'train comp':>12} {'val eager':>10} {'val comp':>10}  status")
    for ep, ((mr, tr_e, va_e), (_, tr_c, va_c)) in enumerate(zip(eager, compiled)):
        good = abs(tr_e - tr_c) <= RTOL * abs(tr_e) and abs(va_e - va_c) <= RTOL * abs(va_e)
        ok &= good
        print(f"{ep:5d} {mr:5.2f} {tr_e:12.6f} {tr_c:12.6f} {va_e:10.6f} {va_c:10.6f}  {'ok' if good else 'MISMATCH'}")
    if not ok:
        print(f"FAIL: compiled pretraining diverged from eager (rtol={RTOL})")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
