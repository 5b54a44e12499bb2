"""WGAN-GP critic training: the gradient penalty differentiates the critic's input gradient
(create_graph=True), then backward of that: works eagerly, fails through the compiled critic."""
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(16, 64), nn.LeakyReLU(0.2), nn.Linear(64, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1))
gen = nn.Sequential(nn.Linear(8, 64), nn.ReLU(), nn.Linear(64, 16))
opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.0, 0.9))
ccritic = torch.compile(critic, backend="aot_eager")


def gradient_penalty(real, fake):
    eps = torch.rand(real.size(0), 1)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    score = ccritic(mix)
    (grad,) = torch.autograd.grad(score.sum(), mix, create_graph=True)
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


for step in range(3):
    real = torch.randn(32, 16) + 2.0
    with torch.no_grad():
        fake = gen(torch.randn(32, 8))
    loss = ccritic(fake).mean() - ccritic(real).mean() + 10.0 * gradient_penalty(real, fake)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step}: critic loss {loss.item():.4f}")
