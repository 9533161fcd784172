"""Partners with other conventions on purpose, for the benchmark's pools (:mod:`cardzoo.agents.pools`): one module
per game, each variant registered by name in :mod:`cardzoo.agents.registry`."""
