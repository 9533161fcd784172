"""One module per game's report section; importing one registers its section in :data:`..model.SECTIONS`."""
