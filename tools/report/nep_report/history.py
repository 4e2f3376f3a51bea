"""The history file of `fix nep/train` (JSON lines, default MODEL.history.jsonl), one event a line:
  start    the fix began (or restarted): step, natoms, elements, buffer, model, every, train_every ...
  round    a training round ended: round, step, frames, n_train, n_heldout, epochs, train_seconds,
           md_wait_seconds, train/heldout/fresh RMSEs (meV), reverted, wall_seconds
  teacher  (active learning) the teacher was called: step, reason (lower|upper|audit),
           max_dev_eV_per_A (predicted deviation), true_max_err_eV_per_A, true_rmse_f_eV_per_A
  check    (active learning) a deviation check without a teacher call: step, max_dev_eV_per_A
After a restart a round number may repeat: the last line of each round counts. Unknown events are
skipped (newer fixes may add some)."""
import json

from .errors import ReportError


class History:
    def __init__(self, path):
        self.path = path
        self.starts, self.rounds, self.teacher, self.checks = [], [], [], []


def read_history(path):
    h = History(path)
    rounds = {}
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                ev = json.loads(line)
            except json.JSONDecodeError as e:
                raise ReportError(path, f"not a JSON object ({e.msg})", lineno) from None
            if not isinstance(ev, dict) or "event" not in ev:
                raise ReportError(path, "a line must be a JSON object with an \"event\"", lineno)
            kind = ev["event"]
            need = {"start": ("step",), "round": ("round", "step"), "teacher": ("step",), "check": ("step",)}.get(kind)
            if need is None:
                continue
            missing = [k for k in need if k not in ev]
            if missing:
                raise ReportError(path, f"{kind} event without {', '.join(missing)}", lineno)
            if kind == "start":
                h.starts.append(ev)
            elif kind == "round":
                rounds[ev["round"]] = ev  # a repeated round (after a restart): the last line counts
            elif kind == "teacher":
                h.teacher.append(ev)
            else:
                h.checks.append(ev)
    h.rounds = [rounds[k] for k in sorted(rounds)]
    return h


def column(events, key, default=float("nan")):
    return [float(e[key]) if e.get(key) is not None else default for e in events]
