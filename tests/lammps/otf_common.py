"""Shared by the fix nep/train test scripts: the Stillinger-Weber teacher and number extraction."""

# Stillinger-Weber silicon (Stillinger & Weber, PRB 31, 5262 (1985)), in LAMMPS's sw format
SI_SW = "Si Si Si 2.1683 2.0951 1.80 21.0 1.20 -0.333333333333 7.049556277 0.6022245584 4.0 0.0 0.0\n"


def numbers(text):
    """Every token of `text` that parses as a number (quotes and '=' split tokens), in order."""
    out = []
    for tok in text.replace('"', " ").replace("=", " ").split():
        try:
            out.append(float(tok))
        except ValueError:
            pass
    return out
