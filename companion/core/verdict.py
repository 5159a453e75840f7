"""The answer to "may this move be made?": legal, or the list of rules it breaks."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: a stable id, the plain-words reason and where the rule comes from."""

    rule: str
    reason: str
    source: str  # e.g. "Zarcana 1996, Cups (legal/illegal)"

    def __str__(self) -> str:
        return f"{self.reason} [{self.source}]"


@dataclass(frozen=True, slots=True)
class Verdict:
    move: str
    violations: tuple[Violation, ...] = field(default_factory=tuple)

    @property
    def legal(self) -> bool:
        return not self.violations

    def __bool__(self) -> bool:
        return self.legal

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(v.rule for v in self.violations)

    def explain(self) -> str:
        if self.legal:
            return f"{self.move}: legal"
        lines = [f"{self.move}: illegal"]
        lines += [f"  - {v}" for v in self.violations]
        return "\n".join(lines)
