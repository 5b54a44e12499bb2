"""Synthetic support-ticket intents + a tiny word-level tokenizer (no downloads in CI)."""
import random

import torch

INTENTS = {
    "refund": ["refund", "money", "back", "charged", "twice", "return", "reimburse"],
    "shipping": ["package", "delivery", "tracking", "late", "courier", "shipped", "arrive"],
    "account": ["password", "login", "locked", "email", "reset", "account", "username"],
    "billing": ["invoice", "card", "payment", "declined", "billing", "receipt", "vat"],
    "cancel": ["cancel", "subscription", "stop", "plan", "terminate", "renewal", "end"],
    "technical": ["crash", "error", "bug", "app", "loading", "screen", "update"],
}
FILLER = ("i my the a to and it is was please help hi hello order since yesterday today "
          "can you why not still again this that for with on in of me we our").split()
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


class WordTokenizer:
    def __init__(self):
        words = sorted({w for ws in INTENTS.values() for w in ws} | set(FILLER))
        self.vocab = {w: i for i, w in enumerate(SPECIALS + words)}
        self.pad_token_id = self.vocab["[PAD]"]

    def __len__(self):
        return len(self.vocab)

    def encode(self, text, max_length=128):
        ids = [self.vocab["[CLS]"]] + [self.vocab.get(w, 1) for w in text.split()] + [self.vocab["[SEP]"]]
        return ids[:max_length]


def make_tickets(n, seed):
    rng = random.Random(seed)
    labels = list(INTENTS)
    out = []
    for _ in range(n):
        y = rng.randrange(len(labels))
        n_words = min(110, 3 + int(rng.expovariate(1 / 14)))
        words = [rng.choice(FILLER) for _ in range(n_words)]
        for _ in range(max(1, n_words // 10)):
            words.insert(rng.randrange(len(words) + 1), rng.choice(INTENTS[labels[y]]))
        out.append((" ".join(words), y))
    return out


class PadCollator:
    """Pads every batch to its longest ticket (what DataCollatorWithPadding does by default)."""

    def __init__(self, tokenizer):
        self.tok = tokenizer

    def __call__(self, examples):
        enc = [self.tok.encode(t) for t, _ in examples]
        longest = max(len(e) for e in enc)
        ids = torch.full((len(enc), longest), self.tok.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(enc), longest), dtype=torch.long)
        for i, e in enumerate(enc):
            ids[i, : len(e)] = torch.tensor(e)
            mask[i, : len(e)] = 1
        labels = torch.tensor([y for _, y in examples])
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}
