#!/usr/bin/env python3
"""An i-PI client for the tests of pair_style ipi, written from the protocol's description (not from
any i-PI code): Lennard-Jones in periodic cells (triclinic included, every image within the cutoff),
the same function as LAMMPS's `pair_style lj/cut` (no shift), so the two can be compared; and
faults on demand.

Usage: lj_client.py (--unix NAME | --inet HOST:PORT) [--epsilon E] [--sigma S] [--cutoff RC]
         [--needinit-every] [--zero] [--die-at N] [--hang-at N] [--nan-at N] [--count-off-at N]
         [--once FILE] [--log FILE]
Faults act on call N (1-based, counted by POSDATA messages); with --once FILE only when FILE does
not exist yet (it is created then), so a restarted client behaves."""
import argparse
import os
import socket
import struct
import sys
import time

import numpy as np

BOHR = 0.529177210903     # Angstrom (CODATA 2018, as the server)
HARTREE = 27.211386245988  # eV

ap = argparse.ArgumentParser()
ap.add_argument("--unix")
ap.add_argument("--inet")
ap.add_argument("--epsilon", type=float, default=0.0104)
ap.add_argument("--sigma", type=float, default=3.40)
ap.add_argument("--cutoff", type=float, default=8.5)
ap.add_argument("--needinit-every", action="store_true", help="ask for INIT before every call, as pw.x does")
ap.add_argument("--zero", action="store_true", help="answer zero energy, forces and virial at once (overhead benchmarks)")
for fault in ("die-at", "hang-at", "nan-at", "count-off-at"):
    ap.add_argument("--" + fault, type=int, default=0)
ap.add_argument("--once")
ap.add_argument("--connect-timeout", type=float, default=30.0)
args = ap.parse_args()


def connect():
    deadline = time.time() + args.connect_timeout
    while True:
        try:
            if args.unix:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect("/tmp/ipi_" + args.unix)
            else:
                host, port = args.inet.rsplit(":", 1)
                s = socket.create_connection((host, int(port)))
            return s
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)


def recv_exact(s, n):
    b = bytearray()
    while len(b) < n:
        chunk = s.recv(n - len(b))
        if not chunk:
            sys.exit(0)    # the server went away
        b += chunk
    return bytes(b)


def header(s):
    return recv_exact(s, 12).decode().strip()


def send_header(s, text):
    s.sendall(text.ljust(12).encode())


def lj(cell, pos):
    """energy (eV), forces (eV/A), virial W (eV, 3x3) of LJ with every periodic image within the cutoff"""
    n = len(pos)
    inv = np.linalg.inv(cell)                 # rows of `cell` are the lattice vectors
    heights = 1.0 / np.linalg.norm(inv, axis=0)
    reach = [int(np.ceil(args.cutoff / h)) for h in heights]
    shifts = np.array([[i, j, k] for i in range(-reach[0], reach[0] + 1) for j in range(-reach[1], reach[1] + 1)
                       for k in range(-reach[2], reach[2] + 1)], dtype=float) @ cell
    e, f, w = 0.0, np.zeros((n, 3)), np.zeros((3, 3))
    rc2, s2 = args.cutoff ** 2, args.sigma ** 2
    for i in range(n):
        d = pos[i] - pos[None, :, :] + shifts[:, None, :]      # r_i - r_j - shift, all images
        d = d.reshape(-1, 3)
        r2 = np.einsum("ij,ij->i", d, d)
        m = (r2 < rc2) & (r2 > 1e-12)
        d, r2 = d[m], r2[m]
        sr6 = (s2 / r2) ** 3
        e += 0.5 * np.sum(4 * args.epsilon * (sr6 * sr6 - sr6))
        fpair = 24 * args.epsilon * (2 * sr6 * sr6 - sr6) / r2    # F_i = fpair * d
        f[i] += np.sum(fpair[:, None] * d, axis=0)
        w += 0.5 * np.einsum("p,pa,pb->ab", fpair, d, d)
    return e, f, w


def main():
    s = connect()
    calls, have, init = 0, False, False
    result = None
    once_ok = lambda: not args.once or not os.path.exists(args.once)
    while True:
        h = header(s)
        if h == "STATUS":
            send_header(s, "HAVEDATA" if have else "READY" if init or not args.needinit_every else "NEEDINIT")
        elif h == "INIT":
            _bead, n = struct.unpack("ii", recv_exact(s, 8))
            if n < 1:
                print("lj_client: INIT with an empty string", file=sys.stderr)
                sys.exit(3)
            recv_exact(s, n)
            init = True
        elif h == "POSDATA":
            hmat = np.frombuffer(recv_exact(s, 72), dtype=np.float64).reshape(3, 3)   # vectors as columns
            recv_exact(s, 72)
            (n,) = struct.unpack("i", recv_exact(s, 4))
            pos = np.frombuffer(recv_exact(s, 24 * n), dtype=np.float64).reshape(n, 3) * BOHR
            calls += 1
            fault = lambda name: getattr(args, name) == calls and once_ok()
            if fault("die_at") or fault("hang_at") or fault("nan_at") or fault("count_off_at"):
                if args.once:
                    open(args.once, "w").close()
                if args.die_at == calls:
                    os._exit(1)
                if args.hang_at == calls:
                    time.sleep(3600)
            e, f, w = (0.0, np.zeros((n, 3)), np.zeros((3, 3))) if args.zero else lj(hmat.T * BOHR, pos)
            if args.nan_at == calls:
                e = float("nan")
            if args.count_off_at == calls:
                f = f[:-1]
            result = (e, f, w)
            have = True
        elif h == "GETFORCE":
            e, f, w = result
            send_header(s, "FORCEREADY")
            s.sendall(struct.pack("d", e / HARTREE) + struct.pack("i", len(f)))
            s.sendall((f * (BOHR / HARTREE)).astype(np.float64).tobytes())
            s.sendall((w / HARTREE).astype(np.float64).tobytes() + struct.pack("i", 0))
            have, init = False, False
        elif h == "EXIT":
            return
        else:
            print("lj_client: unknown message", h, file=sys.stderr)
            sys.exit(2)


main()
