"""Playing matches: the runner (duplicate deals, worker processes, a resumable cache), the games' fast loops,
Summit Rush's clock, the Ray backend and the race against the record."""
