"""nep-report: one self-contained HTML page (plus PNG figures) from a NEP training folder.

Readers (one per file format), metrics, figures and the page are separate modules; __main__ ties
them together. See docs/nep_report.md.
"""
