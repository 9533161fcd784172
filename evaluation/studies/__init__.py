"""Offline studies whose results are committed in ``evaluation/results/`` and read by the report: the oracles'
ceilings, the search agents on the report's deals, and distilled policies against their teachers.

Each is a command: ``python -m cardzoo.evaluation.studies.<name> --help``.
"""
