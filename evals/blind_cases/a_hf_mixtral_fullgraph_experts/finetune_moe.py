"""Domain-adaptation fine-tune of a small Mixtral-style MoE LM.

    python finetune_moe.py --steps 6

The model config mirrors our production MoE (scaled down); training runs
with a fully-captured compiled train step so that the graph can be cached
and reused by the nightly job.
"""
import argparse
import math
import time

import torch
from transformers import MixtralConfig, MixtralForCausalLM

MODEL_KW = dict(
    vocab_size=2048,
    hidden_size=128,
    intermediate_size=256,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    num_local_experts=4,
    num_experts_per_tok=2,
    max_position_embeddings=512,
    router_aux_loss_coef=0.02,
    # per-expert matmuls so the expert weights stay addressable one by one
    # for the expert-usage report and deterministic across machines
    experts_implementation="eager",
)


def build_model():
    cfg = MixtralConfig(**MODEL_KW)
    model = MixtralForCausalLM(cfg)
    model.config.use_cache = False
    return model


def synthetic_domain_batches(n, batch, seq, vocab, seed=0):
    g = torch.Generator().manual_seed(seed)
    # zipfian-ish token distribution so routing is not uniform
    probs = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float)
    probs /= probs.sum()
    for _ in range(n):
        ids = torch.multinomial(probs, batch * seq, replacement=True, generator=g).view(batch, seq)
        lens = torch.randint(seq // 2, seq + 1, (batch,), generator=g)
        mask = (torch.arange(seq)[None] < lens[:, None]).long()
        labels = ids.masked_fill(mask == 0, -100)
        yield ids, mask, labels


def make_train_step(model, opt):
    compiled = torch.compile(model, fullgraph=True)

    def step(ids, mask, labels):
        loss = compiled(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    return step


@torch.no_grad()
def expert_usage(model, ids, mask):
    out = model(input_ids=ids, attention_mask=mask, output_router_logits=True)
    k = model.config.num_experts_per_tok
    report = []
    for layer, logits in enumerate(out.router_logits):
        top = logits.topk(k, dim=-1).indices.flatten()
        counts = torch.bincount(top, minlength=model.config.num_local_experts)
        report.append((layer, (counts.float() / counts.sum()).tolist()))
    return report


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-4)
    args = ap.parse_args()

    torch.manual_seed(0)
    model = build_model().train()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params={n_params / 1e6:.2f}M experts={model.config.num_local_experts} "
          f"top_k={model.config.num_experts_per_tok}")
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    step = make_train_step(model, opt)

    t0 = time.time()
    last = None
    for i, (ids, mask, labels) in enumerate(
            synthetic_domain_batches(args.steps, args.batch, args.seq, model.config.vocab_size)):
        loss = step(ids, mask, labels)
        last = (ids, mask)
        print(f"step {i} loss={loss.item():.4f} "
              f"ppl={math.exp(loss.item()):.1f} t={time.time() - t0:.1f}s", flush=True)

    model.eval()
    for layer, frac in expert_usage(model, *last):
        print(f"layer {layer} expert load: " + " ".join(f"{f:.2f}" for f in frac))


if __name__ == "__main__":
    main()
