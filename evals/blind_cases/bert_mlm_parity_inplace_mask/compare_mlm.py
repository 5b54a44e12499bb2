"""Eager vs torch.compile training-parity check for our MLM pretraining model.

We run N optimizer steps in eager mode and N steps with torch.compile from the
same initial weights and the same pre-generated batches, then compare the loss
curves. This is the gate we run before switching the pretraining job to compile.

    python compare_mlm.py            # default: inductor
    python compare_mlm.py --backend aot_eager
"""
import argparse
import copy
import math
import time

import torch
import torch.nn as nn
from transformers import BertConfig, BertForMaskedLM

PAD_ID, CLS_ID, SEP_ID, MASK_ID = 0, 1, 2, 3
VOCAB = 512
SEQ = 48
BATCH = 16


class MLMPretrainModel(nn.Module):
    """BERT MLM with the masking done inside the model so that the data
    pipeline only has to hand us token ids and the positions to mask."""

    def __init__(self, cfg):
        super().__init__()
        self.bert = BertForMaskedLM(cfg)

    def forward(self, input_ids, attention_mask, mlm_positions):
        # loss only on the positions we mask
        labels = torch.where(mlm_positions, input_ids, torch.full_like(input_ids, -100))
        # replace the selected tokens by [MASK]
        input_ids.masked_fill_(mlm_positions, MASK_ID)
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
        return out.loss


def make_batches(n_batches, seed=0):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        ids = torch.randint(10, VOCAB, (BATCH, SEQ), generator=g)
        lengths = torch.randint(SEQ // 2, SEQ + 1, (BATCH,), generator=g)
        pos = torch.arange(SEQ)[None, :]
        attn = (pos < lengths[:, None]).long()
        ids = ids.masked_fill(attn == 0, PAD_ID)
        ids[:, 0] = CLS_ID
        mlm = (torch.rand(BATCH, SEQ, generator=g) < 0.15) & (attn == 1)
        mlm[:, 0] = False
        batches.append(dict(input_ids=ids, attention_mask=attn, mlm_positions=mlm))
    return batches


def train(model, batches, label):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    t0 = time.time()
    for step, batch in enumerate(batches):
        loss = model(**batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        if step % 5 == 0 or step == len(batches) - 1:
            print(f"[{label}] step {step:3d} loss {loss.item():.4f}")
    print(f"[{label}] {len(batches)} steps in {time.time() - t0:.1f}s")
    return losses


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--backend", default="inductor")
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=128,
                     max_position_embeddings=64, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, pad_token_id=PAD_ID)
    base = MLMPretrainModel(cfg)
    batches = make_batches(args.steps)

    eager_model = copy.deepcopy(base)
    compiled_model = torch.compile(copy.deepcopy(base), backend=args.backend)

    eager_losses = train(eager_model, batches, "eager")
    comp_losses = train(compiled_model, batches, f"compile/{args.backend}")

    print(f"chance-level loss ~ ln({VOCAB}) = {math.log(VOCAB):.3f}")
    worst = max(abs(a - b) for a, b in zip(eager_losses, comp_losses))
    print(f"final loss eager={eager_losses[-1]:.4f} compiled={comp_losses[-1]:.4f} "
          f"max |diff| over steps={worst:.4f}")
    if worst > 1e-2:
        raise SystemExit("PARITY FAILED: compiled training diverges from eager")
    print("PARITY OK")


if __name__ == "__main__":
    main()
