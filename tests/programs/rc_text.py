"""Recompile: a compiled predict(text) tokenizes its str argument inside the graph, so every new
request text is a new constant (blind A/B batch 9, a BERT ticket classifier)."""
import torch

VOCAB = {w: i for i, w in enumerate("refund login error charged twice update app".split())}
emb = torch.nn.Embedding(len(VOCAB) + 1, 8)


@torch.compile(backend="eager")
def predict(text):
    ids = torch.tensor([VOCAB.get(w, len(VOCAB)) for w in text.lower().split()])
    return emb(ids).mean(0).argmax()


for text in ("refund please", "login error"):
    print(text, int(predict(text)))
