"""python -m benchmarks: measure the workloads against the peers and write
docs/benchmarks.md, docs/benchmarks.json and docs/benchmarks.png; then the compile-time
family (compile.*) and the vjp family (vjp.*)."""
import argparse
import os
import sys
from pathlib import Path

from . import harness, peers, report
from .workloads import WORKLOADS


def _names(text, known, what):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and few repeats: checks that everything runs")
    parser.add_argument("--peers", default=",".join(peers.ALL_PEERS),
                        help="comma-separated peers (default: all): " + ", ".join(peers.ALL_PEERS)
                        + "; numba and hand are always measured (the ratios need them)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    parser.add_argument("--out", default=None,
                        help="folder for benchmarks.{json,png,md} (default: docs/, or "
                             "build/benchmarks-quick/ with --quick)")
    parser.add_argument("--ad-stack-size", action="append", default=[], metavar="WORKLOAD=N",
                        help="stack capacity for Taichi and Quadrants on a workload "
                             "(repeatable; ours sizes its stacks itself); default: each "
                             "workload's own")
    parser.add_argument("--update", action="store_true",
                        help="replace the measured workloads' sections in the existing "
                             "benchmarks.json of the output folder, keeping the others")
    parser.add_argument("--from-json", metavar="PATH",
                        help="measure nothing: rewrite the page and plot from a results file")
    parser.add_argument("--install-peers", action="store_true",
                        help="create .venv-bench/ and pip-install the peers into it first")
    parser.add_argument("--no-venv", action="store_true",
                        help="run with this interpreter even when .venv-bench/ exists")
    parser.add_argument("--no-compile", action="store_true",
                        help="skip the compile-time family (benchmarks.bench_compile)")
    parser.add_argument("--no-jvp", action="store_true",
                        help="skip forward mode against JAX (benchmarks.bench_jvp)")
    parser.add_argument("--no-vjp", action="store_true",
                        help="skip the vjp family (benchmarks.bench_vjp: f.vjp of a "
                             "trajectory against JAX's jax.vjp)")
    parser.add_argument("--in-process", action="store_true",
                        help="measure in this process (Taichi and Quadrants still get their "
                             "own process); first-call times then exclude numba's start-up")
    args = parser.parse_args(argv)
    peer_names = _names(args.peers, peers.ALL_PEERS, "peers")
    workload_names = _names(args.workloads, list(WORKLOADS), "workloads")
    stack_sizes = {}
    for item in args.ad_stack_size:
        name, _, size = item.partition("=")
        _names(name, list(WORKLOADS), "workloads")
        stack_sizes[name] = int(size)

    if args.from_json:
        import json
        doc = json.loads(Path(args.from_json).read_text())
        harness.add_ratios(doc)
        for path in report.write_all(doc, Path(args.out or Path(args.from_json).parent)):
            print("wrote", path)
        return

    if args.install_peers:
        harness.install_peers([p for p in peer_names if p in peers.PEER_MODULES])
    venv_python = harness.venv_python()
    in_venv = Path(sys.prefix).resolve() == harness.PEER_VENV.resolve()
    if venv_python and not in_venv and not args.no_venv:
        # Run the whole harness inside the peer environment (it also has matplotlib).
        argv = [a for a in (argv if argv is not None else sys.argv[1:]) if a != "--install-peers"]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(harness.REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
        print(f"running under {venv_python}", flush=True)
        os.execve(str(venv_python), [str(venv_python), "-m", "benchmarks"] + argv, env)

    out = Path(args.out) if args.out else harness.REPO / (
        "build/benchmarks-quick" if args.quick else "docs")
    doc = harness.run(workload_names, peer_names, quick=args.quick,
                      in_process=args.in_process, python=Path(sys.executable),
                      ad_stack_sizes=stack_sizes)
    previous = out / "benchmarks.json"
    if args.update and previous.exists():
        import json
        doc = harness.merge(doc, json.loads(previous.read_text()))
    for path in report.write_all(doc, out):
        print("wrote", path)
    if not args.no_compile:
        from . import bench_compile
        rows = bench_compile.run(bench_compile.QUICK_SEGMENTS if args.quick
                                 else bench_compile.SEGMENTS)
        for path in bench_compile.write_all(rows, out):
            print("wrote", path)
    if not args.no_jvp:
        from . import bench_jvp
        rows = bench_jvp.run(bench_jvp.QUICK_SIZES, 3) if args.quick else bench_jvp.run()
        for path in bench_jvp.write_all(rows, out):
            print("wrote", path)
    if not args.no_vjp:
        from . import bench_vjp
        rows = bench_vjp.run(bench_vjp.QUICK_SIZES, 2) if args.quick else bench_vjp.run()
        for path in bench_vjp.write_all(rows, out):
            print("wrote", path)


if __name__ == "__main__":
    main()
