"""The small typed model every game and the vision side share: cards, pyramids, errors."""
