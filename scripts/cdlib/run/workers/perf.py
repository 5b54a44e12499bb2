"""Worker for `perf <file.py:factory>`: time ONE mode (eager or a torch.compile mode) of the model in
this process, so peak memory per mode is this process's own. Writes JSON to --result.

Warm-up and synchronization: the first call (compile) is timed alone; then --warmup calls (cudagraph
trees record during these); then --repeat rounds of N calls each, N chosen so a round lasts about
--round-ms. CUDA is synchronized around every timed region, and only touched when the model's
tensors are on a CUDA device."""
import argparse
import json
import os
import resource
import statistics
import sys
import time
import traceback


def _tensors(obj, out):
    import torch
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors(o, out)
    elif hasattr(obj, "__dataclass_fields__"):
        for k in obj.__dataclass_fields__:
            _tensors(getattr(obj, k), out)
    return out


def _device(model, args, kwargs):
    import torch
    for t in _tensors(list(args) + list(kwargs.values()), []):
        return t.device
    if isinstance(model, torch.nn.Module):
        for p in model.parameters():
            return p.device
    return torch.device("cpu")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", required=True)
    ap.add_argument("--mode", required=True)
    ap.add_argument("--train", action="store_true")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--round-ms", type=float, default=100.0)
    ap.add_argument("--max-iters", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: leave as is)")
    ap.add_argument("--profile", action="store_true", help="profile a few steps: time inside compiled regions")
    ap.add_argument("--result", required=True)
    a = ap.parse_args(argv)
    res = {"mode": a.mode, "ok": False}
    try:
        _run(a, res)
        res["ok"] = True
    except BaseException as e:  # report, don't crash: the parent reads the JSON
        res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:500]
        res["traceback"] = traceback.format_exc()[-4000:]
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1, default=str)
    return 0


def _run(a, res):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
    from cdlib.run import target
    import torch

    if a.threads > 0:
        torch.set_num_threads(a.threads)
    t0 = time.perf_counter()
    loaded = target.load(a.spec)
    model, args, kwargs = loaded["model"], loaded["args"], loaded["kwargs"]
    dev = _device(model, args, kwargs)
    cuda = dev.type == "cuda"
    res["device"] = str(dev)
    res["torch_version"] = torch.__version__
    res["threads"] = torch.get_num_threads()
    res["load_s"] = round(time.perf_counter() - t0, 3)
    if cuda:
        res["gpu"] = torch.cuda.get_device_name(dev)

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    if a.train and isinstance(model, torch.nn.Module):
        model.train()
    elif isinstance(model, torch.nn.Module):
        model.eval()
    skips = []
    if cuda and a.mode in ("reduce-overhead", "max-autotune"):
        _capture_cudagraph_skips(skips)
    res["cudagraph_skip_messages"] = skips
    if a.mode == "eager":
        fn = model
    else:
        mode = None if a.mode == "default" else a.mode
        fn = torch.compile(model, mode=mode)

    params = [p for p in model.parameters()] if isinstance(model, torch.nn.Module) else []

    def step():
        if a.train:
            out = fn(*args, **kwargs)
            ts = [t for t in _tensors(out, []) if t.is_floating_point() and t.requires_grad]
            if not ts:
                raise RuntimeError("--train: the model's outputs have no tensor that requires grad")
            loss = sum(t.float().sum() for t in ts)
            loss.backward()
            for p in params:
                p.grad = None
            return loss
        with torch.no_grad():
            return fn(*args, **kwargs)

    if cuda:
        torch.cuda.reset_peak_memory_stats(dev)
    sync()
    t = time.perf_counter()
    step()
    sync()
    res["first_call_s"] = round(time.perf_counter() - t, 4)
    t = time.perf_counter()
    for _ in range(max(a.warmup, 0)):
        step()
    sync()
    # keep warming until two consecutive calls agree (late recompiles, cudagraph recording), max 20
    prev, extra = None, 0
    while extra < 20:
        t1 = time.perf_counter()
        step()
        sync()
        d = time.perf_counter() - t1
        extra += 1
        if prev is not None and d < 2.0 * prev and prev < 2.0 * d:
            break
        prev = d
    warm = time.perf_counter() - t
    res["warmup_s"] = round(warm, 4)
    res["warmup_calls"] = a.warmup + extra
    g0 = _graph_count()
    # calibrate: calls per round
    t = time.perf_counter()
    step()
    sync()
    one = max(time.perf_counter() - t, 1e-6)
    iters = int(min(max(a.round_ms / 1000.0 / one, 1), a.max_iters))
    rounds, cpu_rounds, counts = [], [], []
    budget = a.round_ms / 1000.0
    for _ in range(max(a.repeat, 1)):
        sync()
        n = 0
        c0 = time.process_time()
        t = time.perf_counter()
        while True:
            step()
            n += 1
            if n >= iters:
                sync()
                if time.perf_counter() - t >= budget * 0.5 or n >= a.max_iters:
                    break
            elif n % 8 == 0 and time.perf_counter() - t >= budget * 3:   # machine got slower: stop early
                sync()
                break
        el = time.perf_counter() - t
        rounds.append(el / n)
        cpu_rounds.append((time.process_time() - c0) / n)
        counts.append(n)
    res["calls_per_round"] = counts
    res["cpu_median_ms"] = round(statistics.median(cpu_rounds) * 1000, 4)
    res["compiled_during_timing"] = _graph_count() - g0
    res["rounds_ms"] = [round(x * 1000, 4) for x in rounds]
    res["median_ms"] = round(statistics.median(rounds) * 1000, 4)
    res["min_ms"] = round(min(rounds) * 1000, 4)
    if cuda:
        res["peak_cuda_mb"] = round(torch.cuda.max_memory_allocated(dev) / 2**20, 1)
    if a.mode != "eager":
        from torch._dynamo.utils import counters
        res["counters"] = {
            "unique_graphs": counters["stats"].get("unique_graphs", 0),
            "calls_captured": counters["stats"].get("calls_captured", 0),
            "graph_breaks": {k[:300]: v for k, v in counters["graph_break"].items()},
            "cudagraph_skips": counters["inductor"].get("cudagraph_skips", 0),
            "frames_total": counters["frames"].get("total", 0),
            "frames_ok": counters["frames"].get("ok", 0),
            "unimplemented": {k.splitlines()[0][:200]: v for k, v in counters["unimplemented"].items()},
            "frames_skipped_in_loop": sum(v for k, v in counters["unimplemented"].items() if "graph break in loop" in k or "for/while loop" in k),
        }
        if a.profile:
            res["profile"] = _profile(step, sync, min(iters, 20))


