"""Synthetic intent data: the label is decided by which trigger token occurs in the utterance."""
import torch

VOCAB = 1000
NUM_LABELS = 4
TRIGGERS = torch.tensor([11, 22, 33, 44])   # one trigger token per intent
SEQ = 32


def make_batch(bsz, g):
    ids = torch.randint(100, VOCAB, (bsz, SEQ), generator=g)
    labels = torch.randint(0, NUM_LABELS, (bsz,), generator=g)
    pos = torch.randint(1, SEQ, (bsz,), generator=g)
    ids[torch.arange(bsz), pos] = TRIGGERS[labels]
    ids[:, 0] = 101                                   # [CLS]
    mask = torch.ones_like(ids)
    return ids, mask, labels
