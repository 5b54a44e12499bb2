"""Fine-tune a small BERT intent classifier with a per-layer gradient monitor.

The model is compiled with fullgraph=True so that CI fails loudly if a
transformers upgrade introduces graph breaks.
"""
import argparse
import os
import time

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

if os.environ.get("USE_COMPILED_AUTOGRAD") == "1":
    torch._dynamo.config.compiled_autograd = True

N_INTENTS = 7
VOCAB = 2000
PAD = 0


class LayerGradMonitor:
    """Tracks the norm of the gradient leaving each encoder layer (vanishing-gradient alarm)."""

    def __init__(self, layers, alarm=1e-6):
        self.alarm = alarm
        self.last = {}
        self.handles = [
            layer.register_full_backward_hook(self._hook(f"layer{i}")) for i, layer in enumerate(layers)
        ]

    def _hook(self, name):
        def fn(module, grad_input, grad_output):
            if grad_output[0] is not None:
                self.last[name] = grad_output[0].detach().norm()
        return fn

    def check(self, step):
        vals = {k: v.item() for k, v in self.last.items()}
        low = [k for k, v in vals.items() if v < self.alarm]
        if low:
            print(f"  [monitor] step {step}: vanishing gradient in {low}")
        return vals


def make_batch(batch, seq, gen):
    labels = torch.randint(0, N_INTENTS, (batch,), generator=gen)
    ids = torch.randint(10, VOCAB, (batch, seq), generator=gen)
    ids[:, 1] = 100 + labels * 3                      # intent keyword
    lengths = torch.randint(seq // 2, seq + 1, (batch,), generator=gen)
    mask = torch.arange(seq)[None, :] < lengths[:, None]
    ids = ids.masked_fill(~mask, PAD)
    ids[:, 0] = 1                                     # [CLS]
    return {"input_ids": ids, "attention_mask": mask.long(), "labels": labels}


def build_model():
    cfg = BertConfig(
        vocab_size=VOCAB, hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
        intermediate_size=256, max_position_embeddings=128, num_labels=N_INTENTS,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=PAD,
    )
    cfg.problem_type = "single_label_classification"
    return BertForSequenceClassification(cfg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = build_model()
    monitor = LayerGradMonitor(model.bert.encoder.layer)
    model.train()
    fwd = model if args.no_compile else torch.compile(model, fullgraph=True)
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)
    gen = torch.Generator().manual_seed(1)

    t_start = time.perf_counter()
    for step in range(1, args.steps + 1):
        batch = make_batch(args.batch, args.seq, gen)
        out = fwd(**batch)
        opt.zero_grad(set_to_none=True)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        grads = monitor.check(step)
        if step % 10 == 0 or step == 1:
            acc = (out.logits.argmax(-1) == batch["labels"]).float().mean().item()
            g = " ".join(f"{k}={v:.2e}" for k, v in sorted(grads.items()))
            print(f"step {step:3d} loss={out.loss.item():.4f} acc={acc:.2f} | {g}")

    model.eval()
    with torch.no_grad():
        val = make_batch(256, args.seq, torch.Generator().manual_seed(2))
        logits = model(**{k: v for k, v in val.items() if k != "labels"}).logits
        print(f"val acc={(logits.argmax(-1) == val['labels']).float().mean().item():.3f} "
              f"val loss={F.cross_entropy(logits, val['labels']).item():.4f} "
              f"time={time.perf_counter() - t_start:.1f}s")


if __name__ == "__main__":
    main()
