#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: install numba_adstack with its CUDA extra from wheels,
# run the CUDA tests on the device, then time the per-thread recurrence kernel of
# nad.cuda.grad_jit (forward, backward and their ratio over 1M threads, local memory per
# thread) and a device function's gradient called per thread against a hand-written one.
#
#   scripts/gpu_check.sh                      # install from the package index
#   WHEELHOUSE=/path/to/wheels scripts/gpu_check.sh   # offline, from a folder of wheels
#   NO_INSTALL=1 scripts/gpu_check.sh         # use the current environment as is
#
# Wheels for an offline machine: pip download --only-binary=:all: -d wheels \
#   "numba-cuda[cu12]>=0.30,<0.31" "numba>=0.68,<0.69" numpy pytest
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

if [ "${NO_INSTALL:-0}" != 1 ]; then
  "$PYTHON" -m venv .venv-gpu
  # shellcheck disable=SC1091
  . .venv-gpu/bin/activate
  PYTHON=python
  pip_args=(--only-binary=:all:)
  if [ -n "${WHEELHOUSE:-}" ]; then
    pip_args+=(--no-index --find-links "$WHEELHOUSE")
  fi
  python -m pip install -q "${pip_args[@]}" "numba-cuda[cu12]>=0.30,<0.31" \
    "numba>=0.68,<0.69" "llvmlite>=0.50,<0.51" numpy pytest
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

"$PYTHON" -c "import numba_adstack.cuda as c, sys; \
print('GPU:', c.have_gpu()); sys.exit(0 if c.have_gpu() else 1)" \
  || { echo "no usable CUDA GPU: nothing to check on a device" >&2; exit 1; }

"$PYTHON" -m pytest -q -rxX tests/cuda/test_cuda_device.py tests/cuda/test_cuda_ptx.py \
  tests/cuda/test_cuda_grad_ptx.py tests/cuda/test_cuda_launch_ptx.py tests/cuda/test_cuda_helpers.py \
  tests/cuda/test_cuda_simulator.py
"$PYTHON" benchmarks/gpu/recurrence.py --threads "${THREADS:-1048576}" \
  --steps "${STEPS:-100}" --repeat "${REPEAT:-20}"
"$PYTHON" benchmarks/gpu/device_grad.py --threads "${THREADS:-1048576}" \
  --repeat "${REPEAT:-20}"
