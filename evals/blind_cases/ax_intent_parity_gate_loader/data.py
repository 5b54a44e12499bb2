"""Synthetic intent dataset + loader settings shared by train.py and the CI gate."""
import torch
from torch.utils.data import Dataset, DataLoader

VOCAB = 2000
SEQ_LEN = 32
N_INTENTS = 12

LOADER_KW = dict(batch_size=64, shuffle=True, num_workers=0, drop_last=False)


class IntentDataset(Dataset):
    """Token-id sequences with a planted keyword per intent (deterministic per split)."""

    def __init__(self, n, split_seed):
        g = torch.Generator().manual_seed(split_seed)
        self.labels = torch.randint(0, N_INTENTS, (n,), generator=g)
        self.ids = torch.randint(N_INTENTS + 1, VOCAB, (n, SEQ_LEN), generator=g)
        pos = torch.randint(0, SEQ_LEN, (n,), generator=g)
        self.ids[torch.arange(n), pos] = self.labels + 1
        lengths = torch.randint(SEQ_LEN // 2, SEQ_LEN + 1, (n,), generator=g)
        self.mask = torch.arange(SEQ_LEN)[None, :] < lengths[:, None]
        self.ids = self.ids.masked_fill(~self.mask, 0)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": self.mask[i], "label": self.labels[i]}


def make_loader(split, n=None):
    sizes = {"train": 4096, "val": 640}
    seeds = {"train": 1, "val": 2}
    ds = IntentDataset(n or sizes[split], seeds[split])
    return DataLoader(ds, **LOADER_KW)
