"""Tokenization shared by training, export and serving (no model code here)."""
import re
import zlib

import torch

VOCAB_BUCKETS = 4096
MAX_TOKENS = 24
PAD_ID = 0

INTENTS = [
    "check_balance", "transfer_money", "card_lost", "open_account",
    "close_account", "loan_rates", "branch_hours", "dispute_charge",
]


def _hash(tok: str) -> int:
    return 1 + zlib.crc32(tok.encode()) % (VOCAB_BUCKETS - 1)


def tokenize(text: str):
    words = re.findall(r"[a-z0-9']+", text.lower())
    grams = words + [f"{a}_{b}" for a, b in zip(words, words[1:])]
    return [_hash(g) for g in grams][:MAX_TOKENS]


def encode_batch(texts):
    ids = torch.full((len(texts), MAX_TOKENS), PAD_ID, dtype=torch.long)
    for i, t in enumerate(texts):
        toks = tokenize(t)
        ids[i, : len(toks)] = torch.tensor(toks, dtype=torch.long)
    return ids
