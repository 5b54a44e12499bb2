"""Near miss (review of batch 66): a unittest expects AssertionError from the model's input check
(assertRaises with AssertionError); compiled, the assert on tensor values is torch._assert_async and raises
RuntimeError: the class assert_raises_runtime_error, reached from assertRaises rather than an except line."""
import unittest

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 1)

    def forward(self, x):
        assert torch.isfinite(x).all(), "non-finite telemetry"
        return self.lin(x)


class TestScorer(unittest.TestCase):
    def test_rejects_nan(self):
        model = torch.compile(Scorer(), backend="eager")
        model(torch.randn(2, 6))
        bad = torch.randn(2, 6)
        bad[0, 0] = float("nan")
        with self.assertRaises(AssertionError):
            model(bad)


if __name__ == "__main__":
    unittest.main()
