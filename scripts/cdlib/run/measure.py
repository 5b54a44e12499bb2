"""What a measured run of the program needs besides the run itself: the files its private cache dir
gained, and how busy the machine was (single-run timings on a busy machine are noisy)."""
import os


def cache_files(cache_dir):
    """{subdir: file count} of a private cache dir (fxgraph, aotautograd, triton, ...)."""
    out = {}
    if not os.path.isdir(cache_dir):
        return out
    for sub in sorted(os.listdir(cache_dir)):
        p = os.path.join(cache_dir, sub)
        if os.path.isdir(p) and sub != "locks":
            n = sum(len(fs) for _, _, fs in os.walk(p))
            name = "kernels" if len(sub) == 2 else sub   # 2-letter hash dirs: generated code, .so files
            if n:
                out[name] = out.get(name, 0) + n
    return out


def load():
    """1-minute load average (0 where the OS has none): a busy machine makes single-run timings noisy."""
    try:
        return round(os.getloadavg()[0], 1)
    except (AttributeError, OSError):
        return 0.0
