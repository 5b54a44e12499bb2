"""CI gate: torch.compile'd policy must match eager before we enable compile in the trainer.

    python ci_compile_parity.py
Exit code 1 on mismatch.
"""
import sys

import torch

from policy import ActorCritic

ATOL, RTOL = 1e-5, 1.3e-6   # float32 defaults of torch.testing.assert_close


def rollout_batch(gen, n=2048, obs_dim=17):
    # observations from the simulator are far from zero-mean / unit-variance
    scale = torch.linspace(0.5, 20.0, obs_dim)
    shift = torch.linspace(-5.0, 30.0, obs_dim)
    return torch.randn(n, obs_dim, generator=gen) * scale + shift


def check(name, a, b):
    try:
        torch.testing.assert_close(a, b, atol=ATOL, rtol=RTOL)
        print(f"  [ok]   {name}")
        return True
    except AssertionError as e:
        first = str(e).splitlines()
        print(f"  [FAIL] {name}: " + " | ".join(l.strip() for l in first[:4]))
        return False


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(123)
    model = ActorCritic()
    model.train()                       # the trainer calls the policy in train mode during PPO updates
    compiled = torch.compile(model)

    ok = True
    for it in range(3):
        obs = rollout_batch(gen)
        mu_e, ls_e, v_e = model(obs)
        mu_c, ls_c, v_c = compiled(obs)
        print(f"batch {it}:")
        ok &= check("action mean", mu_c, mu_e)
        ok &= check("log_std", ls_c, ls_e)
        ok &= check("value", v_c, v_e)

        # gradients of a PPO-style surrogate must match too
        for p in model.parameters():
            p.grad = None
        (mu_e.pow(2).mean() + v_e.pow(2).mean() - 0.01 * ls_e.sum(-1).mean()).backward()
        g_e = [p.grad.clone() for p in model.parameters()]
        for p in model.parameters():
            p.grad = None
        mu_c, ls_c, v_c = compiled(obs)
        (mu_c.pow(2).mean() + v_c.pow(2).mean() - 0.01 * ls_c.sum(-1).mean()).backward()
        g_c = [p.grad.clone() for p in model.parameters()]
        ok &= all(check(f"grad[{i}]", gc, ge) for i, (gc, ge) in enumerate(zip(g_c, g_e)))

    print("PARITY GATE:", "PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
