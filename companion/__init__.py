"""Arcana Table Companion: watches a tarot-and-pyramids table and referees the game."""

__version__ = "0.1.0"
