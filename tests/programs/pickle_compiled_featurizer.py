"""A Dataset holding a torch.compile'd feature function, sent to a spawned process by pickle (as spawn DataLoader
workers do): pickle finds the plain function under the wrapper's copied name and refuses (blind A/B batch 39, a
keyword-spotting featurizer).
  --named   the compiled function gets a module-level name of its own (the fix)"""
import pickle
import sys

import torch


def log_feat(x):
    return torch.log1p(x.abs())


_compiled = torch.compile(log_feat, dynamic=False, backend="eager")
if "--named" in sys.argv:
    def fast_feat(x):
        return _compiled(x)
else:
    fast_feat = _compiled


class FeatureSet(torch.utils.data.Dataset):
    def __init__(self, n, featurizer):
        self.x, self.featurizer = torch.randn(n, 16), featurizer

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.featurizer(self.x[i])


ds = pickle.loads(pickle.dumps(FeatureSet(8, fast_feat)))
print(f"unpickled dataset of {len(ds)}; first item sum {ds[0].sum().item():.4f}")
