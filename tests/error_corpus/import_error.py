# expect: import_error before_compile
import torch
import my_missing_model_zoo  # noqa: F401

print(torch.compile(torch.nn.Linear(2, 2))(torch.randn(1, 2)))
