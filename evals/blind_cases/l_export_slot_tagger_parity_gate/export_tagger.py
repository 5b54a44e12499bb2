import os
import random
import sys
import time

import torch
import torch.nn as nn

VOCAB = 3000
MAX_LEN = 24
SLOTS = ["O", "B-city", "I-city", "B-date", "I-date", "B-time", "B-airline"]
INTENTS = ["book_flight", "flight_status", "cancel", "baggage"]
PAD_ID = 0


class SlotIntentModel(nn.Module):
    def __init__(self, d=96, heads=4, layers=3):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d, padding_idx=PAD_ID)
        self.pos = nn.Embedding(MAX_LEN, d)
        layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.slot_head = nn.Linear(d, len(SLOTS))
        self.intent_head = nn.Linear(d, len(INTENTS))

    def forward(self, input_ids, attention_mask):
        pad = attention_mask == 0
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        h = self.tok(input_ids) + self.pos(pos)[None]
        h = self.encoder(h, src_key_padding_mask=pad)
        slot_logits = self.slot_head(h)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        intent_logits = self.intent_head(pooled)
        return slot_logits, intent_logits


def tokenize_batch(utterances):
    ids = torch.full((len(utterances), MAX_LEN), PAD_ID, dtype=torch.long)
    mask = torch.zeros(len(utterances), MAX_LEN, dtype=torch.long)
    for i, toks in enumerate(utterances):
        toks = toks[:MAX_LEN]
        ids[i, :len(toks)] = torch.tensor(toks)
        mask[i, :len(toks)] = 1
    return ids, mask


def synthetic_requests(n, seed):
    g = random.Random(seed)
    return [[g.randint(1, VOCAB - 1) for _ in range(g.randint(3, MAX_LEN))] for _ in range(n)]


def train_briefly(model, steps=30):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    model.train()
    for step in range(steps):
        ids, mask = tokenize_batch(synthetic_requests(32, seed=step))
        slots = torch.randint(0, len(SLOTS), ids.shape, generator=g)
        intents = torch.randint(0, len(INTENTS), (ids.shape[0],), generator=g)
        s, it = model(ids, mask)
        loss = nn.functional.cross_entropy(s[mask.bool()], slots[mask.bool()]) + \
            nn.functional.cross_entropy(it, intents)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def parity_gate(ref_model, exported, batches, atol=1e-4, rtol=1e-4):
    worst = {"slot_logits": 0.0, "intent_logits": 0.0}
    ok = True
    for ids, mask in batches:
        with torch.no_grad():
            ref = ref_model(ids, mask)
            out = exported(ids, mask)
        for name, r, o in zip(worst, ref, out):
            diff = (r - o).abs().max().item()
            worst[name] = max(worst[name], diff)
            if not torch.allclose(r, o, atol=atol, rtol=rtol):
                ok = False
    return ok, worst


def main():
    torch.manual_seed(0)
    model = SlotIntentModel()
    train_briefly(model)

    example = tokenize_batch(synthetic_requests(8, seed=123))
    batch = torch.export.Dim("batch", min=1, max=256)
    t0 = time.time()
    ep = torch.export.export(
        model, example, dynamic_shapes={"input_ids": {0: batch}, "attention_mask": {0: batch}}
    )
    print(f"exported in {time.time() - t0:.1f}s, {len(ep.graph.nodes)} graph nodes")
    exported = ep.module()

    batches = [tokenize_batch(synthetic_requests(bs, seed=1000 + bs)) for bs in (1, 4, 16, 64)]
    ok, worst = parity_gate(model, exported, batches)
    print("parity:", "PASS" if ok else "FAIL", {k: f"{v:.3e}" for k, v in worst.items()})

    ids, mask = batches[1]
    with torch.no_grad():
        ref_int = model(ids, mask)[1].argmax(-1)
        exp_int = exported(ids, mask)[1].argmax(-1)
    print("intent preds eager   :", ref_int.tolist())
    print("intent preds exported:", exp_int.tolist())

    if not ok:
        print("refusing to publish artifact: exported program does not match the eager model")
        sys.exit(1)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "slot_intent.pt2")
    torch.export.save(ep, path)
    print("saved", path)


if __name__ == "__main__":
    main()
