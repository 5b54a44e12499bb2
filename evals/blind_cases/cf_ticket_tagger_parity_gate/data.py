import torch

from model import TASKS


def synthetic_tickets(n, vocab_size=4000, min_len=12, max_len=96, seed=0):
    """Token ids padded with 0, plus one label per task (labels depend on a few trigger tokens)."""
    g = torch.Generator().manual_seed(seed)
    lens = torch.randint(min_len, max_len + 1, (n,), generator=g)
    ids = torch.zeros(n, max_len, dtype=torch.long)
    for i, L in enumerate(lens.tolist()):
        ids[i, :L] = torch.randint(1, vocab_size, (L,), generator=g)
    labels = {}
    for k, (name, n_labels) in enumerate(TASKS.items()):
        trig = (ids[:, : min_len] % (7 + k)).sum(1)
        labels[name] = trig % n_labels
    return ids, labels


def batches(ids, labels, bs):
    for s in range(0, ids.shape[0], bs):
        yield ids[s:s + bs], {k: v[s:s + bs] for k, v in labels.items()}
