"""Playing with the agents: a person's seat in the terminal (``cardzoo play GAME --agents human learned``) and in
the browser (``cardzoo serve``), and the games people play saved as records.

- ``views``: what one seat sees, built from its observations only, as JSON (browser) and text (terminal).
- ``table``: a game with people and agents at it.
- ``terminal``: the terminal seat (typed moves, through a pipe too).
- ``records``: the JSON-lines file of played games, their replay and their win rates.
- ``server``: the local web app (the ``web`` extra: FastAPI and uvicorn), with its page in ``static/``.
"""
