#!/usr/bin/env bash
# nep-train's speed on the GPU against the CPU: the second part of benchmarks/gpu/device_run.sh
# (results into $OUT/train.txt).
# The device machine has no Debian LibTorch, so nep-train is built there against its Python
# torch's LibTorch, linking the CUDA core compiled here (stage_cuda_build.sh puts libnep_core.a, libnep_data.a and
# libnep_train_kernels.a, the trainer's CUDA kernels, the CUDA Kokkos install and libhdf5 with its
# libraries into .device/): only the trainer's few files around the kernels compile there. Then,
# on the GPUMD PbTe example (20 training frames, the bench_pbte.sh model:
# cutoff 8 4, n_max 6 6, basis 6 6, l_max 4 2 0, neuron 30, batch 4) and on a larger set (the same
# frames tiled 2x2x2: 8x the atoms per frame), s/epoch with --device cuda and --device cpu
# (all cores), and the final RMSEs of both (they train the same model to round-off).
#   on the device:  bash benchmarks/gpu/gpu_train_speed.sh     (carry .device)
#   CPU dry run:    BIN=build DEVICE=kokkos EPOCHS=4 benchmarks/gpu/gpu_train_speed.sh
#   the device build alone, here with Debian's LibTorch (CI does this after benchmarks/gpu/stage_cuda_build.sh):
#     NEP_TRAIN_BUILD_ONLY=1 NEP_TORCH_LIBS="$L/libtorch_cpu.so;$L/libc10.so" \
#     NEP_TORCH_INCLUDES="/usr/include;/usr/include/torch/csrc/api/include" benchmarks/gpu/gpu_train_speed.sh
#   (L=/usr/lib/x86_64-linux-gnu)
set -uo pipefail
OUT=${OUT:-/tmp/nep-gpu-out}
mkdir -p "$OUT"
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
DEVICE=${DEVICE:-cuda}
EPOCHS=${EPOCHS:-20}
if [ -z "${BIN:-}" ]; then
  dev=${NEP_DEVICE_DIR:-$repo/.device}
  cuda=${CUDA_HOME:-/usr/local/cuda}
  # LibTorch's CPU libraries (Adam runs on the host): the Python torch's, or for a dry run of this
  # build with another LibTorch, NEP_TORCH_LIBS and NEP_TORCH_INCLUDES (;-separated)
  . "$repo/tools/common.sh"
  if [ -n "${NEP_TORCH_LIBS:-}" ]; then
    mapfile -t targs < <(torch_cmake_args "$NEP_TORCH_LIBS" "$NEP_TORCH_INCLUDES")
  else
    mapfile -t targs < <(python_torch_cmake_args)
    [ "${#targs[@]}" -gt 0 ] || { echo "gpu_train_speed: no usable Python torch"; exit 1; }
  fi
  [ -d "$dev/hdf5lib" ] || tar -C "$dev" -xJf "$dev/hdf5lib.tar.xz"
  # the Kokkos install was made here: point its CUDA runtime at this machine's
  cudalib=""
  for d in lib64 lib targets/x86_64-linux/lib; do
    [ -e "$cuda/$d/libcudart.so" ] && { cudalib=$cuda/$d; break; }
  done
  [ -n "$cudalib" ] || { echo "gpu_train_speed: no libcudart.so under $cuda"; exit 1; }
  libcuda=$cudalib/stubs/libcuda.so
  [ -e "$libcuda" ] || libcuda=$(ldconfig -p | awk '$1 == "libcuda.so.1" { print $NF; exit }')
  sed -i "s#\"[^\"]*/libcudart.so\"#\"$cudalib/libcudart.so\"#; s#\"[^\"]*/libcuda.so\"#\"$libcuda\"#" \
    "$dev/kokkos/lib/cmake/Kokkos/KokkosConfig.cmake"
  export PATH="$cuda/bin:$PATH" NVCC_WRAPPER_DEFAULT_COMPILER=g++
  export NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=sm_90"
  RUN_LIBS="$dev/lib:$dev/hdf5lib:$cudalib"  # nep-train's runs only (not Python's)
  bdir=${NEP_TRAIN_BUILD_DIR:-build-train}
  t0=$(date +%s)
  if ! { cmake -S . -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
           -DCMAKE_CXX_COMPILER="$dev/kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS=-arch=sm_80 \
           -DKokkos_DIR="$dev/kokkos/lib/cmake/Kokkos" \
           "${targs[@]}" \
           -DNEP_CORE_LIBRARY="$dev/lib/libnep_core.a" -DNEP_HDF5_LIBRARY="$(ls "$dev"/hdf5lib/libhdf5_serial.so.* | head -1)" \
           -DCMAKE_EXE_LINKER_FLAGS="-Wl,-rpath-link,$dev/hdf5lib:$dev/lib" \
           -DNEP_BUILD_PLUGIN=OFF -DNEP_BUILD_TESTS=OFF -DNEP_BUILD_BENCHMARKS=OFF &&
         cmake --build "$bdir" -j "$(nproc)" --target nep-train; } > "$OUT/train_build.log" 2>&1; then
    tail -n 40 "$OUT/train_build.log"
    echo "gpu_train_speed: building nep-train failed (log: train_build.log)"
    exit 1
  fi
  echo "nep-train built here in $(($(date +%s) - t0)) s (${targs[*]})" | tee "$OUT/train.txt"
  BIN=$bdir
  [ "${NEP_TRAIN_BUILD_ONLY:-0}" = 1 ] && exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - tests/data/train/PbTe_gpumd-example_25frames_EF_train.xyz "$work" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
