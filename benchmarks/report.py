"""Writes the results: JSON, a PNG plot of the ratios, and the Markdown page."""
import json
import re
from pathlib import Path

from .peers import ALL_PEERS

COMMAND = "python -m benchmarks --install-peers"

PEER_LABELS = {
    "numba": "numba primal (no gradient)",
    "hand": "hand-written gradient (numba)",
    "ours": "ours: `numba_adstack.grad_jit`",
    "jax": "JAX `jit(grad)`",
    "torch": "PyTorch eager (CPU)",
    "autograd": "autograd",
    "taichi": "Taichi (CPU)",
    "quadrants": "Quadrants (CPU)",
}


COLORS = {"hand": "#1f77b4", "ours": "#d62728", "jax": "#2ca02c", "torch": "#ff7f0e",
          "autograd": "#9467bd", "taichi": "#8c564b", "quadrants": "#e377c2"}


def write_json(doc, path):
    Path(path).write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")


def plot(doc, path):
    """Bar chart, log scale: gradient time over the numba primal's time, per
    workload and peer; a second panel with ours over each peer once ours runs.
    Returns False when matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    names = list(doc["workloads"])
    peers = [p for p in ALL_PEERS if p != "numba"]
    have_ours = any(e["results"].get("ours", {}).get("status") == "ok"
                    for e in doc["workloads"].values())
    panels = 2 if have_ours else 1
    fig, axes = plt.subplots(panels, 1, figsize=(11, 4.2 * panels), squeeze=False)
    width = 0.8 / len(peers)
    for row, (key, ylabel) in enumerate(
            [("over_primal", "gradient time / numba primal time"),
             ("ours_over_this", "ours / this peer (gradient time)")][:panels]):
        ax = axes[row][0]
        for j, peer in enumerate(peers):
            if key == "ours_over_this" and peer == "ours":
                continue
            xs, ys = [], []
            for i, name in enumerate(names):
                value = doc["workloads"][name]["results"].get(peer, {}).get(key)
                if value:
                    xs.append(i + (j - len(peers) / 2 + 0.5) * width)
                    ys.append(value)
            if xs:
                ax.bar(xs, ys, width, label=peer, color=COLORS[peer])
        ax.set_yscale("log")
        ax.axhline(1.0, color="black", linewidth=0.8)
        if key == "over_primal":
            ax.axhline(3.0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([doc["workloads"][n]["title"] for n in names], fontsize=8)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", which="both", alpha=0.3)
        ax.legend(fontsize=8, ncol=4)
    axes[0][0].set_title("Reverse-mode gradients, CPU, float64 (lower is better; "
                         "missing bar: peer could not run the workload)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# Where a workload's time goes (why it misses its goals, where it does): a profile of the
# generated backward, read with ``f.inspect_adjoint(*args)``. Static text: it describes the backward of the commit
# that measured it, and goes when the rewrite changes what it describes.
NOTES = {
    "logistic_regression": (
        "**Where the time goes.** Each epoch's sweep adds the adjoints of both products "
        "into `X_bar` in place, with no temporary: `add_dot_vjp_a(X_bar.T, gr, X.T, p - y)` "
        "and `add_dot_vjp_a(X_bar, gz, X, w)` (the `into` form of the `np.dot` rule, "
        "`rules/vjp_linalg.py`), one read-modify-write pass over the 1000 x 20 adjoint "
        "each. Before, each made a fresh outer product (160 KB) and added it in a second "
        "pass, the first through a transposed view, and the gradient took 5.9x the "
        "primal (3.1x JAX). The forward keeps, per epoch, the four 1000-element arrays "
        "the sweep reads (`exp(-X w)`, `1 + exp(-X w)`, `p`, `p - y`), a copy of `w` and "
        "three 20-element arrays it reads for their shapes; it kept eleven before, when "
        "the plan's probe took every array adjoint for an accumulated one and so read "
        "each array for its shape. The hand-written gradient does both updates of `X_bar` "
        "in one pass and keeps `w` and `p` only; JAX's XLA fuses the outer products into "
        "the adjoint of `X` that its scan carries. The sweep's element-wise adjoints of "
        "the sigmoid are still three fresh 1000-element arrays per epoch (the stack pops "
        "between them keep them from folding into one expression). On this shared "
        "machine the medians spread far above the minima under load, ours' furthest; "
        "the ratios of the minima are the steadier figures. The first call is mostly the "
        "compile of the backward, whose forward and sweep call `np.dot` and NumPy ufuncs "
        "on arrays at many sites, each compiled by Numba."),
}


def _fmt(value, scale=1.0, digits=3):
    if value is None:
        return ""
    v = value * scale
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}g}"


def _pair(r, key):
    """'median ratio (ratio of the minima)'."""
    if r.get(key) is None:
        return ""
    return f"{_fmt(r[key])} ({_fmt(r.get(key + '_min'))})"


def _table(entry):
    lines = ["| peer | first call (s) | gradient median (ms) | gradient min (ms) | "
             "gradient / primal | ours / this | peak memory of a call (MiB) | status |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    notes = []
    for peer in ALL_PEERS:
        r = entry["results"].get(peer)
        if r is None:
            continue
        label = PEER_LABELS[peer]
        if r["status"] == "ok":
            lines.append(
                f"| {label} | {_fmt(r['first_call_s'])} | {_fmt(r['median_s'], 1e3)} | "
                f"{_fmt(r['min_s'], 1e3)} | {_pair(r, 'over_primal')} | "
                f"{_pair(r, 'ours_over_this')} | {_fmt(r.get('peak_mib'))} | ok |")
        else:
            lines.append(f"| {label} | | | | | | | {r['status']} (see below) |")
            message = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", r.get("message", "")).split())
            if len(message) > 400:
                message = message[:400] + " ..."
            notes.append(f"- **{peer}** ({r['status']}): `{message}`")
    return "\n".join(lines), notes


def markdown(doc, png_name, json_name):
    m = doc["machine"]
    out = ["# Benchmarks", "",
           f"Reverse-mode gradients of {_count(len(doc['workloads']))} float64 CPU "
           "workloads: `numba_adstack.grad_jit` "
           "against the same gradient written by hand in numba and against JAX, PyTorch, "
           "autograd, Taichi and Quadrants. Regenerate everything on this page (the tables, "
           f"the plot `{png_name}` and the raw results `{json_name}`) with", "",
           "```", COMMAND, "```", "",
           "from the repository root. `--install-peers` creates `.venv-bench/` (a virtual "
           "environment that sees the project's numba and NumPy) and installs the peers into "
           "it; without it, peers that are not installed are reported as missing. Other "
           "options: `--quick` (tiny sizes, a smoke run), `--peers jax,torch`, "
           "`--workloads sin_recurrence,mc_option`, `--update` (measure only those "
           "workloads and replace their sections in the existing results, keeping the "
           "others), `--out DIR`, "
           "`--ad-stack-size mass_spring=20000` (the stack capacity given to Taichi and "
           "Quadrants for a workload; ours runs with its default options and sizes its "
           "stacks itself).", ""]
    if doc.get("quick"):
        out += ["**These figures come from `--quick` (tiny sizes): they only show that the "
                "harness runs.**", ""]
    versions = {}
    for entry in doc["workloads"].values():
        for peer, r in entry["results"].items():
            if r.get("version"):
                versions[peer] = r["version"]
    out += ["## Machine and versions", "",
            f"- CPU: {m.get('cpu')}, {m.get('cores')} cores, "
            f"{m.get('memory_gib', '?')} GiB memory; {m.get('platform')}",
            f"- Python {m.get('python')}, NumPy {m.get('numpy')}, numba {m.get('numba')}",
            "- peers: " + (", ".join(f"{p} {v}" for p, v in versions.items()
                                    if p not in ("numba", "hand")) or "none measured"),
            f"- measured {doc.get('started')}"
            + (f", load average at the start: {', '.join(map(str, m['load_average']))}"
               if m.get("load_average") else "")
            + ". Other processes on a small machine make the medians noisy; the minimum "
            "is the steadier figure.", "",
            "## How it is measured", "",
            "- Every (workload, peer) pair runs in a fresh Python process. The peer builds "
            "its gradient function and calls it once: that is the **first call** time "
            "(tracing and compilation included; for numba it is the compile of the primal "
            "or of the gradient). Its gradient is then compared with the hand-written one "
            "(`np.allclose`, rtol 1e-6, atol 1e-9 times the largest entry) **before** any "
            "timing; a wrong gradient is reported and not timed. The hand-written gradient "
            "itself is checked against central finite differences of the numba primal.",
            "- After one more warm-up call, the gradient call is repeated for about 2 s "
            "(at least 5 times): **median** and **minimum** wall time (`time.perf_counter`). "
            "A gradient call includes everything needed to get the gradient as NumPy values "
            "from the NumPy inputs: the forward pass, the backward pass, zeroing the "
            "adjoints (Taichi, Quadrants), and the transfer of the result.",
            "- **Peak memory of a call**: on Linux the process's resident-set high-water "
            "mark is reset (`/proc/self/clear_refs`) just before one more gradient call and "
            "read (`VmHWM` in `/proc/self/status`) just after; the figure is that peak minus "
            "the resident size before the call, so it sees NumPy, numba, XLA, PyTorch and "
            "Taichi allocations alike (tracemalloc would see only Python's). Before it, "
            "glibc is told to return freed memory (`malloc_trim`) and to map every block of "
            "64 KiB or more separately (`mallopt(M_MMAP_THRESHOLD)`), so memory reused "
            "from an earlier call is counted too; memory a runtime keeps in its own pool "
            "(Taichi's fields and stacks, allocated at start-up) is not.",
            "- **gradient / primal** is the gradient's median over the numba primal's median "
            "(the primal is `numba.njit` of the same plain Python function); **ours / this** "
            "is the median of `numba_adstack.grad_jit(primal).grad` over that row's median "
            "(below 1: ours is faster). Each ratio is given on the medians and, in "
            "parentheses, on the minima.",
            "- PyTorch and autograd use vectorised array code over elements, paths or "
            "particles and a Python loop over time steps; JAX uses `lax.fori_loop` with "
            "static trip counts inside `jax.jit(jax.grad(...))`; Taichi and Quadrants run "
            "`kernel()` then `kernel.grad()` with `ad_stack_size` set per workload (the "
            "mass-spring chain is written with a time axis and one launch per step on an "
            "`ad.Tape`, as Taichi's own differentiable simulations do, since in-place "
            "updates across steps break their reverse mode). Threads: each library's "
            "default on this machine.", ""]
    for name, entry in doc["workloads"].items():
        table, notes = _table(entry)
        fd = entry["finite_difference_check"]
        out += [f"## {entry['title']}", "", entry["description"], ""]
        if entry.get("updated"):
            load = entry.get("load_average")
            out += [f"Measured on its own (`--update`), {entry['started']}"
                    + (f", load average at the start: {', '.join(map(str, load))}"
                       if load else "")
                    + f"; peers: {', '.join(entry['results'])}.", ""]
        out += [f"Hand-written gradient against finite differences: "
                f"{'ok' if fd == 'ok' else fd}. `ad_stack_size` passed to the tools that "
                f"need one: {entry['ad_stack_size']}.", "", table, ""]
        if entry.get("ours_compile_over_primal_compile"):
            out += [f"First call of ours over the numba primal's first call: "
                    f"{entry['ours_compile_over_primal_compile']:.2f}.", ""]
        if notes:
            out += ["Peers that did not produce a timed gradient:", ""] + notes + [""]
        if name in NOTES:
            out += [NOTES[name], ""]
    out += [f"## {len(doc['workloads']) + 1}. per-thread recurrence on a GPU", "",
            "Not part of this page's run, which is CPU only: on a machine with an NVIDIA GPU, "
            "`bash scripts/gpu_check.sh` runs the CUDA tests on the device and then "
            "`benchmarks/gpu/recurrence.py` (1M threads, 100 steps of `v = sin(v) * w[0]`): "
            "forward and backward kernel times, their ratio, a hand-written backward kernel "
            "for comparison, local memory per thread and the gradient error.", ""]
    out += _other_pages(len(doc["workloads"]) + 2)
    out += goals(doc)
    out += ["## Plot", "", f"![gradient time ratios]({png_name})", "",
            "Top: gradient time over the numba primal's time (log scale; the dashed line is "
            "3x). Bottom, once ours runs: ours over each peer.", ""]
    return "\n".join(out)


# Benchmarks with their own runs and pages, whose last tables this page repeats.
_OTHER_PAGES = (
    ("vjp.md", "interop.md", "vjp of an array-returning time-stepper against JAX's `vjp`",
     "python -m benchmarks.bench_vjp"),
    ("benchmarks_jvp.md", "benchmarks_jvp.md",
     "jvp of an array-returning time-stepper against JAX's `jvp`",
     "python -m benchmarks.bench_jvp"),
    ("benchmarks_real.md", "benchmarks_real.md", "real programs with default options "
     "against hand-written gradients", "python -m benchmarks.bench_real"),
    ("compile.md", "compile.md", "compile time of long branchy functions: the gradient's "
     "first call against the primal's `njit` compile", "python -m benchmarks.bench_compile"),
    ("from_jit.md", "from_jit.md", "gradients called from jitted code against hand-written "
     "ones", "python -m benchmarks.bench_from_jit"),
    ("benchmarks_library.md", "benchmarks_library.md", "library code as its authors wrote "
     "it, against JAX and hand-written gradients", "python -m benchmarks.library_report"),
)
#: Pages whose plot the section shows too.
_OTHER_PLOTS = {"benchmarks_library.md": "benchmarks_library.png"}


def _other_pages(number):
    """Sections repeating the tables of the benchmark pages written by other runs."""
    docs = Path(__file__).resolve().parent.parent / "docs"
    out = []
    for k, (page, link, title, command) in enumerate(_OTHER_PAGES):
        path = docs / page
        if not path.exists():
            continue
        table = [ln for ln in path.read_text().splitlines() if ln.startswith("|")]
        first = next((i for i, ln in enumerate(table) if set(ln) <= set("|-: ")), None)
        table = table[:first + 1] + [ln for ln in table[first + 1:]
                                     if not set(ln) <= set("|-: ")] if first else table
        out += [f"## {number + k}. {title}", "",
                f"From `{command}`, as last run; [{link}]({link}) says how it is "
                "measured and what the rows that miss their goals miss by.", ""]
        rows = []
        for ln in table:
            if rows and ln.count("|") != rows[0].count("|"):
                break           # the page's first table only
            rows.append(ln)
        out += rows + [""]
        if page in _OTHER_PLOTS and (docs / _OTHER_PLOTS[page]).exists():
            out += ["![%s](%s)" % (title, _OTHER_PLOTS[page]), ""]
    return out


def _count(n):
    words = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
    return words[n] if n < len(words) else str(n)


def goals(doc):
    """The goals of the project, checked against the figures of this run."""
    w = doc["workloads"]

    def result(name, peer):
        return w.get(name, {}).get("results", {}).get(peer, {})

    def ok(name, peer):
        return result(name, peer).get("status") == "ok"

    rows = []

    def row(goal, name, value, limit, text, on_minima=None):
        if value is None:
            rows.append(f"| {goal} | {w[name]['title']} | not measured |")
        else:
            verdict = "met" if value <= limit else "**missed**"
            extra = f" (on the minima: {on_minima:.3g})" if on_minima else ""
            rows.append(f"| {goal} | {w[name]['title']} | {text} = {value:.3g}{extra}: "
                        f"{verdict} |")

    for name in ["sin_recurrence", "long_recurrence", "newton_sqrt", "mass_spring"]:
        if name in w:
            r = result(name, "ours")
            row("gradient within 3x of the primal", name,
                r.get("over_primal") if ok(name, "ours") else None, 3.0, "ours / primal",
                r.get("over_primal_min"))
            hand = result(name, "hand")
            row("within 1.3x of hand-written", name,
                hand.get("ours_over_this") if ok(name, "hand") else None, 1.3,
                "ours / hand-written", hand.get("ours_over_this_min"))
    for name in ["long_recurrence", "newton_sqrt", "mass_spring", "mc_option"]:
        if name in w:
            ratios = [r.get("ours_over_this") for p, r in w[name]["results"].items()
                      if p not in ("numba", "hand", "ours") and r.get("status") == "ok"]
            ratios = [x for x in ratios if x]
            row("faster than every peer", name,
                max(ratios) if ratios and ok(name, "ours") else None, 1.0,
                "largest ours / peer")
    name = "logistic_regression"
    if name in w:
        r = result(name, "ours")
        row("gradient within 3x of the primal", name,
            r.get("over_primal") if ok(name, "ours") else None, 3.0, "ours / primal",
            r.get("over_primal_min"))
        jax = result(name, "jax")
        row("within 1.5x of JAX", name,
            jax.get("ours_over_this") if ok(name, "jax") and ok(name, "ours") else None,
            1.5, "ours / JAX", jax.get("ours_over_this_min"))
    for name in w:
        row("first call within 3x of the primal's", name,
            w[name].get("ours_compile_over_primal_compile"), 3.0,
            "ours first call / numba first call")
    return ["## Goals", "",
            "The project's goals, checked against this run (\"not measured\" while "
            "`numba_adstack.grad_jit` does not run the workload).", "",
            "| goal | workload | result |", "|---|---|---|"] + rows + [""]


def write_all(doc, out_dir, stem="benchmarks"):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, png_path, md_path = (out_dir / f"{stem}.json", out_dir / f"{stem}.png",
                                    out_dir / f"{stem}.md")
    write_json(doc, json_path)
    have_png = plot(doc, png_path)
    text = markdown(doc, png_path.name if have_png else "(matplotlib missing: no plot)",
                    json_path.name)
    md_path.write_text(text)
    return [p for p in (json_path, png_path if have_png else None, md_path) if p]
