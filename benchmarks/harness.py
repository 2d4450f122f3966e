"""Runs the workloads against the peers and collects the results."""
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from . import peers
from .measure import measure
from .workloads import WORKLOADS, finite_difference_check

REPO = Path(__file__).resolve().parent.parent
PEER_VENV = REPO / ".venv-bench"
PAIR_TIMEOUT_S = 900


def venv_python(venv=PEER_VENV):
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    return python if python.exists() else None


def install_peers(names, venv=PEER_VENV, log=print):
    """Create ``venv`` (seeing this interpreter's packages, so numba and NumPy
    are the ones the project uses) and pip-install the peers into it."""
    if venv_python(venv) is None:
        log(f"creating {venv}")
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       check=True)
    python = str(venv_python(venv))
    requirements = ["matplotlib", "psutil"]
    for name in names:
        requirement = getattr(peers.load(name), "REQUIRES", None)
        if requirement:
            requirements.append(requirement)
    for requirement in requirements:  # one at a time: a failure skips one peer only
        log(f"pip install {requirement}")
        done = subprocess.run([python, "-m", "pip", "install", "-q", requirement])
        if done.returncode:
            log(f"  failed to install {requirement}; that peer will be reported missing")
    return Path(python)


def reference_gradient(workload, quick):
    """The hand-written gradient and its finite-difference check."""
    args = workload.make_args(quick)
    grads = workload.hand_grad_jit(*args)
    problems = finite_difference_check(workload, args, grads)
    return grads, problems


def _save_reference(grads, wrt, path):
    np.savez(path, **{f"g{i}": np.asarray(grads[i], dtype=np.float64) for i in wrt})


def _run_in_subprocess(python, workload, peer, quick, reference_path, ad_stack_size):
    spec = json.dumps({"workload": workload, "peer": peer, "quick": quick,
                       "reference": str(reference_path), "ad_stack_size": ad_stack_size})
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    try:
        done = subprocess.run([str(python), "-m", "benchmarks.measure", spec], cwd=REPO,
                              env=env, capture_output=True, text=True,
                              timeout=PAIR_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"workload": workload, "peer": peer, "status": "error",
                "message": f"timed out after {PAIR_TIMEOUT_S} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (done.stderr or done.stdout).strip().splitlines()[-6:]
    how = (f"killed by signal {-done.returncode}" if done.returncode < 0
           else f"exit status {done.returncode}")
    return {"workload": workload, "peer": peer, "status": "crashed",
            "message": f"process {how}: " + " | ".join(tail)}


def machine_info():
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()}
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        fields = dict(line.split(":", 1) for line in lscpu.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        info["cpu"] = fields.get("Model name", info["cpu"])
        info["cores"] = int(fields.get("CPU(s)", info["cores"]))
    except (OSError, ValueError):
        pass
    try:
        with open("/proc/meminfo") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2 ** 20, 1)
    except (OSError, ValueError, IndexError):
        pass
    if hasattr(os, "getloadavg"):
        info["load_average"] = [round(x, 2) for x in os.getloadavg()]
    import numba
    info["numpy"] = np.__version__
    info["numba"] = numba.__version__
    return info


def run(workloads=None, peer_names=None, quick=False, in_process=False, python=None,
        ad_stack_sizes=None, log=print):
    """Measure every (workload, peer) pair; returns the results document.

    ``ad_stack_sizes`` maps workload names to a stack capacity that replaces
    the workload's own (for ours, Taichi and Quadrants).

    ``in_process`` measures in this process (the smoke test does this);
    otherwise each pair runs in a fresh ``python`` process (the peer venv's
    interpreter when it exists).  Fragile peers always run in a subprocess."""
    workloads = list(workloads or WORKLOADS)
    peer_names = list(peer_names or peers.ALL_PEERS)
    for name in ("numba", "hand"):  # the denominators of the ratios
        if name not in peer_names:
            peer_names.insert(0 if name == "numba" else 1, name)
    python = python or venv_python() or Path(sys.executable)
    doc = {"quick": quick, "machine": machine_info(), "python_for_peers": str(python),
           "started": time.strftime("%Y-%m-%d %H:%M:%S"), "workloads": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for wname in workloads:
            workload = WORKLOADS[wname]
            grads, problems = reference_gradient(workload, quick)
            stack_size = (ad_stack_sizes or {}).get(wname)
            entry = {"title": workload.title, "description": workload.description,
                     "ad_stack_size": stack_size or int(
                         workload.ad_stack_size(workload.make_args(quick))),
                     "finite_difference_check": problems or "ok", "results": {},
                     "started": time.strftime("%Y-%m-%d %H:%M:%S")}
            if hasattr(os, "getloadavg"):
                entry["load_average"] = [round(x, 2) for x in os.getloadavg()]
            doc["workloads"][wname] = entry
            log(f"{workload.title}: hand-written gradient vs finite differences: "
                f"{'ok' if not problems else problems}")
            reference_path = Path(tmp) / f"{wname}.npz"
            _save_reference(grads, workload.wrt, reference_path)
            for peer in peer_names:
                if in_process and peer not in peers.FRAGILE:
                    reference = {i: grads[i] for i in workload.wrt}
                    result = measure(wname, peer, quick, reference, stack_size)
                else:
                    result = _run_in_subprocess(python, wname, peer, quick, reference_path,
                                                stack_size)
                entry["results"][peer] = result
                log("  " + describe(result))
    add_ratios(doc)
    return doc


def merge(doc, previous):
    """``previous`` (an earlier results document) with the workloads of ``doc`` replaced
    or added, in the order of WORKLOADS; the machine and start time stay the earlier
    run's, each replaced workload keeps its own (``--update``)."""
    merged = dict(previous)
    entries = dict(previous["workloads"])
    for name, entry in doc["workloads"].items():
        entries[name] = dict(entry, updated=True)
    merged["workloads"] = {name: entries[name] for name in WORKLOADS if name in entries}
    merged["workloads"].update({k: v for k, v in entries.items() if k not in WORKLOADS})
    add_ratios(merged)
    return merged


def describe(result):
    peer = result["peer"]
    if result["status"] != "ok":
        return f"{peer:10s} {result['status']}: {result.get('message', '')[:200]}"
    return (f"{peer:10s} median {result['median_s'] * 1e3:10.3f} ms   min "
            f"{result['min_s'] * 1e3:10.3f} ms   first call {result['first_call_s']:7.3f} s")


def add_ratios(doc):
    for entry in doc["workloads"].values():
        results = entry["results"]

        def median(name):
            r = results.get(name)
            return r["median_s"] if r and r["status"] == "ok" else None

        def minimum(name):
            r = results.get(name)
            return r["min_s"] if r and r["status"] == "ok" else None

        primal, ours = median("numba"), median("ours")
        primal_min, ours_min = minimum("numba"), minimum("ours")
        for name, r in results.items():
            if r["status"] != "ok":
                continue
            if primal:
                r["over_primal"] = r["median_s"] / primal
                r["over_primal_min"] = r["min_s"] / primal_min
            if ours:
                r["ours_over_this"] = ours / r["median_s"]
                r["ours_over_this_min"] = ours_min / r["min_s"]
        primal_first = results.get("numba", {}).get("first_call_s")
        ours_first = results.get("ours", {}).get("first_call_s")
        if primal_first and ours_first and results["ours"]["status"] == "ok":
            entry["ours_compile_over_primal_compile"] = ours_first / primal_first
