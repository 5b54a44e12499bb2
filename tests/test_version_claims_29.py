"""Version claims in skills ("in 2.14, not in 2.9") checked against the installed torch and, when
COMPILE_DEBUG_TORCH29_PYTHON names a torch 2.9 python (.ci/run sets it for its second pass; build it
with .ci/torch29), against torch 2.9 too. Claims about versions in between rest on the recorded
traces in tests/fixtures/torch-2.11 (test_parser.py)."""
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, TORCH29_PYTHON

PROBE = r'''
import importlib, inspect, json, torch
def has(d):
    parts = d.split(".")
    for i in range(len(parts), 0, -1):
        try:
            o = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        for p in parts[i:]:
            if not hasattr(o, p):
                try:
                    o = importlib.import_module(o.__name__ + "." + p)
                    continue
                except Exception:
                    return False
            o = getattr(o, p)
        return True
    return False
import torch._dynamo.exc as E
out = {n: has(n) for n in NAMES}
out["torch.compile(recompile_limit=)"] = "recompile_limit" in inspect.signature(torch.compile).parameters
out["Unsupported(gb_type=)"] = "gb_type" in inspect.signature(E.Unsupported.__init__).parameters
print(json.dumps(out))
'''
# claim -> (in 2.9, in 2.14), with the file whose text states it
CLAIMS = {
    "torch._dynamo.nonstrict_trace": ((True, True), "skills/overview/references/logging.md"),
    "torch.compiler.nonstrict_trace": ((False, True), "skills/overview/references/logging.md"),
    "torch.compile(recompile_limit=)": ((False, True), "skills/overview/references/logging.md"),
    "Unsupported(gb_type=)": ((False, True), "skills/overview/references/logging.md"),
    "torch.export.export_for_training": ((True, False), "skills/export/references/failure-classes.md"),
    "torch._export.config": ((False, True), "skills/export/references/failure-classes.md"),
    "torch.export.Dim.AUTO": ((True, True), "skills/export/references/failure-classes.md"),
    "torch.export.draft_export": ((True, True), "skills/export/references/failure-classes.md"),
}
PHRASES = {
    "skills/overview/references/logging.md": ["`torch.compiler.nonstrict_trace` in 2.14, not in 2.9",
                                              "per call in 2.14, not in 2.9", "exists in 2.11 and 2.14, not in 2.9"],
    "skills/export/references/failure-classes.md": ["exists in 2.9 and is gone in 2.14",
                                                    "`torch._export.config` exists in 2.14, not in 2.9"],
}


def probe(python):
    code = f"NAMES = {json.dumps([n for n in CLAIMS if not n.endswith('=)')])}\n" + PROBE
    p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_claims_are_written_as_checked():
    for rel, phrases in PHRASES.items():
        text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
        for ph in phrases:
            assert ph in text, (rel, ph)


def test_claims_hold_on_torch_214():
    got = probe(sys.executable)
    import torch
    if not torch.__version__.startswith("2.14"):
        pytest.skip(f"claims are stated for 2.14; installed {torch.__version__}")
    bad = {n: got[n] for n, ((_, v14), _) in CLAIMS.items() if got[n] != v14}
    assert not bad, bad


@pytest.mark.skipif(not TORCH29_PYTHON, reason="no torch 2.9 python: .ci/torch29 builds one; "
                    "set COMPILE_DEBUG_TORCH29_PYTHON to its bin/python")
def test_claims_hold_on_torch_29():
    got = probe(TORCH29_PYTHON)
    bad = {n: got[n] for n, ((v29, _), _) in CLAIMS.items() if got[n] != v29}
    assert not bad, bad
