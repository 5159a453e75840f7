"""Errors of the synthetic renderer: all are :class:`CompanionError`, so the CLI prints them
as one clean line."""

from __future__ import annotations

from companion.core.errors import CompanionError


class SynthError(CompanionError, ValueError):
    """Bad input to the renderer (a scene, an option)."""


class DeckError(SynthError):
    """A deck folder that is missing, incomplete or has unreadable card images."""


class SceneError(SynthError):
    """A table scene that cannot be rendered: unknown card id, bad placement."""
