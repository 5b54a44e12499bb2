import torch


class Sampler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.temperature = 0.9
        self.top_k = 1

    def forward(self, tokens):
        logits = tokens / self.temperature
        return logits.topk(self.top_k, -1).values


m = Sampler()
c = torch.compile(m, backend="eager")
for length, temperature, top_k in [(5, 0.9, 1), (5, 0.7, 1), (7, 0.7, 1), (7, 0.7, 2), (9, 0.5, 3), (6, 0.2, 2)]:
    m.temperature, m.top_k = temperature, top_k
    c(torch.randn(2, length))
