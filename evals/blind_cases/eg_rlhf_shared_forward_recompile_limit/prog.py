"""Tiny PPO-style RLHF loop for our summarizer LM (CPU smoke config).

policy / reference / reward / value heads all share the same small decoder
architecture so we can load any checkpoint into any role.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB = 128
D_MODEL = 48
N_HEAD = 4
N_LAYER = 1
MAX_LEN = 64
PROMPT_LEN = 6
GEN_TOKENS = 6
ROLLOUT_BATCH = 4
PPO_STEPS = 12


class DecoderBlock(nn.Module):
    def __init__(self, d, n_head, p_drop=0.1):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.drop = nn.Dropout(p_drop)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=-1)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(B, T, C)
        x = x + self.drop(self.proj(a))
        x = x + self.drop(self.mlp(self.ln2(x)))
        return x


class TinyLM(nn.Module):
    def __init__(self, out_dim=VOCAB):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, D_MODEL)
        self.pos = nn.Embedding(MAX_LEN, D_MODEL)
        self.blocks = nn.ModuleList([DecoderBlock(D_MODEL, N_HEAD) for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(D_MODEL)
        self.head = nn.Linear(D_MODEL, out_dim)

    def forward(self, ids):
        T = ids.shape[1]
        pos = torch.arange(T, device=ids.device)
        h = self.tok(ids) + self.pos(pos)[None]
        for blk in self.blocks:
            h = blk(h)
        return self.head(self.ln_f(h))


def build_models():
    policy = TinyLM()
    reference = TinyLM()
    reference.load_state_dict(policy.state_dict())
    reward = TinyLM(out_dim=1)
    value = TinyLM(out_dim=1)
    for frozen in (reference, reward):
        frozen.eval()
        frozen.requires_grad_(False)
    return policy, reference, reward, value


def logprobs_of(logits, ids):
    lp = F.log_softmax(logits[:, :-1].float(), dim=-1)
    return lp.gather(-1, ids[:, 1:, None]).squeeze(-1)


@torch.no_grad()
def generate(policy_c, policy, prompt):
    policy.eval()
    ids = prompt
    for _ in range(GEN_TOKENS):
        logits = policy_c(ids)[:, -1]
        nxt = torch.multinomial(F.softmax(logits, dim=-1), 1)
        ids = torch.cat([ids, nxt], dim=1)
    policy.train()
    return ids


@torch.no_grad()
def evaluate(policy_c, policy, value_c, value, n_prompts=8):
    g = torch.Generator().manual_seed(1234)
    prompts = torch.randint(0, VOCAB, (n_prompts, PROMPT_LEN + GEN_TOKENS), generator=g)
    policy.eval()
    value.eval()
    nll = -logprobs_of(policy_c(prompts), prompts).mean()
    v = value_c(prompts)[:, -1, 0].mean()
    policy.train()
    value.train()
    return nll.item(), v.item()


def main():
    policy, reference, reward, value = build_models()
    policy_c = torch.compile(policy)
    reference_c = torch.compile(reference)
    reward_c = torch.compile(reward)
    value_c = torch.compile(value)

    opt = torch.optim.AdamW(list(policy.parameters()) + list(value.parameters()), lr=3e-4)
    kl_coef, clip = 0.05, 0.2
    step_times = []
    nll, v = evaluate(policy_c, policy, value_c, value)
    print(f"baseline held-out nll {nll:.4f}  value {v:+.4f}")

    for step in range(PPO_STEPS):
        t0 = time.perf_counter()
        # one prompt per rollout worker, sampled independently
        samples = [generate(policy_c, policy, torch.randint(0, VOCAB, (1, PROMPT_LEN)))
                   for _ in range(ROLLOUT_BATCH)]
        ids = torch.cat(samples, dim=0)

        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            old_lp = logprobs_of(policy_c(ids), ids)
            ref_lp = logprobs_of(reference_c(ids), ids)
            score = reward_c(ids)[:, -1, 0].float()
            old_values = value_c(ids)[:, -1, 0].float()
        rewards = score - kl_coef * (old_lp - ref_lp).sum(-1)
        adv = rewards - old_values
        adv = (adv - adv.mean()) / (adv.std() + 1e-6)

        values = value_c(ids)[:, -1, 0]
        v_clipped = old_values + (values - old_values).clamp(-clip, clip)

        new_lp = logprobs_of(policy_c(ids), ids)
        ratio = torch.exp(new_lp.sum(-1) - old_lp.sum(-1))
        pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
        v_loss = torch.max(F.mse_loss(values, rewards, reduction="none"),
                           F.mse_loss(v_clipped, rewards, reduction="none")).mean()
        loss = pg + 0.5 * v_loss

        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        step_times.append(dt)
        print(f"step {step}  loss {loss.item():+.4f}  reward {score.mean().item():+.4f}  "
              f"kl {(old_lp - ref_lp).sum(-1).mean().item():+.4f}  {dt:6.2f}s")

    steady = step_times[3:]
    nll, v = evaluate(policy_c, policy, value_c, value)
    print(f"final held-out nll {nll:.4f}  value {v:+.4f}")
    print(f"steady-state step time: {sum(steady) / len(steady):.3f}s")


if __name__ == "__main__":
    main()
