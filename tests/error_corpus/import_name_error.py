# expect: import_error before_compile
import torch
from torch.nn import LinearLayer  # noqa: F401

print(torch.randn(2))
