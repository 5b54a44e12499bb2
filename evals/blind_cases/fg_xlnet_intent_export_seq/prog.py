"""Package the XLNet intent classifier as a torch.export program for the serving fleet.

Steps: build the model (small config for the packaging smoke run), a few warm-up
fine-tuning steps on the synthetic ticket set, export with dynamic batch and
sequence length, save the .pt2, reload it and run the parity check on the
length buckets the router sends.
"""
import os
import random
import tempfile
import time

import torch
import torch.nn.functional as F
from transformers import XLNetConfig, XLNetForSequenceClassification

SEED = 1234
VOCAB = 2000
PAD_ID = 0
NUM_INTENTS = 7
MAX_BATCH = 32
MAX_LEN = 256
SERVE_BUCKETS = [(1, 12), (4, 24), (8, 48), (16, 96), (2, 200)]
EXPORT_DIR = os.environ.get("EXPORT_DIR", tempfile.mkdtemp(prefix="intent_pkg_"))


def build_model():
    cfg = XLNetConfig(
        vocab_size=VOCAB,
        d_model=128,
        n_layer=3,
        n_head=4,
        d_inner=256,
        num_labels=NUM_INTENTS,
        pad_token_id=PAD_ID,
        summary_type="last",
        dropout=0.1,
    )
    return XLNetForSequenceClassification(cfg)


def synthetic_tickets(n, rng):
    """Token-id tickets of varied length, left-aligned, padded per batch."""
    data = []
    for _ in range(n):
        label = rng.randrange(NUM_INTENTS)
        length = rng.randint(6, 60)
        # each intent has a few "keyword" ids that show up more often
        keywords = [100 + label * 10 + k for k in range(5)]
        ids = [rng.choice(keywords) if rng.random() < 0.3 else rng.randrange(1, VOCAB)
               for _ in range(length)]
        data.append((ids, label))
    return data


def collate(batch):
    longest = max(len(ids) for ids, _ in batch)
    input_ids = torch.full((len(batch), longest), PAD_ID, dtype=torch.long)
    attn = torch.zeros((len(batch), longest), dtype=torch.long)
    for i, (ids, _) in enumerate(batch):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        attn[i, : len(ids)] = 1
    labels = torch.tensor([lab for _, lab in batch])
    return input_ids, attn, labels


def warmup_finetune(model, data, steps=12, bs=16):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.train()
    for step in range(steps):
        batch = random.sample(data, bs)
        ids, attn, labels = collate(batch)
        out = model(input_ids=ids, attention_mask=attn)
        loss = F.cross_entropy(out.logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 4 == 0:
            print(f"  step {step:2d}  loss {loss.item():.4f}")
    model.eval()


class ServingWrapper(torch.nn.Module):
    """What the fleet calls: ids + mask in, intent probabilities out."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask,
                            use_mems=False, return_dict=True).logits
        return torch.softmax(logits, dim=-1)


def export_for_serving(wrapper, example):
    batch = torch.export.Dim("batch", min=1, max=MAX_BATCH)
    seq = torch.export.Dim("seq", min=2, max=MAX_LEN)
    dyn = {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}
    ids, attn = example
    with torch.no_grad():
        ep = torch.export.export(wrapper, (ids, attn), dynamic_shapes=dyn)
    return ep


def parity_check(wrapper, loaded, rng):
    worst = 0.0
    for b, s in SERVE_BUCKETS:
        ids = torch.randint(1, VOCAB, (b, s))
        attn = torch.ones(b, s, dtype=torch.long)
        for i in range(b):
            cut = rng.randint(max(2, s // 2), s)
            ids[i, cut:] = PAD_ID
            attn[i, cut:] = 0
        with torch.no_grad():
            ref = wrapper(ids, attn)
            got = loaded(ids, attn)
        diff = (ref - got).abs().max().item()
        worst = max(worst, diff)
        print(f"  bucket b={b:2d} s={s:3d}  max|diff| {diff:.2e}")
    return worst


def main():
    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    random.seed(SEED)
    t0 = time.time()
    print(f"torch {torch.__version__}")

    model = build_model()
    data = synthetic_tickets(400, rng)
    print("warm-up fine-tune")
    warmup_finetune(model, data)

    wrapper = ServingWrapper(model).eval()
    ids, attn, _ = collate(data[:4])
    print(f"export example shape {tuple(ids.shape)}")
    ep = export_for_serving(wrapper, (ids, attn))
    print("export ok")

    path = os.path.join(EXPORT_DIR, "intent_xlnet.pt2")
    torch.export.save(ep, path)
    loaded = torch.export.load(path).module()
    print(f"saved {path}")

    worst = parity_check(wrapper, loaded, rng)
    status = "PASS" if worst < 1e-5 else "FAIL"
    print(f"parity {status} (worst {worst:.2e})  total {time.time() - t0:.1f}s")
    if status != "PASS":
        raise SystemExit(1)


if __name__ == "__main__":
    main()
