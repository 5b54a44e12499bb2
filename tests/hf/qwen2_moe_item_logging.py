"""Qwen2-MoE: a compiled training-step function with a custom loss (label smoothing + router aux
loss) that logs running statistics with .item() inside the step, as many training scripts do."""
import torch
import torch.nn.functional as F
from transformers import Qwen2MoeConfig, Qwen2MoeForCausalLM

torch.manual_seed(0)
config = Qwen2MoeConfig(vocab_size=128, hidden_size=32, intermediate_size=64, moe_intermediate_size=32,
                        shared_expert_intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
                        num_key_value_heads=1, num_experts=4, num_experts_per_tok=2,
                        max_position_embeddings=64, output_router_logits=True)
model = Qwen2MoeForCausalLM(config)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
history = []


@torch.compile(backend="aot_eager")
def train_step(input_ids):
    out = model(input_ids=input_ids)
    logits = out.logits[:, :-1].reshape(-1, config.vocab_size)
    loss = F.cross_entropy(logits, input_ids[:, 1:].reshape(-1), label_smoothing=0.1)
    loss = loss + 0.01 * out.aux_loss
    history.append(loss.item())                   # log the running loss
    loss.backward()
    return loss


for step in range(2):
    loss = train_step(torch.randint(0, config.vocab_size, (2, 16)))
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f} mean {sum(history) / len(history):.4f}")
