#!/usr/bin/env python3
"""What a user sees when the plugin cannot work in the LAMMPS at hand:
- nep/kk (when the plugin has the KOKKOS styles) in a LAMMPS started without -k on: an error that
  says to start LAMMPS with -k on (not Kokkos's "uninitialized execution space" abort);
- with --plugin-path MODEL (LAMMPS >= 4May2022): a deck without `plugin load` finds the styles through
  LAMMPS_PLUGIN_PATH (LAMMPS loads every *plugin.so of those folders at start-up) and gives the
  same energy as the deck that loads the plugin itself;
- with --other-lmp: the plugin loaded into a LAMMPS of another release registers no style. Either
  the plugin says so, naming both versions (--expect-warning requires this), or that LAMMPS cannot
  resolve the plugin's symbols and LAMMPS reports the failed load; a deck using pair_style nep then
  stops at LAMMPS's unknown-style error;
- nep/gpu in a LAMMPS started without -k on: the log says it evaluates on the host;
- a deck with the pair styles alone does not load LibTorch (fix nep/train lives in
  nepplugin_train.so, loaded on the fix's first use), and without that file beside nepplugin.so
  fix nep/train stops with an error naming it.

usage: lmp_load_checks.py --lmp LMP --plugin SO [--plugin-path MODEL]
                          [--other-lmp LMP2 --other-libdir DIR [--expect-warning]]
(MODEL: a Si nep.txt)
(--other-libdir: the other LAMMPS's lib/, put first on LD_LIBRARY_PATH for its runs)
Prints one line per check and 'N passed, M failed'.
"""
import argparse
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402

DECK = """plugin load {plugin}
units metal
lattice diamond 5.43
region b block 0 1 0 1 0 1
create_box 1 b
create_atoms 1 box
mass 1 28.0855
pair_style {style}
"""


def run(lmp, deck, libdir=None, env_extra=None):
    d = harness.folder("run")
    path = os.path.join(d, "in.load")
    open(path, "w").write(deck)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env.pop("LAMMPS_PLUGIN_PATH", None)
    env.update(env_extra or {})
    if libdir:
        env["LD_LIBRARY_PATH"] = libdir + ":" + env.get("LD_LIBRARY_PATH", "")
    p = harness.run([lmp, "-in", path, "-log", "none"], env=env, timeout=120, cwd=d)
    return p.returncode, p.stdout + p.stderr


def has_style(style, kind="pair"):
    rc, out = run(ARGS.lmp, DECK.format(plugin=ARGS.plugin, style="zero 1.0") + "plugin list\n")
    return re.search(r"%s style plugin %s\b" % (kind, re.escape(style)), out) is not None


# prints "LIBTORCH_MAPPED n": the lines of the running lmp's memory map naming libtorch_cpu (the
# script climbs from its shell to the lmp process, as LAMMPS's shell command starts it)
MAPS_SCRIPT = """p=$PPID
while [ "$p" -gt 1 ] && ! grep -q lmp /proc/$p/comm; do p=$(awk '{print $4}' /proc/$p/stat); done
echo "LIBTORCH_MAPPED $(grep -c libtorch_cpu /proc/$p/maps)"
"""


def check_trainer_loaded_on_demand():
    if not has_style("nep/train", kind="fix"):
        return "skipped: this plugin has no fix nep/train (built without the trainer)"
    model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "potentials", "Si_2022_NEP4_3body.txt")
    folder = harness.folder("maps")
    script = os.path.join(folder, "maps.sh")
    open(script, "w").write(MAPS_SCRIPT)
    deck = DECK.format(plugin=ARGS.plugin, style="nep") + "pair_coeff * * %s Si\nrun 0\nshell sh %s\n" % (model, script)
    rc, out = run(ARGS.lmp, deck)
    mapped = re.search(r"^LIBTORCH_MAPPED (\d+)$", out, re.M)
    assert rc == 0 and mapped, "exit %d:\n%s" % (rc, out[-1500:])
    assert int(mapped.group(1)) == 0, "pair_style nep alone mapped libtorch_cpu (%s lines)" % mapped.group(1)
    # nepplugin.so without its nepplugin_train.so
    lone = os.path.join(folder, "nepplugin.so")
    shutil.copy(ARGS.plugin, lone)
    deck = DECK.format(plugin=lone, style="nep") + "pair_coeff * * %s Si\nfix t all nep/train every 1\n" % model
    rc, out = run(ARGS.lmp, deck)
    want = "fix nep/train: cannot load %s/nepplugin_train.so" % folder
    assert rc != 0 and want in out, "exit %d, %r not in:\n%s" % (rc, want, out[-1500:])
    return "pair_style nep alone: libtorch_cpu not mapped; without nepplugin_train.so: %r" % want


