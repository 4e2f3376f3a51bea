"""Writes a folder like the one examples/otf-si leaves: a fix nep/train history (JSON lines, with a
restart that repeats a round, and, optionally, active-learning teacher/check events), LAMMPS rdf
files (fix ave/time mode vector), compare logs with PHASE markers and an NVE thermo table, held-out
frames with nep-predict's predictions, the model, nep.in and summary.json. Returns the values the
test recomputes the printed numbers from."""
import json
import math
import os
import random
import shutil

from gpumd_folder import read_frames


def write(d, model, frames_xyz, active=True, seed=3):
    os.makedirs(d, exist_ok=True)
    rng = random.Random(seed)
    shutil.copy(model, os.path.join(d, "si.nep.txt"))
    open(os.path.join(d, "nep.in"), "w").write("type 1 Si\ncutoff 3.8 3.8\nn_max 6 6\nl_max 4 2\nneuron 30\nepoch 40\n")
    ev = [{"event": "start", "step": 0, "natoms": 512, "elements": ["Si"], "buffer": "si.h5", "model": "si.nep.txt",
           "input": "nep.in", "seed": 7, "every": 50, "train_every": 20, "frames": 0, "rounds": 0, "wall_seconds": 0.01}]

    def round_event(k, step, variant=0.0):
        frames = 20 * k
        held = max(1, frames // 10)
        return {"event": "round", "round": k, "step": step, "started_step": step - 500, "frames": frames,
                "n_train": frames - held, "n_heldout": held, "epochs": 40,
                "train_seconds": round(3.0 + 0.4 * k + variant, 3), "md_wait_seconds": round(0.5 * (k % 2) + variant, 3),
                "train_rmse_f_meV_per_A": round(200.0 / k + variant, 3), "train_rmse_e_meV_per_atom": round(5.0 / k, 3),
                "train_rmse_v_meV_per_atom": round(12.0 / k, 3),
                "heldout_rmse_f_meV_per_A": round(220.0 / k + variant, 3) if k > 1 else 0,
                "heldout_rmse_e_meV_per_atom": round(5.5 / k, 3) if k > 1 else 0,
                "fresh_rmse_f_meV_per_A": round(260.0 / k, 3) if k > 2 else 0,
                "reverted": k == 3, "wall_seconds": 10.0 * k}

    for k in range(1, 5):
        ev.append(round_event(k, 1000 * k, variant=7.0))   # rounds 1-4 as first written ...
    ev.append({"event": "start", "step": 3000, "natoms": 512, "elements": ["Si"], "buffer": "si.h5",
               "model": "si.nep.txt", "input": "nep.in", "seed": 7, "every": 50, "train_every": 20,
               "frames": 60, "rounds": 3, "wall_seconds": 31.0})
    for k in range(4, 7):
        ev.append(round_event(k, 1000 * k))                # ... a restart repeats round 4: this line counts
    if active:
        reasons = ["lower", "upper", "audit"]
        for k in range(12):
            dev = 0.02 + 0.03 * k + rng.uniform(0, 0.01)
            ev.append({"event": "teacher", "step": 4000 + 150 * k, "reason": reasons[k % 3],
                       "max_dev_eV_per_A": round(dev, 5), "true_max_err_eV_per_A": round(1.3 * dev + rng.uniform(0, 0.02), 5),
                       "true_rmse_f_eV_per_A": round(0.3 * dev, 5), "driver": "student", "wall_seconds": 60 + k,
                       "teacher_evaluations": 3 * k + 5, "audited": k % 2 == 0,
                       "calibration_factor": 1.0 if k < 8 else 1.25})
            ev.append({"event": "check", "step": 4075 + 150 * k, "max_dev_eV_per_A": round(dev / 3, 5), "driver": "student"})
    ev.append({"event": "future_event", "step": 9999})      # unknown events are skipped
    with open(os.path.join(d, "si.history.jsonl"), "w") as f:
        f.writelines(json.dumps(e) + "\n" for e in ev)

    # rdf files: fix ave/time mode vector, an earlier block first (the last one counts)
    rdf = {}
    for who, shift in (("teacher", 0.0), ("student", 0.04)):
        r = [0.025 + 0.05 * i for i in range(100)]
        gr = [0.0 if x < 2.0 else 2.5 * math.exp(-((x - 2.4 - shift) / 0.15) ** 2) + 1 - math.exp(-(x - 2.0)) for x in r]
        rdf[who] = gr
        with open(os.path.join(d, f"rdf_{who}.txt"), "w") as f:
            f.write("# Time-averaged data for fix rdf\n# TimeStep Number-of-rows\n# Row c_rdf[1] c_rdf[2] c_rdf[3]\n")
            for step, scale in ((2000, 0.5), (4000, 1.0)):
                f.write(f"{step} 100\n")
                f.writelines(f"{i + 1} {x:.6g} {scale * y:.6g} {0.1 * i:.6g}\n" for i, (x, y) in enumerate(zip(r, gr)))
    # compare logs: thermo of the NVE phase after the marker (teacher: nve 0 -> one row, not plotted)
    natoms, steps = 512, list(range(0, 4001, 100))
    etot = [-2212.5 + 0.0004 * s + 0.01 * math.sin(s / 300.0) for s in steps]
    for who, nve_steps in (("student", steps), ("teacher", [0])):
        with open(os.path.join(d, f"compare_{who}.log"), "w") as f:
            f.write(f"LAMMPS (29 Sep 2021 - Update 2)\nunits           metal\ntimestep        0.001\n")
            f.write(f"print           \"PHASE {who}_md\"\nPHASE {who}_md\n  Step Temp E_pair\n       0 1500 -2300\n")
            f.write(f"Loop time of 10.0 on 1 procs for 4000 steps with {natoms} atoms\n\n")
            f.write(f"print           \"PHASE {who}_nve\"\nPHASE {who}_nve\nPer MPI rank memory 3 Mbytes\n")
            f.write("   Step          Temp          PotEng         TotEng    \n")
            f.writelines(f"{s:8d} {1500 + (s % 7):.12g} {-2300 + 0.1 * (s % 5):.12g} {e:.12g}\n"
                         for s, e in zip(nve_steps, etot))
            f.write(f"Loop time of 12.3 on 1 procs for {nve_steps[-1]} steps with {natoms} atoms\n")
    # held-out frames and nep-predict's predictions (species pos energies forces virials)
    frames = read_frames(frames_xyz)[:3]
    pred_lines, ref_lines, e_pred, e_ref, f_pred, f_ref = [], [], [], [], [], []
    for sp, e, forces, vir, text in frames:
        ref_lines.append(text)
        pe = e + rng.gauss(0, 0.002) * len(sp)
        e_pred.append(pe / len(sp))
        e_ref.append(e / len(sp))
        pred_lines.append(f"{len(sp)}\nLattice=\"1 0 0 0 1 0 0 0 1\" Properties=species:S:1:pos:R:3:energies:R:1:forces:R:3:virials:R:9 energy={pe!r}\n")
        for s, line, fr in zip(sp, text.splitlines()[2:], forces):
            p = [x + rng.gauss(0, 0.05) for x in fr]
            f_pred += p
            f_ref += fr
            pos = line.split()[1:4]
            pred_lines.append(f"{s} {' '.join(pos)} 0.0 {' '.join(repr(x) for x in p)} {' '.join(['0'] * 9)}\n")
    open(os.path.join(d, "test.xyz"), "w").write("".join(ref_lines))
    open(os.path.join(d, "test_pred.xyz"), "w").write("".join(pred_lines))
    json.dump({"heldout_force_rmse_meV_per_A": 50.0, "training_rounds": 6, "wall_seconds": 123.4},
              open(os.path.join(d, "summary.json"), "w"))
    return {"events": ev, "rdf": rdf, "nve": (steps, etot, natoms, 0.001),
            "heldout": {"energy": (e_pred, e_ref), "force": (f_pred, f_ref)}}
