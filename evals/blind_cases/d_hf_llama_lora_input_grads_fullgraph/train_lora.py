"""LoRA fine-tuning of a small Llama-architecture LM on our tokenized support-ticket corpus.

    python train_lora.py              # compiled (fullgraph, as in the prod recipe)
    python train_lora.py --no-compile # eager reference
"""
import argparse
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from lora_utils import lora_state_dict, prepare_for_lora_training

VOCAB = 1024
SEQ = 64


def build_model():
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-5,
        tie_word_embeddings=False,
        attn_implementation="sdpa",
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg)


def synthetic_corpus(n_seqs, seed=1):
    # stand-in for the tokenized tickets: a few "templates" with noise so that the LM has something to learn
    g = torch.Generator().manual_seed(seed)
    templates = torch.randint(3, VOCAB, (16, SEQ), generator=g)
    idx = torch.randint(0, 16, (n_seqs,), generator=g)
    data = templates[idx].clone()
    noise = torch.rand(data.shape, generator=g) < 0.1
    data[noise] = torch.randint(3, VOCAB, (int(noise.sum()),), generator=g)
    return data


def batches(data, bs, seed):
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(data.shape[0], generator=g)
    for i in range(0, data.shape[0] - bs + 1, bs):
        yield data[perm[i:i + bs]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--bs", type=int, default=8)
    args = ap.parse_args()

    model = build_model()
    model = prepare_for_lora_training(model, r=8, alpha=16)
    model.train()

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.0)

    step_fn = model if args.no_compile else torch.compile(model, fullgraph=True)

    train = synthetic_corpus(160)
    val = synthetic_corpus(32, seed=2)

    step = 0
    for epoch in range(args.epochs):
        t0 = time.time()
        losses = []
        for input_ids in batches(train, args.bs, seed=epoch):
            out = step_fn(input_ids=input_ids, labels=input_ids)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)
            losses.append(out.loss.item())
            step += 1
            if step % 10 == 0:
                print(f"step {step:4d} loss {out.loss.item():.4f}", flush=True)
        with torch.no_grad():
            model.eval()
            val_loss = model(input_ids=val, labels=val).loss.item()
            model.train()
        print(f"epoch {epoch}: train loss {sum(losses) / len(losses):.4f} val loss {val_loss:.4f} ({time.time() - t0:.1f}s)")

    sd = lora_state_dict(model)
    print(f"saved {len(sd)} adapter tensors, |B| sum = {sum(v.abs().sum().item() for k, v in sd.items() if 'lora_B' in k):.4f}")


if __name__ == "__main__":
    main()
