#!/usr/bin/env python3
"""An ASE calculator as the i-PI client of pair_style ipi (ASE's own SocketClient), for the tests.
Usage: ase_client.py NAME XYZ [emt|lj]   connects to /tmp/ipi_NAME; XYZ gives the species (and the
starting positions: the server sends the positions of every call)."""
import sys

from ase.calculators.emt import EMT
from ase.calculators.lj import LennardJones
from ase.calculators.socketio import SocketClient
from ase.io import read

name, xyz = sys.argv[1], sys.argv[2]
kind = sys.argv[3] if len(sys.argv) > 3 else "emt"
atoms = read(xyz)
atoms.calc = EMT() if kind == "emt" else LennardJones(epsilon=0.0104, sigma=3.4, rc=8.5)
SocketClient(unixsocket=name).run(atoms, use_stress=True)