def check_kk_without_kokkos():
    if not has_style("nep/kk"):
        return "skipped: this plugin has no nep/kk (built with NEP_PLUGIN_KOKKOS=OFF)"
    rc, out = run(ARGS.lmp, DECK.format(plugin=ARGS.plugin, style="nep/kk"))
    want = "Pair style nep/kk needs LAMMPS's KOKKOS package enabled: run LAMMPS with -k on"
    assert rc != 0 and want in out, "exit %d, %r not in:\n%s" % (rc, want, out[-1500:])
    assert "uninitialized execution space" not in out, out[-1500:]
    return "pair_style nep/kk without -k on: %s" % want


def check_gpu_style_on_host_says_so():
    # nep/gpu in a LAMMPS run without -k on evaluates on the host (OpenMP), not on a GPU: the log says so
    model = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "potentials", "Si_2022_NEP4_3body.txt")
    rc, out = run(ARGS.lmp, DECK.format(plugin=ARGS.plugin, style="nep/gpu") + "pair_coeff * * %s Si\nrun 0\n" % model)
    want = "NEP: nep/gpu without the KOKKOS package active (-k on): evaluating on the host"
    assert rc == 0 and want in out, "exit %d, %r not in:\n%s" % (rc, want, out[-1500:])
    return "pair_style nep/gpu without -k on: %r" % want


def check_plugin_path():
    if not ARGS.plugin_path:
        return "skipped: no --plugin-path"
    energy = "pair_coeff * * %s Si\nrun 0\nprint \"PE $(pe:%%.15g)\"\n" % os.path.abspath(ARGS.plugin_path)
    deck = DECK.format(plugin=ARGS.plugin, style="nep") + energy
    rc, out = run(ARGS.lmp, deck)
    loaded = re.search(r"^PE (\S+)$", out, re.M)
    assert rc == 0 and loaded, "deck with plugin load: exit %d:\n%s" % (rc, out[-1500:])
    folder = harness.folder("plugin_path")
    shutil.copy(ARGS.plugin, os.path.join(folder, "nepplugin.so"))
    trainer = os.path.join(os.path.dirname(ARGS.plugin), "nepplugin_train.so")
    if os.path.exists(trainer):   # installed beside it; LAMMPS loads only *plugin.so files
        shutil.copy(trainer, folder)
    rc, out = run(ARGS.lmp, "\n".join(deck.splitlines()[1:]) + "\n", env_extra={"LAMMPS_PLUGIN_PATH": folder})
    found = re.search(r"^PE (\S+)$", out, re.M)
    assert rc == 0 and found, "deck without plugin load, LAMMPS_PLUGIN_PATH=%s: exit %d:\n%s" % (folder, rc, out[-1500:])
    assert re.search(r"Loaded 1 plugins from ", out), out[-1500:]
    assert float(found.group(1)) == float(loaded.group(1)) and float(found.group(1)) < 0, (found.group(1), loaded.group(1))
    return "pair_style nep from LAMMPS_PLUGIN_PATH: PE %s eV (the same with plugin load)" % found.group(1)


def check_other_lammps():
    if not ARGS.other_lmp:
        return "skipped: no --other-lmp"
    rc, out = run(ARGS.other_lmp, DECK.format(plugin=ARGS.plugin, style="nep") + "pair_coeff * * x Si\n",
                  ARGS.other_libdir)
    warned = re.search(r"nepplugin.so was built for LAMMPS (.+?) \((\d{8})\) but this is LAMMPS (.+?) \((\d{8})\): "
                       r"its styles are not registered", out)
    failed_load = re.search(r"Open of file .*nepplugin.so failed: .*undefined symbol", out)
    assert rc != 0 and "Unrecognized pair style 'nep'" in out, "exit %d:\n%s" % (rc, out[-1500:])
    assert warned or (failed_load and not ARGS.expect_warning), out[-1500:]
    if warned:
        assert warned.group(2) != warned.group(4), warned.group(0)
        return "refused with: " + warned.group(0)
    return "refused by the dynamic linker (LAMMPS: %s)" % failed_load.group(0)[:120]


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--lmp", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--plugin-path", default="")
    ap.add_argument("--other-lmp", default="")
    ap.add_argument("--other-libdir", default="")
    ap.add_argument("--expect-warning", action="store_true")
    ARGS = ap.parse_args()
    ARGS.plugin = os.path.abspath(ARGS.plugin)
    harness.run_checks((check_kk_without_kokkos, check_gpu_style_on_host_says_so, check_trainer_loaded_on_demand,
                        check_plugin_path, check_other_lammps))
    harness.finish()


if __name__ == "__main__":
    main()
