"""Run the ```python blocks of one documentation page in order, as a reader pasting them
into one interpreter would: ``python doc_blocks.py PAGE.md OUT.json`` (in a scratch
directory, which is the current one).

Each block is written to a file of the current directory and run from it (so that
``cache=True`` finds its source): in one namespace shared by the page's blocks; a block
whose first line names a module (``# mymodel.py``) is that module, imported; one that runs
as a program (``if __name__ == "__main__":``, worker processes) runs in a process of its
own. Kernels run on a GPU, or where there is none in the CUDA simulator. A block that
needs what is not here (a module not installed: PyTorch, JAX, numba-cuda) is skipped with
the reason, and so is a later one that fails for lack of a name a skipped block defines.
OUT.json lists ``{line, status, reason}`` per block (status ok, skipped, failed).
"""
import ast
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import traceback
from pathlib import Path

BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
MODULE = re.compile(r"^# (\w+)\.py\s*$")


def blocks(page):
    text = Path(page).read_text()
    return [(text[:m.start()].count("\n") + 2, m.group(1)) for m in BLOCK.finditer(text)]


def imported(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update("%s.%s" % (node.module, a.name) for a in node.names)
    return out


def bound(tree):
    """The names a block binds at its top level."""
    out = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


#: What a page may use that a checkout's install (".[test]") may lack: blocks using one
#: that is absent are skipped. Any other import runs, and fails if it is missing.
OPTIONAL = {"torch", "jax", "jaxlib", "dask", "distributed", "scipy", "matplotlib"}


def needs_gpu(code, tree):
    return any(n in ("numba.cuda", "numba_adstack.cuda") for n in imported(tree)) or \
        re.search(r"\bnad\.cuda\.|\bcuda\.jit\b", code) is not None


def cuda_mode(page_blocks):
    """How the page's kernels run: "gpu"; "simulator" where there is no GPU (set up
    here, before numba.cuda is imported: the pages say they run there as on a GPU);
    "missing" without numba-cuda; None when no block needs it."""
    if not any(needs_gpu(code, _tree(code)) for _, code in page_blocks):
        return None
    probe = subprocess.run([sys.executable, "-c", "from numba import cuda; "
                            "print(cuda.is_available())"], capture_output=True, text=True)
    if probe.returncode:
        return "missing"
    if probe.stdout.strip() == "True":
        return "gpu"
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    return "simulator"


def _tree(code):
    try:
        return ast.parse(code)
    except SyntaxError:
        return ast.parse("")


def missing(code, tree, cuda):
    """Why the block cannot run here, or None."""
    for name in sorted(imported(tree)):
        top = name.split(".")[0]
        if top not in OPTIONAL:
            continue
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return "needs %s, which is not installed" % top
    if cuda == "missing" and needs_gpu(code, tree):
        return "needs numba-cuda, which is not installed"
    return None


def run(page, out):
    ns = {"__name__": "__main__"}
    results, skipped_names = [], {}
    stem = Path(page).stem
    page_blocks = blocks(page)
    cuda = cuda_mode(page_blocks)
    for line, code in page_blocks:
        try:
            tree = ast.parse(code)
        except SyntaxError:
            results.append({"line": line, "status": "failed",
                            "reason": traceback.format_exc(limit=0)})
            continue
        first = code.splitlines()[0] if code.strip() else ""
        module = MODULE.match(first)
        result = {"line": line, "status": "ok",
                  "reason": "in the CUDA simulator (no GPU here)"
                  if cuda == "simulator" and needs_gpu(code, tree) else ""}
        results.append(result)
        why = missing(code, tree, cuda)
        if why is not None:
            result.update(status="skipped", reason=why)
            skipped_names.update(dict.fromkeys(bound(tree), line))
            continue
        path = Path("%s.py" % module.group(1)) if module else \
            Path("%s_line%d.py" % (stem, line))
        path.write_text(code)
        started = time.perf_counter()
        try:
            if module:
                importlib.import_module(module.group(1))
            elif re.search(r"^if __name__ == .__main__.:", code, re.MULTILINE):
                r = subprocess.run([sys.executable, str(path)], capture_output=True,
                                   text=True, timeout=600)
                if r.returncode:
                    raise RuntimeError(r.stdout[-3000:] + r.stderr[-3000:])
            else:
                exec(compile(code, str(path.resolve()), "exec"), ns)
        except NameError as e:
            name = getattr(e, "name", None)
            if name in skipped_names:
                result.update(status="skipped", reason="uses %r of the skipped block at "
                              "line %d" % (name, skipped_names[name]))
            else:
                result.update(status="failed", reason=traceback.format_exc()[-3000:])
        except BaseException:
            result.update(status="failed", reason=traceback.format_exc()[-3000:])
        result["seconds"] = round(time.perf_counter() - started, 2)
        Path(out).write_text(json.dumps(results, indent=1))
    Path(out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.path.insert(0, "")
    run(sys.argv[1], sys.argv[2])
