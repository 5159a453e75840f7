"""Pyramids (minions), their colours, sizes and poses, and lattice cells."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from companion.core.errors import NotationError

Cell = tuple[int, int]


class Color(enum.Enum):
    """The ten pyramid colours of the table contract."""

    RED = "red"
    ORANGE = "orange"
    YELLOW = "yellow"
    GREEN = "green"
    BLUE = "blue"
    PURPLE = "purple"
    CYAN = "cyan"
    BLACK = "black"
    WHITE = "white"
    CLEAR = "clear"

    #: hashed by identity, in C: Enum's own hash (of the name) is Python code, paid in every
    #: set and dict look-up of the Zarcana move generation; a member is its only equal
    __hash__ = object.__hash__

    @classmethod
    def parse(cls, text: str) -> "Color":
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(c.value for c in cls)
            raise NotationError(f"unknown colour {text!r}: expected one of {names}", text) from None


class Pose(enum.Enum):
    """Upright, or lying with the apex toward a compass direction of the table frame.

    North is -y (toward markers 0 and 1), east is +x: see shared/spec/table.md.
    """

    UP = "U"
    N = "N"
    E = "E"
    S = "S"
    W = "W"

    #: hashed by identity, in C: Enum's own hash (of the name) is Python code, paid in every
    #: set and dict look-up of the Zarcana move generation; a member is its only equal
    __hash__ = object.__hash__

    @property
    def upright(self) -> bool:
        return self is Pose.UP

    @property
    def delta(self) -> Cell:
        return _DELTAS[self]

    @property
    def degrees(self) -> float | None:
        """Pointing angle of the table frame (0 = east, 90 = south), None when upright."""
        return _DEGREES[self]

    @classmethod
    def from_degrees(cls, deg: float | None) -> "Pose":
        """Snap a pointing angle to the nearest lattice direction (None means upright)."""
        if deg is None:
            return cls.UP
        idx = int(((deg % 360.0) + 45.0) // 90.0) % 4
        return (Pose.E, Pose.S, Pose.W, Pose.N)[idx]


_DELTAS: dict[Pose, Cell] = {Pose.UP: (0, 0), Pose.N: (0, -1), Pose.E: (1, 0),
                             Pose.S: (0, 1), Pose.W: (-1, 0)}
_DEGREES: dict[Pose, float | None] = {Pose.UP: None, Pose.E: 0.0, Pose.S: 90.0,
                                      Pose.W: 180.0, Pose.N: 270.0}
DIRECTIONS: tuple[Pose, ...] = (Pose.N, Pose.E, Pose.S, Pose.W)

SIZE_NAMES = {1: "small", 2: "medium", 3: "large"}


def neighbours(cell: Cell) -> tuple[Cell, Cell, Cell, Cell]:
    i, j = cell
    return ((i, j - 1), (i + 1, j), (i, j + 1), (i - 1, j))


def step(cell: Cell, pose: Pose, distance: int = 1) -> Cell:
    di, dj = pose.delta
    return (cell[0] + di * distance, cell[1] + dj * distance)


def format_cell(cell: Cell) -> str:
    return f"{cell[0]},{cell[1]}"


_CELL_RE = re.compile(r"^(-?\d+),(-?\d+)$")


def parse_cell(text: str) -> Cell:
    m = _CELL_RE.match(text.strip())
    if not m:
        raise NotationError(f"bad cell {text!r}: expected 'i,j' such as '1,2' or '-1,0'", text)
    return (int(m.group(1)), int(m.group(2)))


@dataclass(frozen=True, slots=True)
class Pyramid:
    """One pyramid as the table shows it: whose it is, how big, how it lies."""

    color: Color
    size: int  # pips: 1 small, 2 medium, 3 large
    pose: Pose

    def __post_init__(self) -> None:
        if self.size not in (1, 2, 3):
            raise ValueError(f"pyramid size must be 1, 2 or 3 pips, got {self.size!r}")

    def __str__(self) -> str:
        return f"{self.color.value}{self.size}{self.pose.value}"

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.color.value, self.size, self.pose.value)

    def __lt__(self, other: "Pyramid") -> bool:
        return self.key < other.key

    def with_pose(self, pose: Pose) -> "Pyramid":
        return Pyramid(self.color, self.size, pose)

    def with_size(self, size: int) -> "Pyramid":
        return Pyramid(self.color, size, self.pose)

    def describe(self) -> str:
        lie = "upright" if self.pose.upright else f"lying, pointing {self.pose.name}"
        return f"{self.color.value} {SIZE_NAMES[self.size]} ({lie})"


_PYR_RE = re.compile(r"^([a-z]+)([123])([UNESW])$")


def parse_pyramid(text: str) -> Pyramid:
    m = _PYR_RE.match(text.strip())
    if not m:
        raise NotationError(
            f"bad pyramid {text!r}: expected colour, pips and pose such as 'red2U' or 'blue1E'",
            text,
        )
    return Pyramid(Color.parse(m.group(1)), int(m.group(2)), Pose(m.group(3)))


@dataclass(frozen=True, slots=True)
class Minion:
    """A pyramid at a lattice cell: how moves name the piece that acts or is hit.

    Identical pyramids in one cell are interchangeable, so this names any of them.
    """

    cell: Cell
    pyramid: Pyramid

    def __str__(self) -> str:
        return f"{self.pyramid}@{format_cell(self.cell)}"

    @property
    def key(self) -> tuple[Cell, tuple[str, int, str]]:
        return (self.cell, self.pyramid.key)

    def __lt__(self, other: "Minion") -> bool:
        return self.key < other.key

    @property
    def color(self) -> Color:
        return self.pyramid.color

    @property
    def size(self) -> int:
        return self.pyramid.size

    @property
    def pose(self) -> Pose:
        return self.pyramid.pose

    def target(self) -> Cell:
        """The space this minion targets: its own when upright, else the one it points at."""
        return step(self.cell, self.pyramid.pose)


def parse_minion(text: str) -> Minion:
    head, sep, tail = text.strip().partition("@")
    if not sep:
        raise NotationError(f"bad minion {text!r}: expected pyramid@cell such as 'red2U@1,1'", text)
    return Minion(parse_cell(tail), parse_pyramid(head))
