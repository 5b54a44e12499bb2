"""The startup hook (cdlib/startup/sitecustomize.py) applies settings inside an unmodified target."""
import os
import subprocess
import sys

from conftest import ROOT  # noqa: F401  (puts scripts/ on sys.path)
from cdlib.run import proc

FULLGRAPH = """import torch
@torch.compile(fullgraph=True)
def f(x):
    print("inside")
    return x @ torch.ones(3, 4)
print(f(torch.ones(2, 5)).shape)
"""
ITEM = """import torch, torch._dynamo
print("capture", torch._dynamo.config.capture_scalar_outputs)
"""
USER_SITE = "import os\nos.environ['USER_SITECUSTOMIZE_RAN'] = '1'\n"
CHECK_USER = "import os, torch\nprint('user hook', os.environ.get('USER_SITECUSTOMIZE_RAN'))\n"


def _run(tmp_path, code, steps, extra_pp=None):
    prog = tmp_path / "prog.py"
    prog.write_text(code)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(proc.startup_env(str(tmp_path), steps))
    if extra_pp:  # the user's own PYTHONPATH comes after ours
        env["PYTHONPATH"] += os.pathsep + extra_pp
    return subprocess.run([sys.executable, str(prog)], env=env, capture_output=True, text=True, timeout=300)


def test_force_eager_runs_fullgraph_function_eagerly(tmp_path):
    p = _run(tmp_path, FULLGRAPH, [{"stance": "force_eager"}])
    assert p.returncode == 1
    assert "inside" in p.stdout            # print ran: no graph break raised under fullgraph
    assert "mat1 and mat2 shapes cannot be multiplied" in p.stderr
    assert "found no compiled frames" not in p.stderr
    assert (tmp_path / "startup.applied").read_text().strip()


def test_config_is_set_and_user_sitecustomize_still_runs(tmp_path):
    site = tmp_path / "usersite"
    site.mkdir()
    (site / "sitecustomize.py").write_text(USER_SITE)
    # a setting of a config module's nested group (cpp.simdlen: bisect's check of vectorized C++) is set too
    nested = "import torch._inductor.config as ic\nprint('simdlen', ic.cpp.simdlen)\n"
    p = _run(tmp_path, ITEM + nested + CHECK_USER, [{"config": {"torch._dynamo.config.capture_scalar_outputs": True,
                                                                "torch._inductor.config.cpp.simdlen": 1}}],
             extra_pp=str(site))
    assert p.returncode == 0, p.stderr
    assert "capture True" in p.stdout and "simdlen 1" in p.stdout and "[compile-debug startup]" not in p.stderr
    assert "user hook 1" in p.stdout


def test_bad_setting_is_one_line_and_program_goes_on(tmp_path):
    p = _run(tmp_path, ITEM, [{"config": {"torch._dynamo.config.no_such_setting": 1}}])
    assert p.returncode == 0
    assert "[compile-debug startup]" in p.stderr and "no_such_setting" in p.stderr
    assert "Traceback" not in p.stderr


LATE_METHOD = """import logging, torch
logging.Logger.say_once = logging.Logger.warning      # what transformers does with warning_once
log = logging.getLogger("lib")
@torch.compile(backend="eager")
def f(x):
    log.say_once("inside")
    return x + 1
f(torch.ones(2))
print("ignored", logging.Logger.say_once in torch._dynamo.config.ignore_logging_functions)
"""


def test_a_name_the_program_creates_later_is_applied_at_the_first_compile(tmp_path):
    p = _run(tmp_path, LATE_METHOD, [{"config": {"torch._dynamo.config.ignore_logging_functions":
                                                 ["logging.Logger.say_once"]}}])
    assert p.returncode == 0, p.stderr
    assert "ignored True" in p.stdout and "[compile-debug startup]" not in p.stderr
    assert "say_once" in (tmp_path / "startup.applied.deferred").read_text()


def test_a_name_never_created_is_reported_once_at_exit(tmp_path):
    p = _run(tmp_path, ITEM, [{"config": {"torch._dynamo.config.ignore_logging_functions":
                                          ["logging.Logger.never_there"]}}])
    assert p.returncode == 0
    (line,) = [ln for ln in p.stderr.splitlines() if ln.startswith("[compile-debug startup]")]
    assert "never_there" in line and "not applied" in line
