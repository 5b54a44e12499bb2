"""A tiny random-init BERT exported with 1-D input_ids (the batch dimension forgotten): transformers' own Python
raises "not enough values to unpack", with or without torch.export. Not a library export path. (Review of 0.33.184.)"""
import torch
from transformers import BertConfig, BertModel

cfg = BertConfig(vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
model = BertModel(cfg).eval()
ids = torch.randint(0, 100, (8,))
ep = torch.export.export(model, (ids,))
print("exported")
