"""A next-event model over log sessions: nn.TransformerEncoder with a bool causal mask and a bool padding mask,
compiled with fullgraph=True. Without is_causal, the encoder compares the mask with a generated causal mask
(_detect_is_causal_mask) and branches on the result: "Could not guard on data-dependent expression" in
multi_head_attention_forward (blind A/B batch 48). FIXED=1 passes is_causal=True: one graph, eager's loss."""
import os

import torch
import torch.nn as nn


class NextEvent(nn.Module):
    def __init__(self, vocab=40, dim=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        layer = nn.TransformerEncoderLayer(dim, 4, 64, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids, pad):
        T = ids.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=ids.device).triu(1)
        kw = {"is_causal": True} if os.environ.get("FIXED") else {}
        return self.head(self.encoder(self.emb(ids), mask=causal, src_key_padding_mask=pad, **kw))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = NextEvent()
    ids = torch.randint(0, 40, (4, 12))
    pad = torch.zeros(4, 12, dtype=torch.bool)
    pad[1, 9:] = True
    step = torch.compile(model, fullgraph=True, backend="eager")
    loss = nn.functional.cross_entropy(step(ids, pad)[:, :-1].reshape(-1, 40), ids[:, 1:].reshape(-1))
    loss.backward()
    print(f"loss {loss.item():.4f}")
