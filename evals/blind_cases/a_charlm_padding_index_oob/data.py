"""Tiny character-level corpus + batching for the release-notes LM."""
import random

import torch
from torch.utils.data import Dataset

IGNORE_INDEX = -100

_WORDS = (
    "fix add remove update bump refactor support improve document deprecate "
    "compile kernel cache tensor model config loader tokenizer export runtime "
    "memory latency throughput batch shape stride dtype device graph guard"
).split()


def make_corpus(n_docs, seed):
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        n_lines = rng.randint(3, 9)
        lines = [" ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 8))) for _ in range(n_lines)]
        docs.append("\n".join("- " + ln for ln in lines) + "\n")
    return docs


class CharVocab:
    def __init__(self, texts):
        chars = sorted(set("".join(texts)))
        self.itos = ["<pad>", "<bos>", "<eos>"] + chars
        self.stoi = {c: i for i, c in enumerate(self.itos)}
        self.pad_id, self.bos_id, self.eos_id = 0, 1, 2

    def __len__(self):
        return len(self.itos)

    def encode(self, text):
        return [self.bos_id] + [self.stoi[c] for c in text] + [self.eos_id]


class ChunkedDocs(Dataset):
    """Concatenates the docs of each shard into one stream and cuts it into
    block_size+1 chunks; the tail chunk of a shard is shorter."""

    def __init__(self, docs, vocab, block_size, n_shards=4):
        self.samples = []
        for s in range(n_shards):
            ids = []
            for d in docs[s::n_shards]:
                ids.extend(vocab.encode(d))
            for i in range(0, len(ids) - 1, block_size):
                chunk = ids[i : i + block_size + 1]
                if len(chunk) >= 8:
                    self.samples.append(torch.tensor(chunk, dtype=torch.long))

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        return self.samples[i]


def collate(batch, block_size):
    """Right-pad to block_size+1; padded label positions are ignored by the loss."""
    out = torch.full((len(batch), block_size + 1), IGNORE_INDEX, dtype=torch.long)
    for i, seq in enumerate(batch):
        out[i, : len(seq)] = seq
    return out[:, :-1].contiguous(), out[:, 1:].contiguous()
