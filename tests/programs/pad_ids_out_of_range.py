"""A small LM step whose collate pads the input ids with -100 as well as the labels: the compiled run fails in
Inductor's generated bounds check, the run without torch.compile with the embedding's IndexError (one failure)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, IGNORE = 12, -100
emb, head = torch.nn.Embedding(VOCAB, 16), torch.nn.Linear(16, VOCAB)


def collate(rows, length):
    batch = torch.full((len(rows), length + 1), IGNORE, dtype=torch.long)
    for i, r in enumerate(rows):
        batch[i, :len(r)] = r
    return batch[:, :-1], batch[:, 1:]


@torch.compile
def loss_of(ids, labels):
    return F.cross_entropy(head(emb(ids)).flatten(0, 1), labels.flatten(), ignore_index=IGNORE)


for step in range(3):
    rows = [torch.randint(0, VOCAB, (9,)) for _ in range(4)]
    if step == 2:
        rows[1] = rows[1][:5]          # the last chunk of a document is short
    ids, labels = collate(rows, 8)
    print(f"step {step} loss {loss_of(ids, labels).item():.4f}")
