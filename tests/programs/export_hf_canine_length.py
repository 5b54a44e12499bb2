"""Export a character-level text classifier (a tiny random-init CANINE from transformers) for a serving
runtime, with the batch and the message length both dynamic, then check the exported program against
eager at two other lengths. BUCKETS=1 pads messages to 64 or 128 characters and exports one program per
length, only the batch dynamic."""
import os

import torch
import torch.nn as nn
from torch.export import Dim
from transformers import CanineConfig, CanineModel

torch.manual_seed(0)


class MessageRouter(nn.Module):
    def __init__(self, n_queues=3):
        super().__init__()
        cfg = CanineConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                           downsampling_rate=4, num_hash_functions=2, num_hash_buckets=512, local_transformer_stride=16)
        self.encoder = CanineModel(cfg)
        self.head = nn.Linear(cfg.hidden_size, n_queues)

    def forward(self, input_ids, attention_mask):
        pooled = self.encoder(input_ids=input_ids, attention_mask=attention_mask).pooler_output
        return self.head(pooled)


def batch(n, length):
    ids = torch.randint(32, 127, (n, length))
    return ids, torch.ones(n, length, dtype=torch.long)


def pad_to(args, length):
    ids, mask = args
    extra = length - ids.shape[1]
    return torch.nn.functional.pad(ids, (0, extra)), torch.nn.functional.pad(mask, (0, extra))


def main():
    model = MessageRouter().eval()
    if os.environ.get("BUCKETS"):
        b = Dim("batch", max=64)
        programs = {n: torch.export.export(model, pad_to(batch(2, 38), n),
                                           dynamic_shapes={"input_ids": {0: b}, "attention_mask": {0: b}})
                    for n in (64, 128)}
        for n, length in ((1, 15), (4, 70)):
            args = pad_to(batch(n, length), 64 if length <= 64 else 128)
            diff = (programs[args[0].shape[1]].module()(*args) - model(*args)).abs().max().item()
            print(f"batch {n} length {length}: max|exported - eager| = {diff:.2e}")
        return
    b, chars = Dim("batch", max=64), Dim("chars", min=8, max=512)
    shapes = {"input_ids": {0: b, 1: chars}, "attention_mask": {0: b, 1: chars}}
    ep = torch.export.export(model, batch(2, 38), dynamic_shapes=shapes)
    for n, length in ((1, 15), (4, 70)):
        args = batch(n, length)
        diff = (ep.module()(*args) - model(*args)).abs().max().item()
        print(f"batch {n} length {length}: max|exported - eager| = {diff:.2e}")


if __name__ == "__main__":
    main()
