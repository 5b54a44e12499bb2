"""Local stand-in for our k8s rollout: each pod is a fresh container (empty /tmp, same image, same .pt2)."""
import json
import os
import subprocess
import sys
import tempfile
import time

N_PODS = int(os.environ.get("N_PODS", "2"))


def start_pod(i):
    pod_tmp = tempfile.mkdtemp(prefix=f"pod{i}_tmp_")
    env = dict(os.environ, TMPDIR=pod_tmp, POD_NAME=f"ranker-{i}")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "serve_worker.py"], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        print(out.stderr[-3000:])
        raise SystemExit(out.returncode)
    line = [l for l in out.stdout.splitlines() if l.startswith("{")][-1]
    info = json.loads(line)
    info["process_wall_s"] = round(wall, 2)
    return info


def main():
    if not os.path.exists(os.environ.get("RANKER_PKG", "artifacts/ctr_ranker.pt2")):
        raise SystemExit("run export_ranker.py first")
    results = []
    for i in range(N_PODS):
        info = start_pod(i)
        print(json.dumps(info))
        results.append(info)
    loads = [r["aoti_load_package_s"] for r in results]
    print(f"rollout of {N_PODS} pods: aoti_load_package {loads} s, "
          f"time_to_ready {[r['time_to_ready_s'] for r in results]} s")


if __name__ == "__main__":
    main()
