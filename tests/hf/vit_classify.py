"""ViT image classification with Inductor: a fine-tuning step then evaluation."""
import torch
from transformers import ViTConfig, ViTForImageClassification

torch.manual_seed(0)
config = ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
                   num_attention_heads=2, intermediate_size=64, num_labels=10)
model = ViTForImageClassification(config)
model = torch.compile(model)                      # default backend: Inductor
opt = torch.optim.SGD(model.parameters(), lr=0.01)

pixels = torch.randn(4, 3, 32, 32)
labels = torch.randint(0, 10, (4,))
model.train()
for step in range(2):
    loss = model(pixel_values=pixels, labels=labels).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}")
