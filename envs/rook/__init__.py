"""Rook for Two: the rules (``rules``), what a player sees (``observer``), drawing (``render``), the env (``env``)."""
