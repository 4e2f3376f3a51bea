# source tools/env.sh — puts nep-predict, nep-train, nep-frames and nep-report on PATH, exports LMP and NEP_PLUGIN.
_nep_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$_nep_here/common.sh"
export PATH="$NEP_BUILD_DIR:$_nep_here/report:$PATH"
export LD_LIBRARY_PATH="$NEP_KOKKOS_PREFIX/lib:$NEP_LAMMPS_DIR/lib:${LD_LIBRARY_PATH:-}"
if [ -x "$NEP_LAMMPS_DIR/bin/lmp" ]; then export LMP="$NEP_LAMMPS_DIR/bin/lmp"; fi
if [ -f "$NEP_BUILD_DIR/nepplugin.so" ]; then export NEP_PLUGIN="$NEP_BUILD_DIR/nepplugin.so"; fi
# passive OpenMP waiting: spinning threads starve other work on small machines
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_PROC_BIND=${OMP_PROC_BIND:-false}
unset _nep_here
