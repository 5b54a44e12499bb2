"""GRPO fine-tuning loop with the SAPO soft-gated policy loss.

Rollouts are synthetic here (random completions scored by a toy reward) so the
loop can be benchmarked without a generation server.
"""
import argparse
import logging
import time

import torch

from policy import Policy

log = logging.getLogger("grpo")


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--group-size", type=int, default=4)
    p.add_argument("--prompt-len", type=int, default=16)
    p.add_argument("--completion-len", type=int, default=48)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--tau-pos", type=float, default=1.0)
    p.add_argument("--tau-neg", type=float, default=1.05)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=5)
    return p.parse_args()


def sapo_gate(ratio, tau):
    # soft replacement for PPO clipping: sigmoid gate centred at ratio == 1
    return torch.sigmoid(tau * (ratio - 1.0)) * (4.0 / tau)


def sapo_loss(logp, old_logp, advantages, completion_mask, tau_pos, tau_neg):
    ratio = torch.exp(logp - old_logp)
    adv = advantages.unsqueeze(-1).expand_as(ratio)
    per_token_loss = torch.zeros_like(ratio)
    pos = adv > 0
    neg = ~pos
    per_token_loss[pos] = -sapo_gate(ratio[pos], tau_pos) * adv[pos]
    per_token_loss[neg] = -sapo_gate(ratio[neg], tau_neg) * adv[neg]
    per_seq = (per_token_loss * completion_mask).sum(-1) / completion_mask.sum(-1).clamp(min=1)
    return per_seq.mean()


def compute_loss(policy, ids, old_logp, advantages, completion_mask, tau_pos, tau_neg):
    logp = policy.token_logprobs(ids)
    return sapo_loss(logp, old_logp, advantages, completion_mask, tau_pos, tau_neg)


def make_rollouts(policy, args, vocab, gen):
    n = args.prompts * args.group_size
    T = args.prompt_len + args.completion_len
    ids = torch.randint(0, vocab, (n, T), generator=gen)
    # completions end at a random EOS position; everything after it is padding
    lengths = torch.randint(8, args.completion_len + 1, (n,), generator=gen)
    ar = torch.arange(args.completion_len)
    completion_mask = (ar.unsqueeze(0) < lengths.unsqueeze(1)).float()
    completion_mask = torch.cat([torch.zeros(n, args.prompt_len - 1), completion_mask], dim=1)
    # toy reward: fraction of even tokens in the completion
    comp = ids[:, args.prompt_len:]
    valid = completion_mask[:, args.prompt_len - 1:]
    rewards = ((comp % 2 == 0).float() * valid).sum(-1) / valid.sum(-1)
    grouped = rewards.view(args.prompts, args.group_size)
    adv = (grouped - grouped.mean(-1, keepdim=True)) / (grouped.std(-1, keepdim=True) + 1e-4)
    with torch.no_grad():
        old_logp = policy.token_logprobs(ids)
    return ids, old_logp, adv.view(-1), completion_mask, rewards.mean().item()


def main():
    args = parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)

    policy = Policy(vocab_size=512, d_model=128, n_heads=4, n_layers=4,
                    max_len=args.prompt_len + args.completion_len)
    opt = torch.optim.AdamW(policy.parameters(), lr=args.lr, weight_decay=0.0)
    loss_fn = torch.compile(compute_loss) if args.compile else compute_loss
    log.info("params=%.2fM compile=%s", sum(p.numel() for p in policy.parameters()) / 1e6, args.compile)

    step_times = []
    for step in range(1, args.steps + 1):
        ids, old_logp, adv, cmask, mean_reward = make_rollouts(policy, args, 512, gen)
        t0 = time.perf_counter()
        loss = loss_fn(policy, ids, old_logp, adv, cmask, args.tau_pos, args.tau_neg)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        step_times.append(dt)
        if step % args.log_every == 0 or step == 1:
            log.info("step %3d loss %.4f reward %.3f step_time %.1f ms", step, loss.item(), mean_reward, dt * 1e3)

    warm = step_times[10:] if len(step_times) > 10 else step_times
    log.info("done: mean step time (after warm-up) %.1f ms, first step %.1f ms",
             1e3 * sum(warm) / len(warm), 1e3 * step_times[0])


if __name__ == "__main__":
    main()
