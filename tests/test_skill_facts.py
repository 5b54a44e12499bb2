"""Every fact a skill, command or reference states must hold for the installed torch: dotted torch
APIs and config names resolve, env vars exist in torch's source, TORCH_LOGS names are registered."""
import functools
import glob
import importlib
import os
import re

import pytest
from conftest import ROOT

DOCS = sorted(glob.glob(os.path.join(ROOT, "skills", "**", "*.md"), recursive=True) +
              glob.glob(os.path.join(ROOT, "commands", "*.md")))
# Names that are documented as absent/renamed on purpose (version notes), or are not torch APIs.
NOT_APIS = {
    "torch._dynamo.utils.CompileProfiler",   # mentioned as NOT existing
    "torch.export.export_for_training",      # removed in 2.11 (version note)
}
API_RE = re.compile(r"\btorch(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
ENV_RE = re.compile(r"\b(?:PYTORCH|TORCH|TORCHINDUCTOR|TORCHDYNAMO|AOT_INDUCTOR|AOTI|AOTINDUCTOR|DUMP_AOTI|INDUCTOR|TRITON)_[A-Z0-9_]*[A-Z0-9]\b")
LOGS_RE = re.compile(r"TORCH_LOGS=[\"']?([+\w,-]+)")


def doc_text(path):
    return open(path, encoding="utf-8").read()


@functools.lru_cache(maxsize=None)
def torch_source():
    import torch
    root = os.path.dirname(torch.__file__)
    chunks = []
    for pat in ("**/*.py", "include/torch/csrc/inductor/**/*.h"):
        for p in glob.glob(os.path.join(root, pat), recursive=True):
            try:
                chunks.append(open(p, encoding="utf-8", errors="ignore").read())
            except OSError:
                pass
    return "\n".join(chunks)


def resolve(dotted):
    parts = dotted.split(".")
    obj, i = None, len(parts)
    while i > 0:
        try:
            obj = importlib.import_module(".".join(parts[:i]))
            break
        except ImportError:
            i -= 1
    if obj is None:
        return False
    for name in parts[i:]:
        if not hasattr(obj, name):
            try:
                obj = importlib.import_module(f"{obj.__name__}.{name}")
                continue
            except (ImportError, AttributeError):
                return False
        obj = getattr(obj, name)
    return True


@pytest.mark.parametrize("path", DOCS, ids=lambda p: os.path.relpath(p, ROOT))
def test_torch_apis_and_configs_exist(path):
    missing = []
    for name in sorted(set(API_RE.findall(doc_text(path)))):
        name = name.rstrip(".")
        if name in NOT_APIS or name.endswith((".py", ".json", ".md")):
            continue
        if not resolve(name):
            missing.append(name)
    assert not missing, f"not in the installed torch: {missing}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: os.path.relpath(p, ROOT))
def test_env_vars_exist(path):
    src = torch_source()
    unknown = [v for v in sorted(set(ENV_RE.findall(doc_text(path)))) if v not in src]
    assert not unknown, f"env vars not found in torch's source: {unknown}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: os.path.relpath(p, ROOT))
def test_torch_logs_names_are_registered(path):
    from torch._logging._internal import log_registry
    known = set(log_registry.artifact_names) | set(log_registry.log_alias_to_log_qnames)
    bad = []
    for group in LOGS_RE.findall(doc_text(path)):
        for n in group.split(","):
            n = n.strip().lstrip("+-")
            if n and n not in known and not n.startswith("torch."):
                bad.append(n)
    assert not bad, f"unknown TORCH_LOGS names: {bad}"


def test_mode_and_options_do_not_combine():
    """config-knobs.md quotes torch's refusal of mode= with options= and a mode's options spelled out."""
    import torch
    text = open(os.path.join(ROOT, "skills", "trace-inductor", "references", "config-knobs.md")).read()
    with pytest.raises(RuntimeError) as e:
        torch.compile(lambda x: x, mode="max-autotune", options={"max_autotune_pointwise": True})
    assert f'"{e.value}"' in " ".join(text.split())
    assert f"`{torch._inductor.list_mode_options('max-autotune')}`" in text