fr, i = [], 0
while i < len(lines):
    n = int(lines[i]); fr.append(lines[i:i + n + 2]); i += n + 2
w = sys.argv[2]
import os
for d in ("pbte", "tiled"):
    os.makedirs(os.path.join(w, d))
open(w + "/pbte/train.xyz", "w").write("".join(sum(fr[:20], [])))
open(w + "/pbte/test.xyz", "w").write("".join(sum(fr[20:], [])))
# 2x2x2 tiling of each frame: energy x8, forces repeated (a periodic supercell of the same state)
def tile(f):
    n = int(f[0]); hdr = f[1]
    lat = [float(v) for v in hdr.split('Lattice="')[1].split('"')[0].split()]
    a = [lat[0:3], lat[3:6], lat[6:9]]
    e = float(hdr.split("energy=")[1].split()[0])
    rest = hdr.split("Properties=")[1].split()[0]
    out = ["%d\n" % (8 * n), 'Lattice="%s" energy=%.10f Properties=%s\n' % (" ".join("%.10f" % (2 * v) for v in lat), 8 * e, rest)]
    for i in range(2):
        for j in range(2):
            for k in range(2):
                for l in f[2:]:
                    t = l.split()
                    x = [float(t[1 + c]) + i * a[0][c] + j * a[1][c] + k * a[2][c] for c in range(3)]
                    out.append("%s %.10f %.10f %.10f %s\n" % (t[0], x[0], x[1], x[2], " ".join(t[4:])))
    return out
open(w + "/tiled/train.xyz", "w").write("".join(sum((tile(f) for f in fr[:20]), [])))
open(w + "/tiled/test.xyz", "w").write("".join(sum((tile(f) for f in fr[20:]), [])))
PY
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
threads=$(nproc)
{
  echo "== nep-train, $EPOCHS epochs, seed 1: --device $DEVICE against --device cpu --threads $threads"
  printf "%-6s %-7s %8s %10s %12s %12s %12s %12s\n" set device atoms s/epoch trainE_meV trainF_meV testE_meV testF_meV
  for set in pbte tiled; do
    atoms=$(python3 -c "
l = open('$work/$set/train.xyz').read().splitlines(); i = s = 0
while i < len(l): n = int(l[i]); s += n; i += n + 2
print(s)")
    for dv in "$DEVICE" cpu; do
      d=$work/$set-$dv
      mkdir -p "$d"
      cp "$work/$set/train.xyz" "$work/$set/test.xyz" "$d/"
      printf "type 2 Te Pb\ncutoff 8 4\nn_max 6 6\nbasis_size 6 6\nl_max 4 2 0\nneuron 30\nbatch 4\nepoch %s\nprint_interval %s\n" \
        "$EPOCHS" "$EPOCHS" > "$d/nep.in"
      LD_LIBRARY_PATH="${RUN_LIBS:-}:${LD_LIBRARY_PATH:-}" NEP_TIMING=1 timeout 240 "$BIN/nep-train" "$d" --seed 1 --threads "$threads" --device "$dv" > "$d/log" 2> "$d/err"
      rc=$?
      spe=$(grep -o '[0-9.]* s/epoch' "$d/log" | tail -1 | cut -d' ' -f1)
      read -r _ _ _ _ eT fT _ eX fX _ <<< "$(tail -1 "$d/loss.out" 2>/dev/null)"
      awk -v s="$set" -v d="$dv" -v n="$atoms" -v t="${spe:-rc=$rc}" -v a="${eT:-0}" -v b="${fT:-0}" -v c="${eX:-0}" -v e="${fX:-0}" \
        'BEGIN { printf "%-6s %-7s %8d %10s %12.3f %12.1f %12.3f %12.1f\n", s, d, n, t, a * 1e3, b * 1e3, c * 1e3, e * 1e3 }'
      { echo "-- $set $dv"; tail -n 3 "$d/log"; grep NEP_TIMING "$d/err" | head -n 30; tail -n 5 "$d/err"; } >> "$OUT/train_detail.txt"
    done
  done
} | tee -a "$OUT/train.txt"
