"""One small module per dialect: the constructs only that dialect writes, lowered into the
shared algebra, and (in :mod:`.defaults`) the report policy each dialect implies."""
