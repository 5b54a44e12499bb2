"""Worker programs that run in a subprocess and may import torch: the parent CLI process never
does. Start one with cdlib.run.proc.run_worker("name", [...]); it runs `python -m cdlib.run.workers.name`.
A worker writes its result as JSON to the path given by --result and exits 0, even when the
thing it tried failed (the failure is data); a non-zero exit means the worker itself broke."""
