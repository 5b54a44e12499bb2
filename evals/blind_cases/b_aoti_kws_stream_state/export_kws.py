"""Export the streaming KWS model with AOTInductor and run the release parity gate.

    python export_kws.py [--out kws_stream.pt2] [--sessions 4]

The gate replays recorded sessions through the eager model and through the
packaged model, chunk by chunk, and fails the release if they disagree.
"""
import argparse
import os
import sys
import time

import torch

from streaming_kws import CHUNK, KEYWORDS, N_MELS, StreamingKWS

TOL = 1e-4


def load_model(seed: int = 1234) -> StreamingKWS:
    # stands in for torch.load(<checkpoint>): deterministic weights
    torch.manual_seed(seed)
    model = StreamingKWS()
    for p in model.parameters():
        p.data.mul_(1.5)
    return model.eval()


def fake_session(seed: int, n_chunks: int) -> list[torch.Tensor]:
    """Replays a recorded utterance the way the mic front-end delivers it:
    one freshly computed (1, N_MELS, CHUNK) log-mel block at a time."""
    g = torch.Generator().manual_seed(seed)
    channel_gain = torch.randn(1, N_MELS, 1, generator=g) * 2.0 + 4.0
    chunks = []
    for _ in range(n_chunks):
        chunks.append(channel_gain + 0.7 * torch.randn(1, N_MELS, CHUNK, generator=g))
    return chunks


def export_package(model: StreamingKWS, out: str) -> str:
    model.reset_state()
    example = torch.randn(1, N_MELS, CHUNK)
    with torch.no_grad():
        ep = torch.export.export(model, (example,))
    # export ran forward once on the example, bring the stream back to t=0
    model.reset_state()
    t0 = time.time()
    path = torch._inductor.aoti_compile_and_package(ep, package_path=out)
    print(f"packaged {path} in {time.time() - t0:.1f}s")
    return path


def parity_gate(model: StreamingKWS, runner, n_sessions: int) -> bool:
    ok = True
    for s in range(n_sessions):
        chunks = fake_session(seed=100 + s, n_chunks=8)
        model.reset_state()
        worst = 0.0
        ref_kw, pkg_kw = [], []
        with torch.no_grad():
            for c in chunks:
                ref = model(c)
                out = runner(c)
                worst = max(worst, (ref - out).abs().max().item())
                ref_kw.append(KEYWORDS[ref.mean(1).argmax(-1).item()])
                pkg_kw.append(KEYWORDS[out.mean(1).argmax(-1).item()])
        status = "ok" if worst <= TOL else "MISMATCH"
        ok &= worst <= TOL
        print(f"session {s}: max|eager-aoti| = {worst:.3e}  [{status}]")
        if worst > TOL:
            print(f"   eager : {' '.join(ref_kw)}")
            print(f"   aoti  : {' '.join(pkg_kw)}")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="kws_stream.pt2")
    ap.add_argument("--sessions", type=int, default=4)
    args = ap.parse_args()

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    model = load_model()
    path = export_package(model, args.out)
    runner = torch._inductor.aoti_load_package(path)

    if parity_gate(model, runner, args.sessions):
        print("PARITY GATE PASSED")
        return 0
    print("PARITY GATE FAILED: packaged model disagrees with eager")
    return 1


if __name__ == "__main__":
    sys.exit(main())
