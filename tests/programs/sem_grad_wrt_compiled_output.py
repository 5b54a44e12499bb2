"""Grad-CAM style: the gradient of a class score with respect to a feature map that the same compiled
forward returns beside the logits. Compiled, the forward is one autograd node: the logits are not a
function of the returned feature map (tests/test_semantics.py, class grad_wrt_compiled_output)."""
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU())
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        feats = self.stem(x)
        logits = self.fc(feats.mean((2, 3)))
        return logits, feats


torch.manual_seed(0)
model = torch.compile(Net().eval())
x = torch.randn(2, 3, 16, 16)
logits, feats = model(x)
score = logits[:, 0].sum()
(grads,) = torch.autograd.grad(score, feats)
cam = (grads.mean((2, 3), keepdim=True) * feats).sum(1).relu()
print(f"cam mean {cam.mean().item():.4f}")
