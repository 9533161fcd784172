"""Summit Rush: the rules (``rules``), what a player sees (``observer``), drawing (``render``) and the env (``env``)."""
