"""Toy instruction data + the two collators used by the SFT job (padded and padding-free)."""
import torch

PAD, BOS, EOS, SEP = 0, 1, 2, 3
TASKS = {"reverse": 4, "sort": 5, "copy": 6}
FIRST_WORD = 16


def make_example(g, vocab_size, min_len=8, max_len=60):
    task = list(TASKS)[int(torch.randint(0, len(TASKS), (1,), generator=g))]
    n = int(torch.randint(min_len, max_len + 1, (1,), generator=g))
    words = torch.randint(FIRST_WORD, vocab_size, (n,), generator=g)
    if task == "reverse":
        answer = words.flip(0)
    elif task == "sort":
        answer = words.sort().values
    else:
        answer = words.clone()
    prompt = torch.cat([torch.tensor([BOS, TASKS[task]]), words, torch.tensor([SEP])])
    response = torch.cat([answer, torch.tensor([EOS])])
    input_ids = torch.cat([prompt, response])
    labels = torch.cat([torch.full_like(prompt, -100), response])
    return {"input_ids": input_ids, "labels": labels}


def make_dataset(n, vocab_size, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [make_example(g, vocab_size) for _ in range(n)]


def collate_padded(examples):
    """Right-padded batch (what the job used before packing)."""
    L = max(len(e["input_ids"]) for e in examples)
    B = len(examples)
    input_ids = torch.full((B, L), PAD)
    labels = torch.full((B, L), -100)
    attention_mask = torch.zeros((B, L), dtype=torch.long)
    for i, e in enumerate(examples):
        n = len(e["input_ids"])
        input_ids[i, :n] = e["input_ids"]
        labels[i, :n] = e["labels"]
        attention_mask[i, :n] = 1
    return {"input_ids": input_ids, "labels": labels, "attention_mask": attention_mask}


def collate_packed(examples):
    """Padding-free batch: all examples concatenated in one row, positions restart per example.

    Same layout as transformers' DataCollatorWithFlattening(return_position_ids=True):
    the first label of every example is -100 so no token is predicted across a boundary.
    """
    ids, labels, pos, seq = [], [], [], []
    for i, e in enumerate(examples):
        n = len(e["input_ids"])
        ids.append(e["input_ids"])
        lab = e["labels"].clone()
        lab[0] = -100
        labels.append(lab)
        pos.append(torch.arange(n))
        seq.append(torch.full((n,), i))
    return {
        "input_ids": torch.cat(ids)[None],
        "labels": torch.cat(labels)[None],
        "position_ids": torch.cat(pos)[None],
        "seq_idx": torch.cat(seq)[None],  # bookkeeping only, not passed to the model
    }
