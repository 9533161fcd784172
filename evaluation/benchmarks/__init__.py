"""Speed measurements: environment steps (``cardzoo bench``), the batched engines and trainer, the trainers'
throughput and the runner's games per second. Results in ``evaluation/results/``.
"""
