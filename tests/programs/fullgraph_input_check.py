"""A classifier compiled with fullgraph=True whose forward validates its inputs the eager way: it reads
a count out of the attention mask and branches on it. Under fullgraph=True that data-dependent branch
is an error ("Could not guard on data-dependent expression"), raised by torch.compile, not torch.export;
the fix is to run the check before the compiled call (blind A/B batch 8's intent classifier)."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, vocab=100, dim=16, classes=3):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, classes)

    def check_inputs(self, mask):
        n_real = int(mask.sum())
        if n_real < 2 * mask.size(0):
            raise ValueError(f"batch has only {n_real} real tokens")

    def forward(self, ids, mask):
        self.check_inputs(mask)
        h = (self.emb(ids) * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True)
        return self.head(h)


def main():
    torch.manual_seed(0)
    model = torch.compile(Classifier(), fullgraph=True)
    ids = torch.randint(0, 100, (4, 8))
    mask = torch.ones(4, 8)
    print("logits", model(ids, mask).shape)


if __name__ == "__main__":
    main()
