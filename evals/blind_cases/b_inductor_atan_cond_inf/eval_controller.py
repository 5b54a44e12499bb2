"""Offline evaluation of the learned 2-DoF arm controller.

For every state in the eval set the policy head predicts a 2x2 gain matrix
(squashed with arctan to keep gains bounded). We report tracking error and
the conditioning of the predicted gain matrices; the nightly job fails if the
mean log10 condition number drifts above --max-log-cond.
"""
import argparse
import logging
import math
import sys
import time

import torch
import torch.nn as nn

log = logging.getLogger("eval_controller")


class GainPolicy(nn.Module):
    def __init__(self, state_dim=6, hidden=64):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(state_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh()
        )
        self.gain_head = nn.Linear(hidden, 4)
        self.bias_head = nn.Linear(hidden, 2)

    def forward(self, state):
        h = self.encoder(state)
        raw = self.gain_head(h).view(-1, 2, 2)
        gains = torch.arctan(raw)
        return gains, self.bias_head(h)


def gain_diagnostics(gains, state, bias):
    # torque = K @ error + b ; conditioning of K tells us how close to singular the controller is
    err = state[:, :2, None]
    torque = (gains @ err).squeeze(-1) + bias
    cond = torch.linalg.cond(gains)
    return torque, cond


def make_eval_set(n, state_dim, saturated_frac, gen):
    states = torch.randn(n, state_dim, generator=gen)
    n_sat = int(n * saturated_frac)
    # logged states at the joint limits are clipped by the simulator
    states[:n_sat] = 1.0
    target = torch.randn(n, 2, generator=gen) * 0.1
    return states, target


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--state-dim", type=int, default=6)
    p.add_argument("--saturated-frac", type=float, default=0.02)
    p.add_argument("--max-log-cond", type=float, default=8.0)
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(0)
    policy = GainPolicy(args.state_dim).eval()
    # checkpoint stand-in: a policy whose gain head collapsed to a rank-1 output
    with torch.no_grad():
        policy.gain_head.weight.zero_()
        policy.gain_head.bias.fill_(1.0)
    gen = torch.Generator().manual_seed(7)
    states, target = make_eval_set(args.n, args.state_dim, args.saturated_frac, gen)

    def evaluate(state):
        gains, bias = policy(state)
        return gain_diagnostics(gains, state, bias)

    step = torch.compile(evaluate) if args.compile else evaluate

    t0 = time.perf_counter()
    sq_err, log_conds, n_inf = 0.0, [], 0
    with torch.no_grad():
        for i in range(0, args.n, args.batch_size):
            s, tgt = states[i : i + args.batch_size], target[i : i + args.batch_size]
            torque, cond = step(s)
            sq_err += (torque - tgt).pow(2).sum().item()
            n_inf += int(torch.isinf(cond).sum())
            log_conds.append(torch.log10(cond))
    log_cond = torch.cat(log_conds)
    mean_log_cond = log_cond.mean().item()
    log.info("mode=%s eval time %.2fs", "compiled" if args.compile else "eager", time.perf_counter() - t0)
    log.info("rmse %.4f", math.sqrt(sq_err / (2 * args.n)))
    log.info("mean log10 cond(K) %.3f  max %.3f  inf count %d", mean_log_cond, log_cond.max().item(), n_inf)
    if not mean_log_cond <= args.max_log_cond:
        log.error("gain conditioning check FAILED (%.3f > %.3f)", mean_log_cond, args.max_log_cond)
        sys.exit(1)
    log.info("gain conditioning check passed")


if __name__ == "__main__":
    main()