def _capture_cudagraph_skips(sink):
    """Record "skipping cudagraphs due to ..." messages (some are only logged at run time, never in
    the trace): enable the `cudagraphs` log artifact and keep its skip records."""
    import logging
    import torch

    class H(logging.Handler):
        def emit(self, record):
            try:
                msg = record.getMessage()
            except Exception:
                return
            if ("skipping cudagraphs" in msg or "disabling cudagraphs" in msg) and msg[:500] not in sink:
                sink.append(msg[:500])

    torch._logging.set_logs(cudagraphs=True)
    # torch's registered loggers don't propagate to "torch": attach to the artifact loggers themselves
    h = H()
    for name in ("torch._inductor.cudagraph_utils.__cudagraphs", "torch._inductor.scheduler.__cudagraphs",
                 "torch._inductor.compile_fx.__cudagraphs", "torch._inductor.cudagraph_trees.__cudagraphs"):
        logging.getLogger(name).addHandler(h)
    try:
        import torch._inductor.cudagraph_utils as cu
        if h not in cu.cudagraphs_log.handlers:
            cu.cudagraphs_log.addHandler(h)
    except Exception:
        pass


def _graph_count():
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"].get("unique_graphs", 0))
    except Exception:
        return 0


def _profile(step, sync, n):
    """Share of step time spent inside compiled regions ("Torch-Compiled Region: x/y" events)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        sync()
        t = time.perf_counter()
        for _ in range(max(n, 1)):
            step()
        sync()
        total = time.perf_counter() - t
    regions = {}
    # forward graphs run under "Torch-Compiled Region: <id>"; compiled backward graphs run from the
    # autograd engine under "CompiledFunctionBackward" (what torch/_inductor/profiler.py matches too)
    events = [e for e in prof.events() if "Torch-Compiled Region" in e.name or e.name == "CompiledFunctionBackward"]
    # only top-level regions: skip ones nested in another region
    events.sort(key=lambda e: e.time_range.start)
    end = -1
    inside = 0.0
    for e in events:
        s, f = e.time_range.start, e.time_range.end
        name = e.name.split(":", 1)[-1].strip() if ":" in e.name else "backward"
        regions.setdefault(name, [0, 0.0])
        regions[name][0] += 1
        regions[name][1] += (f - s) / 1e6
        if s >= end:
            inside += (f - s) / 1e6
            end = f
    return {"steps": n, "total_s": round(total, 6), "inside_compiled_s": round(inside, 6),
            "outside_share": round(max(0.0, 1 - inside / total), 4) if total > 0 else None,
            "regions": {k: {"calls": v[0], "s": round(v[1], 6)} for k, v in sorted(regions.items())}}


if __name__ == "__main__":
    sys.exit(main())
