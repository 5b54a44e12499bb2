"""Release gate: the compiled ranker must reproduce eager scores on the golden batch.

Runs in CI before every model-server rollout (the server serves torch.compile'd models).
"""
import logging

import pytest
import torch

from ctr_model import CTRModel, make_golden_batch

log = logging.getLogger(__name__)

RTOL, ATOL = 1e-4, 1e-5


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    model = CTRModel().eval()
    dense, cats = make_golden_batch()
    compiled = torch.compile(model)
    return model, compiled, dense, cats


def test_bucket_ids_match(setup):
    model, _, dense, _ = setup
    eager_ids = model.bucketizer(dense)
    compiled_ids = torch.compile(model.bucketizer)(dense)
    mismatch = (eager_ids != compiled_ids).any(dim=1)
    log.info("rows with bucket mismatch: %d / %d", int(mismatch.sum()), mismatch.numel())
    assert torch.equal(eager_ids, compiled_ids), (
        f"{int(mismatch.sum())} rows differ; first: dense={dense[mismatch][:3].tolist()} "
        f"eager={eager_ids[mismatch][:3].tolist()} compiled={compiled_ids[mismatch][:3].tolist()}"
    )


@torch.no_grad()
def test_scores_match(setup):
    model, compiled, dense, cats = setup
    ref = torch.sigmoid(model(dense, cats))
    out = torch.sigmoid(compiled(dense, cats))
    torch.testing.assert_close(out, ref, rtol=RTOL, atol=ATOL)


@torch.no_grad()
def test_ranking_stable(setup):
    model, compiled, dense, cats = setup
    ref = model(dense, cats)
    out = compiled(dense, cats)
    top_ref = ref.topk(50).indices.sort().values
    top_out = out.topk(50).indices.sort().values
    assert torch.equal(top_ref, top_out)
