"""A support-ticket router (embedding + nn.LSTM over pack_padded_sequence) is exported for serving with a dynamic
batch: torch.export fails in nn.LSTM with `zeros(): argument 'size' failed to unpack the object at pos 2 with error
"type must be tuple of ints,but got FakeTensor"` (batch_sizes[0] of the PackedSequence comes from the values of
lengths; blind A/B batch 48). FIXED=1 exports the padded path instead: the LSTM runs on the batch padded to MAX_LEN
and each ticket's last state is read at lengths - 1; it matches the packed model."""
import os

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence

MAX_LEN = 12


class Router(nn.Module):
    def __init__(self, vocab=50, dim=16, hidden=24, n_queues=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.lstm = nn.LSTM(dim, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_queues)

    def forward(self, ids, lengths):
        x = self.emb(ids)
        if os.environ.get("FIXED"):
            x = nn.functional.pad(x, (0, 0, 0, MAX_LEN - x.shape[1]))
            out, _ = self.lstm(x)
            last = out[torch.arange(out.shape[0]), lengths - 1]
        else:
            packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
            _, (h_n, _) = self.lstm(packed)
            last = h_n[-1]
        return self.head(last)


def batch(n, seed):
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, MAX_LEN + 1, (n,), generator=g)
    ids = torch.zeros(n, MAX_LEN, dtype=torch.long)
    for i, ln in enumerate(lengths.tolist()):
        ids[i, :ln] = torch.randint(1, 50, (ln,), generator=g)
    return ids, lengths


def main():
    torch.manual_seed(0)
    model = Router().eval()
    ids, lengths = batch(6, 0)
    b = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(model, (ids, lengths), dynamic_shapes={"ids": {0: b}, "lengths": {0: b}})
    ids2, lengths2 = batch(9, 1)
    os.environ.pop("FIXED", None)
    ref = model(ids2, lengths2)
    print(f"exported; max|diff| vs the packed model on a batch of 9: {(ep.module()(ids2, lengths2) - ref).abs().max():.2e}")


if __name__ == "__main__":
    main()
