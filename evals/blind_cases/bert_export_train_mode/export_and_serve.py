"""Fine-tune a small BERT ticket classifier, export it with torch.export for the
serving container, then run the serving-side smoke test on the held-out set.

The serving container only gets the .pt2 file (no Python model code), so
everything it needs has to be inside the exported program.
"""
import os
import time

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

ART = "/tmp/ticket_clf.pt2"
REF = "/tmp/ticket_clf_parity.pt"  # reference logits shipped with the artifact
VOCAB, SEQ, N_CLASSES = 1000, 32, 4


def make_split(n, seed):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, N_CLASSES, (n,), generator=g)
    ids = torch.randint(10, VOCAB, (n, SEQ), generator=g)
    for _ in range(2):
        ids[torch.arange(n), torch.randint(1, SEQ, (n,), generator=g)] = labels + 1
    ids[:, 0] = 101
    return ids, torch.ones_like(ids), labels


def train_and_export():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=64, num_labels=N_CLASSES,
                     hidden_dropout_prob=0.3, attention_probs_dropout_prob=0.3)
    model = BertForSequenceClassification(cfg)
    ids, mask, labels = make_split(512, 1)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for epoch in range(3):
        perm = torch.randperm(len(ids))
        for i in range(0, len(perm), 32):
            idx = perm[i:i + 32]
            loss = model(input_ids=ids[idx], attention_mask=mask[idx], labels=labels[idx]).loss
            loss.backward()
            opt.step()
            opt.zero_grad()
        print(f"epoch {epoch}: loss {loss.item():.3f}")

    # reference numbers from the training process, for the release notes
    val = make_split(256, 2)
    with torch.no_grad():
        model.eval()
        ref_logits = model(input_ids=val[0], attention_mask=val[1]).logits
        model.train()
    ref_acc = (ref_logits.argmax(-1) == val[2]).float().mean().item()
    torch.save(ref_logits, REF)
    print(f"[train box] val acc (eager, eval mode): {ref_acc:.4f}")

    example = (ids[:8], mask[:8])
    batch = torch.export.Dim("batch", min=2, max=256)
    ep = torch.export.export(model, args=(), kwargs={"input_ids": example[0], "attention_mask": example[1]},
                             dynamic_shapes={"input_ids": {0: batch}, "attention_mask": {0: batch}})
    torch.export.save(ep, ART)
    print(f"exported -> {ART}")


def serving_smoke_test():
    # --- this part mirrors the serving container: only the artifact is available
    prog = torch.export.load(ART).module()
    ids, mask, labels = make_split(256, 2)
    with torch.no_grad():
        logits_a = prog(input_ids=ids, attention_mask=mask).logits
        logits_b = prog(input_ids=ids, attention_mask=mask).logits
    acc = (logits_a.argmax(-1) == labels).float().mean().item()
    ref_logits = torch.load(REF)
    parity = (logits_a - ref_logits).abs().max().item()
    print(f"[serving] val acc: {acc:.4f}")
    print(f"[serving] parity vs train box, max |logit diff|: {parity:.4f} -> {'OK' if parity < 1e-3 else 'FAILED'}")
    print(f"[serving] same request twice, max |logit diff|: {(logits_a - logits_b).abs().max().item():.4f}")


if __name__ == "__main__":
    t0 = time.time()
    train_and_export()
    serving_smoke_test()
    print(f"total {time.time() - t0:.1f}s")
