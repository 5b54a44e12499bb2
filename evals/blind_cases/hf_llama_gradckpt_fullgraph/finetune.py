import argparse
import math
import time

import torch
from torch.utils.data import DataLoader, Dataset
from transformers import LlamaConfig, LlamaForCausalLM

CORPUS = [
    "the quick brown fox jumps over the lazy dog",
    "pack my box with five dozen liquor jugs",
    "how vexingly quick daft zebras jump",
    "sphinx of black quartz judge my vow",
    "the five boxing wizards jump quickly",
    "jackdaws love my big sphinx of quartz",
]


class CharDataset(Dataset):
    def __init__(self, texts, seq_len, n_samples, seed=0):
        self.vocab = sorted(set("".join(texts)))
        self.stoi = {c: i + 1 for i, c in enumerate(self.vocab)}
        stream = " | ".join(texts * 50)
        self.data = torch.tensor([self.stoi.get(c, 0) for c in stream], dtype=torch.long)
        g = torch.Generator().manual_seed(seed)
        self.starts = torch.randint(0, len(self.data) - seq_len - 1, (n_samples,), generator=g)
        self.seq_len = seq_len

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        s = self.starts[i]
        return self.data[s : s + self.seq_len]


def build_model(vocab_size):
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq-len", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--grad-ckpt", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    ds = CharDataset(CORPUS, args.seq_len, n_samples=args.steps * args.batch_size)
    dl = DataLoader(ds, batch_size=args.batch_size, shuffle=True, drop_last=True)
    model = build_model(len(ds.vocab) + 1)
    if args.grad_ckpt:
        model.gradient_checkpointing_enable()
    model.train()

    step_model = model if args.no_compile else torch.compile(model, fullgraph=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    t_start = time.perf_counter()
    for step, ids in enumerate(dl):
        t0 = time.perf_counter()
        out = step_model(input_ids=ids, labels=ids)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 3 == 0:
            print(f"step {step:3d} loss {out.loss.item():.4f} ppl {math.exp(out.loss.item()):.2f} "
                  f"({(time.perf_counter() - t0) * 1000:.0f} ms)")
    print(f"done in {time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
