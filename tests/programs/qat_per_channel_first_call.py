"""Quantization-aware fine-tuning of a small keyword-spotting CNN with torch.ao (prepare_qat, the "x86"
qconfig), compiled with fullgraph=True for speed; torch.ao's observers are on Dynamo's skip list, so the
forward is wrapped with dont_skip_tracing. WARM=1 runs one eager forward before compiling."""
import os

import torch
import torch.ao.quantization as tq
import torch.nn as nn

torch.manual_seed(0)


class KeywordNet(nn.Module):
    def __init__(self, n_words=6):
        super().__init__()
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.classifier = nn.Linear(16, n_words)

    def forward(self, x):
        return self.dequant(self.classifier(self.features(self.quant(x))))


def prepare(model):
    model.train()
    tq.fuse_modules_qat(model.features, [["0", "1", "2"], ["3", "4", "5"]], inplace=True)
    model.qconfig = tq.get_default_qat_qconfig("x86")
    return tq.prepare_qat(model, inplace=True)


def main():
    x, y = torch.randn(64, 1, 20, 20), torch.randint(0, 6, (64,))
    model = prepare(KeywordNet())
    if os.environ.get("WARM"):
        with torch.no_grad():
            model(x[:8])
    model.forward = torch._dynamo.dont_skip_tracing(model.forward)
    compiled = torch.compile(model, fullgraph=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(3):
        loss = nn.functional.cross_entropy(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step} loss {loss.item():.4f}")
    print("qat fine-tune done")


if __name__ == "__main__":
    main()
