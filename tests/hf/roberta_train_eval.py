"""RoBERTa classifier: train for an epoch, evaluate, train again (model.train() / model.eval()
switches on a compiled model, the usual fine-tuning loop)."""
import torch
from transformers import RobertaConfig, RobertaForSequenceClassification

torch.manual_seed(0)
config = RobertaConfig(vocab_size=128, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=64, max_position_embeddings=64, num_labels=3, pad_token_id=1)
model = RobertaForSequenceClassification(config)
cmodel = torch.compile(model, backend="aot_eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)


def batch():
    return torch.randint(3, config.vocab_size, (4, 16)), torch.randint(0, 3, (4,))


for epoch in range(2):
    model.train()
    for _ in range(2):
        ids, y = batch()
        loss = cmodel(input_ids=ids, labels=y).loss
        loss.backward()
        opt.step()
        opt.zero_grad()
    model.eval()
    with torch.no_grad():
        ids, y = batch()
        acc = (cmodel(input_ids=ids).logits.argmax(-1) == y).float().mean()
    print(f"epoch {epoch} loss {loss.item():.4f} acc {acc.item():.2f}")
