"""A/B check before we turn torch.compile on for the nightly char-LM job.

Trains the same initial weights on the same batches once per variant and compares the loss curves.

usage: python compile_ab.py [--steps 150] [--order eager,compiled] [--backend inductor]
"""
import argparse
import copy
import logging
import time

import torch

from trainer import CharGPT, make_corpus, get_batch, build_optimizer, warmup_cosine

log = logging.getLogger("compile_ab")


def run_variant(name, model, optimizer, scheduler, data, args):
    step_model = torch.compile(model, backend=args.backend) if name == "compiled" else model
    gen = torch.Generator().manual_seed(1234)          # identical batch stream per variant
    eval_gen = torch.Generator().manual_seed(99)
    eval_batches = [get_batch(data, 64, args.block, eval_gen) for _ in range(4)]
    curve = []
    t0 = time.time()
    model.train()
    for step in range(args.steps):
        x, y = get_batch(data, args.batch_size, args.block, gen)
        loss = step_model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        curve.append(loss.item())
        if step % 50 == 0 or step == args.steps - 1:
            log.info("[%s] step %4d  loss %.4f", name, step, loss.item())
    model.eval()
    with torch.no_grad():   # evaluate with the plain module so both variants use the same eval path
        val = sum(model(x, y).item() for x, y in eval_batches) / len(eval_batches)
    model.train()
    log.info("[%s] %d steps in %.1fs  val loss %.4f", name, args.steps, time.time() - t0, val)
    return curve, val


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--order", default="eager,compiled")
    ap.add_argument("--backend", default="inductor")
    ap.add_argument("--tol", type=float, default=0.02)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    torch.manual_seed(0)
    data, vocab = make_corpus()
    model = CharGPT(vocab, block=args.block)
    optimizer = build_optimizer(model, args.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(args.warmup, args.steps))

    # snapshot so every variant starts from exactly the same point
    init_model = copy.deepcopy(model.state_dict())
    init_optim = copy.deepcopy(optimizer.state_dict())

    results = {}
    for name in args.order.split(","):
        model.load_state_dict(init_model)
        optimizer.load_state_dict(init_optim)
        key = name if name not in results else f"{name}_{len(results) + 1}"
        results[key] = run_variant(name, model, optimizer, scheduler, data, args)

    names = list(results)
    a, b = names[0], names[-1]
    ca, cb = results[a][0], results[b][0]
    first_div = next((i for i, (x, y) in enumerate(zip(ca, cb)) if abs(x - y) > 1e-3), None)
    log.info("first step where |%s - %s| > 1e-3: %s", a, b, first_div)
    gap = results[b][1] - results[a][1]
    log.info("val loss  %s %.4f   %s %.4f   gap %+.4f", a, results[a][1], b, results[b][1], gap)
    if abs(gap) > args.tol:
        log.error("A/B FAILED: %s and %s disagree by more than %.3f", a, b, args.tol)
        raise SystemExit(1)
    log.info("A/B OK")


if __name__ == "__main__":
    main()
