"""Fine-tune a compiled classifier; for the last steps attach a forward hook on the penultimate layer
to collect the embeddings of the training batches (for a prototype classifier afterwards). The model
had no hooks when it was compiled, so the compiled graph never calls the hook."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
cmodel = torch.compile(model, backend="aot_eager")
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
embeddings, handle = [], None

for step in range(8):
    if step == 5:   # the last 3 steps: keep the embeddings of every batch
        handle = model[3].register_forward_hook(lambda mod, inp, out: embeddings.append(out.detach()))
    x, y = torch.randn(64, 20), torch.randint(0, 4, (64,))
    loss = nn.functional.cross_entropy(cmodel(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()

handle.remove()
assert len(embeddings) == 3, f"embedding hook ran {len(embeddings)} times in the last 3 steps"
print("collected", tuple(torch.cat(embeddings).shape))
