# expect: index_dtype fails_eager_too
import torch

emb = torch.compile(torch.nn.Embedding(10, 4))
print(emb(torch.tensor([[1.0, 2.0]])))
