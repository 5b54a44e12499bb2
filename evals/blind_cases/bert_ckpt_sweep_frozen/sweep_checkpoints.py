"""Fine-tune a small BERT intent classifier, keep one checkpoint per epoch,
then sweep all checkpoints on the validation set to pick the best one.

The sweep is the slow part in our real pipeline (hundreds of checkpoints x
a big val set) so it runs the model through torch.compile on CPU.
"""
import argparse
import os
import time

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

import torch._inductor.config as inductor_config

p = argparse.ArgumentParser()
p.add_argument("--epochs", type=int, default=4)
p.add_argument("--no-compile", action="store_true")
p.add_argument("--ckpt-dir", default="/tmp/bert_intent_ckpts")
args = p.parse_args()

# recommended for CPU inference (Inductor CPU performance tuning guide)
inductor_config.freezing = True

torch.manual_seed(0)
VOCAB, SEQ, N_CLASSES = 1000, 32, 6
cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=128, max_position_embeddings=64, num_labels=N_CLASSES)


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, N_CLASSES, (n,), generator=g)
    ids = torch.randint(10, VOCAB, (n, SEQ), generator=g)
    # make the task learnable: a few class-specific "keyword" tokens
    for _ in range(3):
        pos = torch.randint(1, SEQ, (n,), generator=g)
        ids[torch.arange(n), pos] = labels + 1
    ids[:, 0] = 101  # [CLS]
    return ids, torch.ones_like(ids), labels


train = make_split(512, 1)
val = make_split(256, 2)

# ---------------------------------------------------------------- training
model = BertForSequenceClassification(cfg)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
os.makedirs(args.ckpt_dir, exist_ok=True)
ckpts = []
for epoch in range(args.epochs):
    model.train()
    perm = torch.randperm(train[0].shape[0])
    for i in range(0, len(perm), 32):
        idx = perm[i:i + 32]
        out = model(input_ids=train[0][idx], attention_mask=train[1][idx], labels=train[2][idx])
        out.loss.backward()
        opt.step()
        opt.zero_grad()
    path = os.path.join(args.ckpt_dir, f"epoch{epoch}.pt")
    torch.save(model.state_dict(), path)
    ckpts.append(path)
    print(f"epoch {epoch}: last train loss {out.loss.item():.4f} -> {path}")

# ---------------------------------------------------------------- sweep
eval_model = BertForSequenceClassification(cfg).eval()
eval_model.load_state_dict(torch.load(ckpts[0]))
runner = eval_model if args.no_compile else torch.compile(eval_model)


@torch.no_grad()
def evaluate():
    losses, correct = [], 0
    for i in range(0, val[0].shape[0], 64):
        logits = runner(input_ids=val[0][i:i + 64], attention_mask=val[1][i:i + 64]).logits
        losses.append(F.cross_entropy(logits, val[2][i:i + 64], reduction="sum"))
        correct += (logits.argmax(-1) == val[2][i:i + 64]).sum().item()
    n = val[0].shape[0]
    return torch.stack(losses).sum().item() / n, correct / n


results = {}
t0 = time.time()
for path in ckpts:
    eval_model.load_state_dict(torch.load(path))
    loss, acc = evaluate()
    results[path] = (loss, acc)
    print(f"{os.path.basename(path)}: val_loss={loss:.6f} val_acc={acc:.4f}")
print(f"sweep took {time.time() - t0:.1f}s")
best = min(results, key=lambda k: results[k][0])
print("best checkpoint:", os.path.basename(best))
