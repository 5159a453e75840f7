"""The window's widgets. They lay out and paint what they are given and emit signals for
clicks; they never talk to the session (the controllers do)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import companion.ui.qtcompat  # noqa: F401  (before any Qt call: see its notes)
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QImage,
    QMouseEvent,
    QPainter,
    QPainterPath,
    QPaintEvent,
    QPen,
    QPolygonF,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from companion.core.pieces import format_cell
from companion.ui.gamemodel import Position, ScoreRow
from companion.ui.overlay import Overlay, Shape

# ------------------------------------------------------------------------ palette ---

#: Player colours as the window draws them (the spec's colour names).
PLAYER_COLORS: dict[str, QColor] = {
    "red": QColor(230, 40, 40), "orange": QColor(255, 140, 0), "yellow": QColor(240, 220, 0),
    "green": QColor(30, 190, 60), "blue": QColor(40, 110, 255), "purple": QColor(160, 60, 220),
    "cyan": QColor(0, 210, 230), "black": QColor(20, 20, 20), "white": QColor(245, 245, 245),
    "clear": QColor(200, 200, 200),
}

#: The overlay's card outline colour: a magenta no card art or pyramid shares, so a glance
#: (or a test) tells the overlay from the picture.
CARD_OUTLINE = QColor(255, 0, 255)
ILLEGAL = QColor(235, 20, 20)

#: role -> (colour, pen width, dashed, fill alpha)
ROLE_STYLE: dict[str, tuple[QColor, float, bool, int]] = {
    "lattice": (QColor(255, 255, 255), 1.2, True, 0),
    "wasteland": (QColor(200, 200, 120), 1.0, True, 0),
    "cell-label": (QColor(255, 255, 255), 1.0, False, 0),
    "card": (CARD_OUTLINE, 3.0, False, 0),
    "card-fixed": (QColor(255, 170, 0), 3.0, False, 0),
    "card-selected": (QColor(0, 255, 255), 4.0, False, 40),
    "card-label": (QColor(255, 255, 255), 1.0, False, 0),
    "pyramid": (QColor(255, 255, 255), 2.0, False, 110),
    "pyramid-selected": (QColor(255, 255, 0), 4.0, False, 160),
    "pyramid-label": (QColor(255, 255, 255), 1.0, False, 0),
    "target": (QColor(255, 255, 255), 2.0, True, 0),
    "move-cell": (QColor(255, 255, 0), 2.0, True, 0),
    "illegal": (ILLEGAL, 5.0, False, 50),
    "illegal-label": (ILLEGAL, 1.0, False, 0),
}

#: Fill of the letter discs that mark where a selected pyramid can act.
MOVE_COLORS: dict[str, QColor] = {
    "move": QColor(40, 200, 255), "attack": QColor(255, 60, 60), "build": QColor(255, 200, 40),
    "grow": QColor(60, 220, 90), "clone": QColor(120, 240, 160), "place": QColor(200, 160, 255),
    "transport": QColor(180, 120, 255), "convert": QColor(255, 120, 200),
    "turn": QColor(240, 240, 240), "other": QColor(180, 180, 180),
}


def player_color(name: str | None) -> QColor:
    return QColor(PLAYER_COLORS.get(name or "", QColor(220, 220, 220)))


def _poly(points: Sequence[tuple[float, float]]) -> QPolygonF:
    return QPolygonF([QPointF(x, y) for x, y in points])


# ------------------------------------------------------------------------- video ---

class VideoView(QWidget):
    """The latest frame, scaled to fit, with the overlay on top.

    ``clicked(x, y)`` gives the click in image pixels. A message (camera lost, paused) is
    drawn across the picture.
    """

    clicked = Signal(float, float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("video")
        self.setMinimumSize(QSize(480, 300))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self._image: QImage | None = None
        self._logical: QSize | None = None     # the size overlay pixels refer to
        self._view: QRectF | None = None       # the region shown (frame pixels)
        self._overlay: Overlay = Overlay()
        self._message: str | None = None
        self._caption: str | None = None

    # -- what to show
    def set_frame(self, image: QImage | None, logical_size: QSize | None = None) -> None:
        """Show ``image``; ``logical_size``: the size of the frame the overlay's pixels refer
        to, when the image shown is a smaller copy (a stored keyframe)."""
        self._image = image
        self._logical = logical_size
        self.update()

    def frame(self) -> QImage | None:
        return self._image

    def set_overlay(self, overlay: Overlay) -> None:
        self._overlay = overlay
        self.update()

    def overlay(self) -> Overlay:
        return self._overlay

    def set_message(self, text: str | None) -> None:
        self._message = text
        self.update()

    def message(self) -> str | None:
        return self._message

    def set_caption(self, text: str | None) -> None:
        """A small line at the top of the picture (which position is shown)."""
        self._caption = text
        self.update()

    def set_view(self, region: QRectF | None) -> None:
        """Show only this region of the frame (frame pixels), e.g. the play area; None: all."""
        self._view = region
        self.update()

    # -- geometry
    def _size(self) -> tuple[int, int]:
        assert self._image is not None
        if self._logical is not None and self._logical.width() > 0:
            return self._logical.width(), self._logical.height()
        return self._image.width(), self._image.height()

    def source_rect(self) -> QRectF:
        """The part of the frame shown, in frame (overlay) pixels."""
        iw, ih = self._size()
        whole = QRectF(0, 0, iw, ih)
        if self._view is None:
            return whole
        r = self._view.intersected(whole)
        return r if r.width() > 8 and r.height() > 8 else whole

    def image_rect(self) -> QRectF:
        """Where the shown part of the frame lands in the widget (aspect kept, centred)."""
        if self._image is None or self._image.isNull():
            return QRectF(0, 0, self.width(), self.height())
        src = self.source_rect()
        s = min(self.width() / src.width(), self.height() / src.height())
        w, h = src.width() * s, src.height() * s
        return QRectF((self.width() - w) / 2.0, (self.height() - h) / 2.0, w, h)

    def scale(self) -> float:
        """Widget pixels per frame (overlay) pixel."""
        if self._image is None or self._image.isNull():
            return 1.0
        return self.image_rect().width() / self.source_rect().width()

    def to_widget(self, x: float, y: float) -> QPointF:
        r, src, s = self.image_rect(), self.source_rect(), self.scale()
        return QPointF(r.x() + (x - src.x()) * s, r.y() + (y - src.y()) * s)

    def to_image(self, x: float, y: float) -> tuple[float, float]:
        r, src, s = self.image_rect(), self.source_rect(), self.scale()
        return ((x - r.x()) / s + src.x(), (y - r.y()) / s + src.y())

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt's name)
        if self._image is not None and event.button() == Qt.MouseButton.LeftButton:
            p = event.position()
            if self.image_rect().contains(p):
                self.clicked.emit(*self.to_image(p.x(), p.y()))
        super().mousePressEvent(event)

    # -- painting
    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor(25, 25, 28))
        if self._image is not None and not self._image.isNull():
            painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, True)
            r, src, s = self.image_rect(), self.source_rect(), self.scale()
            k = self._image.width() / self._size()[0]   # a stored keyframe may be smaller
            painter.drawImage(r, self._image, QRectF(src.x() * k, src.y() * k,
                                                     src.width() * k, src.height() * k))
            painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            painter.save()
            painter.setClipRect(r)
            painter.translate(r.x() - src.x() * s, r.y() - src.y() * s)
            painter.scale(s, s)
            self._paint_overlay(painter, 1.0 / s)
            painter.restore()
        else:
            painter.setPen(QColor(200, 200, 200))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "waiting for frames...")
        if self._caption:
            painter.setPen(QColor(255, 255, 255))
            f = QFont(painter.font())
            f.setBold(True)
            painter.setFont(f)
            box = QRectF(8, 6, self.width() - 16, 24)
            painter.fillRect(box, QColor(0, 0, 0, 150))
            painter.drawText(box.adjusted(6, 0, -6, 0), Qt.AlignmentFlag.AlignVCenter, self._caption)
        if self._message:
            f = QFont(painter.font())
            f.setPointSizeF(max(12.0, f.pointSizeF() * 1.6))
            f.setBold(True)
            painter.setFont(f)
            box = QRectF(20, self.height() / 2.0 - 40, self.width() - 40, 80)
            painter.fillRect(box, QColor(120, 0, 0, 200))
            painter.setPen(QColor(255, 255, 255))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                             self._message)
        painter.end()

    def _paint_overlay(self, painter: QPainter, px: float) -> None:
        """Draw the shapes in image pixels; ``px`` is one screen pixel in image units."""
        font = QFont(painter.font())
        font.setPointSizeF(max(6.0, 9.0 * px))
        font.setBold(True)
        painter.setFont(font)
        for shape in self._overlay.shapes:
            self._paint_shape(painter, shape, px)

    def _paint_shape(self, painter: QPainter, shape: Shape, px: float) -> None:
        colour, width, dashed, alpha = ROLE_STYLE.get(
            shape.role, (QColor(255, 255, 255), 2.0, False, 0))
        if shape.player is not None and shape.role in ("pyramid", "target"):
            colour = player_color(shape.player)
        pen = QPen(colour, width * px)
        if dashed:
            pen.setStyle(Qt.PenStyle.DashLine)
        painter.setPen(pen)
        if shape.kind == "polygon":
            fill = QColor(colour)
            fill.setAlpha(alpha)
            painter.setBrush(QBrush(fill) if alpha else Qt.BrushStyle.NoBrush)
            if shape.role == "pyramid":
                # a dark rim so a white or yellow pyramid stays visible on pale cards
                painter.setPen(QPen(QColor(0, 0, 0), (width + 2.0) * px))
                painter.drawPolygon(_poly(shape.points))
                painter.setPen(pen)
            painter.drawPolygon(_poly(shape.points))
        elif shape.kind == "polyline":
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPolyline(_poly(shape.points))
        elif shape.kind == "line":
            painter.drawLine(QPointF(*shape.points[0]), QPointF(*shape.points[1]))
        elif shape.kind == "circle":
            c = QPointF(*shape.points[0])
            r = shape.radius * px
            if shape.role.startswith("move-"):
                fill = MOVE_COLORS.get(shape.role[5:], QColor(200, 200, 200))
                painter.setBrush(QBrush(fill))
                painter.setPen(QPen(QColor(0, 0, 0), 1.5 * px))
                painter.drawEllipse(c, r, r)
                painter.setPen(QColor(0, 0, 0))
                painter.drawText(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r),
                                 Qt.AlignmentFlag.AlignCenter, shape.text)
            else:
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawEllipse(c, r, r)
        elif shape.kind == "text":
            self._paint_label(painter, shape, colour, px)

    def _paint_label(self, painter: QPainter, shape: Shape, colour: QColor, px: float) -> None:
        x, y = shape.points[0]
        fm = painter.fontMetrics()
        w = fm.horizontalAdvance(shape.text) + 8 * px
        h = fm.height() + 2 * px
        box = QRectF(x - w / 2.0, y - h / 2.0, w, h)
        if shape.role == "cell-label":
            painter.setPen(QColor(255, 255, 255, 200))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, shape.text)
            return
        bg = QColor(0, 0, 0, 170)
        if shape.role == "illegal-label":
            bg, colour = QColor(150, 0, 0, 220), QColor(255, 255, 255)
        elif shape.role == "pyramid-label" and shape.player is not None:
            bg = player_color(shape.player)
            bg.setAlpha(200)
            colour = QColor(0, 0, 0) if bg.lightness() > 140 else QColor(255, 255, 255)
        path = QPainterPath()
        path.addRoundedRect(box, 3 * px, 3 * px)
        painter.fillPath(path, bg)
        painter.setPen(colour)
        painter.drawText(box, Qt.AlignmentFlag.AlignCenter, shape.text)


# ----------------------------------------------------------------------- panels ---

class ScoresPanel(QWidget):
    """Turn and round, whose turn, scores with the territories that make them, stashes,
    draw pile and whether the end may be declared."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.headline = QLabel("waiting for the dealt board")
        self.headline.setObjectName("headline")
        f = self.headline.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.2)
        self.headline.setFont(f)
        self.headline.setWordWrap(True)
        self.pending = QLabel("")
        self.pending.setWordWrap(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("scores")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["player / territory", "points", "stash S/M/L, hand"])
        self.tree.setRootIsDecorated(True)
        self.tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tree.setMinimumHeight(120)
        self.piles = QLabel("")
        self.piles.setObjectName("piles")
        self.piles.setWordWrap(True)
        self.end = QLabel("")
        self.end.setObjectName("end")
        self.end.setWordWrap(True)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        for w in (self.headline, self.pending, self.tree, self.piles, self.end):
            lay.addWidget(w)

    def show_position(self, pos: Position | None, *, note: str | None = None) -> None:
        self.tree.clear()
        if pos is None:
            self.headline.setText(note or "waiting for the dealt board")
            self.pending.setText("")
            self.piles.setText("")
            self.end.setText("")
            return
        self.headline.setText(pos.headline() + (f"  [{note}]" if note else ""))
        self.pending.setText(pos.pending or "")
        self.pending.setVisible(bool(pos.pending))
        for line in pos.players:
            s, m, l_ = line.stash
            name = ("\u25b6 " if line.to_move else "") + line.color + (
                " (invisible)" if line.ghost else "")
            item = QTreeWidgetItem([name, str(line.score), f"{s}/{m}/{l_}, hand {line.hand}"])
            item.setForeground(0, QBrush(player_color(line.color).darker(110)))
            bold = item.font(0)
            bold.setBold(True)
            item.setFont(0, bold)
            item.setFont(1, bold)
            for t in line.territories:
                item.addChild(QTreeWidgetItem([f"{format_cell(t.cell)}  {t.card}",
                                               f"{t.points:+d}", ""]))
            if not line.territories:
                item.addChild(QTreeWidgetItem(["no territory", "", ""]))
            self.tree.addTopLevelItem(item)
            item.setExpanded(True)
        top = pos.discard_top or "none"
        self.piles.setText(f"draw pile {pos.draw_pile}, discard pile {pos.discard_pile} "
                           f"(top: {top}), rebuilt {pos.reshuffles}x")
        self.end.setText(("\u2714 " if pos.may_declare_end else "") + pos.end_text)

    def score_text(self) -> str:
        """The scores as the panel shows them: ``red 9, blue 11`` (for logs and tests)."""
        parts = []
        for k in range(self.tree.topLevelItemCount()):
            it = self.tree.topLevelItem(k)
            if it is None:
                continue
            parts.append(f"{it.text(0).lstrip(chr(0x25b6)).strip()} {it.text(1)}")
        return ", ".join(parts)


class MoveLog(QListWidget):
    """The accepted moves in the engine's notation; ``picked(k)``: the user chose position
    ``k`` (0 = before the first move)."""

    picked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("movelog")
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.itemClicked.connect(lambda item: self.picked.emit(self.row(item)))
        # the arrow keys, Home, End and Page keys move the highlight: the position shown
        # follows it (it stayed where a click left it). A click says so itself, above.
        self.currentRowChanged.connect(self._moved)
        self._lines: list[str] = []

    def _moved(self, row: int) -> None:
        if row >= 0 and QApplication.mouseButtons() == Qt.MouseButton.NoButton:
            self.picked.emit(row)

    def set_moves(self, lines: Sequence[str], current: int | None = None,
                  start: str = "start of the game") -> None:
        lines = [start, *lines]
        row = len(lines) - 1 if current is None else current
        # (signals held the whole time: clearing and refilling move the current row too,
        # and a pick from here would redraw the log while it is being filled)
        self.blockSignals(True)
        try:
            if lines != self._lines:
                self.clear()
                for k, text in enumerate(lines):
                    self.addItem(QListWidgetItem(text if k == 0 else f"{k}. {text}"))
                self._lines = list(lines)
            self.setCurrentRow(row)
        finally:
            self.blockSignals(False)
        if self.item(row) is not None:
            self.scrollToItem(self.item(row))

    def moves(self) -> list[str]:
        return list(self._lines[1:])


class Banner(QFrame):
    """A message over the video with optional choice buttons; never blocks the window.

    ``chosen(k)``: choice button ``k`` was clicked; ``dismissed()``: the close button.
    """

    chosen = Signal(int)
    dismissed = Signal()

    _ALARM = "background:#ffd6d6;color:#8a0000;border:2px solid #e00000;"
    STYLES = {
        "question": "background:#fff1c2;color:#3a2c00;border:2px solid #e0a800;",
        "illegal": _ALARM,
        "not_recorded": _ALARM,
        "info": "background:#dff0ff;color:#00335a;border:1px solid #5a9bd5;",
        "over": "background:#e4ffe0;color:#145a00;border:2px solid #3ca000;",
    }

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = "info"
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._buttons = QHBoxLayout()
        close = QPushButton("\u2715")
        close.setFlat(True)
        close.setFixedWidth(28)
        close.setToolTip("hide this message")
        close.clicked.connect(self._dismiss)
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.addLayout(top)
        lay.addLayout(self._buttons)
        self.choice_buttons: list[QPushButton] = []
        self.hide()

    def show_message(self, kind: str, text: str, choices: Sequence[str] = ()) -> None:
        self.kind = kind
        self.setStyleSheet("QFrame{" + self.STYLES.get(kind, self.STYLES["info"]) + "}"
                           "QLabel{border:none;background:transparent;}")
        self.label.setText(text)
        for b in self.choice_buttons:
            self._buttons.removeWidget(b)
            b.deleteLater()
        self.choice_buttons = []
        for k, choice in enumerate(choices):
            b = QPushButton(choice)
            b.clicked.connect(lambda _=False, k=k: self.chosen.emit(k))
            self._buttons.addWidget(b)
            self.choice_buttons.append(b)
        self.show()

    def text(self) -> str:
        return self.label.text()

    def clear(self) -> None:
        self.hide()
        self.label.setText("")

    def _dismiss(self) -> None:
        self.clear()
        self.dismissed.emit()


class ButtonRow(QWidget):
    """A wrapping grid of buttons, one per option text; ``chosen(text)`` on a click."""

    chosen = Signal(str)

    def __init__(self, columns: int = 3, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.columns = columns
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self.buttons: list[QPushButton] = []
        self._options: list[str] = []

    def set_options(self, options: Sequence[str], labels: Sequence[str] | None = None) -> None:
        if list(options) == self._options:
            return
        for b in self.buttons:
            self._grid.removeWidget(b)
            b.deleteLater()
        self.buttons = []
        self._options = list(options)
        for k, opt in enumerate(options):
            b = QPushButton(labels[k] if labels is not None else opt)
            b.setToolTip(opt)
            b.clicked.connect(lambda _=False, o=opt: self.chosen.emit(o))
            self._grid.addWidget(b, k // self.columns, k % self.columns)
            self.buttons.append(b)

    def options(self) -> list[str]:
        return list(self._options)


# ------------------------------------------------------------------------ chart ---

class ScoreChart(QWidget):
    """Each player's score after every move, drawn with QPainter."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chart")
        self.setMinimumSize(QSize(240, 160))
        self._series: dict[str, list[int]] = {}
        self._marker: int | None = None

    def set_series(self, series: Mapping[str, Sequence[int]], marker: int | None = None) -> None:
        self._series = {k: list(v) for k, v in series.items()}
        self._marker = marker
        self.update()

    def series(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self._series.items()}

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt's name)
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.fillRect(self.rect(), QColor(252, 252, 250))
        fm = p.fontMetrics()
        left, right, top, bottom = 34.0, 70.0, 12.0, 26.0
        plot = QRectF(left, top, max(10.0, self.width() - left - right),
                      max(10.0, self.height() - top - bottom))
        values = [v for vs in self._series.values() for v in vs]
        n = max((len(v) for v in self._series.values()), default=0)
        lo, hi = min(values + [0]), max(values + [1])
        if hi == lo:
            hi = lo + 1
        p.setPen(QPen(QColor(120, 120, 120), 1))
        p.drawRect(plot)

        def xy(k: int, v: float) -> QPointF:
            x = plot.left() + (plot.width() * k / max(1, n - 1))
            y = plot.bottom() - plot.height() * (v - lo) / (hi - lo)
            return QPointF(x, y)

        # horizontal grid and score ticks
        step = max(1, round((hi - lo) / 5))
        v = lo - lo % step if lo >= 0 else lo
        p.setPen(QPen(QColor(215, 215, 215), 1, Qt.PenStyle.DotLine))
        while v <= hi:
            y = xy(0, v).y()
            p.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            p.setPen(QColor(90, 90, 90))
            p.drawText(QRectF(0, y - 8, left - 4, 16),
                       Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(v))
            p.setPen(QPen(QColor(215, 215, 215), 1, Qt.PenStyle.DotLine))
            v += step
        p.setPen(QColor(90, 90, 90))
        p.drawText(QRectF(plot.left(), plot.bottom() + 4, plot.width(), 18),
                   Qt.AlignmentFlag.AlignCenter, f"move (0 to {max(0, n - 1)})")
        if self._marker is not None and n > 1:
            x = xy(self._marker, lo).x()
            p.setPen(QPen(QColor(160, 160, 160), 1, Qt.PenStyle.DashLine))
            p.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        for name, vs in self._series.items():
            if not vs:
                continue
            colour = player_color(name)
            p.setPen(QPen(colour, 2.5))
            if len(vs) == 1:
                p.drawEllipse(xy(0, vs[0]), 3, 3)
            else:
                p.drawPolyline(QPolygonF([xy(k, v) for k, v in enumerate(vs)]))
            end = xy(len(vs) - 1, vs[-1])
            p.drawText(QPointF(plot.right() + 6, end.y() + fm.ascent() / 2.0 - 1),
                       f"{name} {vs[-1]}")
        p.end()


class FinalScoring(QWidget):
    """The final scoring card by card, the winners and the chart of the game."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.winners = QLabel("The game is not over yet.")
        self.winners.setObjectName("winners")
        f = self.winners.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.2)
        self.winners.setFont(f)
        self.winners.setWordWrap(True)
        self.table = QTableWidget(0, 5)
        self.table.setObjectName("final")
        self.table.setHorizontalHeaderLabels(["player", "cell", "card", "points", "total"])
        header = self.table.horizontalHeader()
        for col in range(5):
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Stretch if col == 2
                                        else QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.chart = ScoreChart()
        lay = QVBoxLayout(self)
        lay.addWidget(self.winners)
        lay.addWidget(self.table, 1)
        lay.addWidget(QLabel("Scores over the game"))
        lay.addWidget(self.chart, 1)

    def show_scoring(self, rows: Sequence[ScoreRow], totals: Mapping[str, int],
                     winners: Sequence[str], over: bool) -> None:
        self.table.setRowCount(0)
        for r in rows:
            k = self.table.rowCount()
            self.table.insertRow(k)
            cells = [r.player, format_cell(r.cell), r.name, f"{r.points:+d}", str(r.running)]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == 0:
                    item.setForeground(QBrush(player_color(r.player).darker(110)))
                self.table.setItem(k, col, item)
        board = ", ".join(f"{p} {v}" for p, v in totals.items())
        if over:
            lead = "Winner" if len(winners) == 1 else "Winners"
            self.winners.setText(f"{lead}: {', '.join(winners)}.  Final scores: {board}")
        else:
            self.winners.setText(f"Scores so far: {board}")

    def rows(self) -> list[list[str]]:
        def text(r: int, c: int) -> str:
            item = self.table.item(r, c)
            return item.text() if item is not None else ""

        return [[text(r, c) for c in range(self.table.columnCount())]
                for r in range(self.table.rowCount())]


# ------------------------------------------------------------------- correction ---

class CorrectionDialog(QDialog):
    """Pick the right reading of a card or a pyramid. Non-blocking: ``open()`` it and read
    :meth:`values` once it is accepted."""

    POSES = ("U", "N", "E", "S", "W")

    def __init__(self, what: str, label: str, *, card_ids: Sequence[str] = (),
                 card: str | None = None, colors: Sequence[str] = (),
                 pyramid: tuple[str, int, str] | None = None, cell: str = "",
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what
        self.setWindowTitle(f"Correct the {what} read as {label}")
        form = QFormLayout()
        self.card_box: QComboBox | None = None
        self.color_box: QComboBox | None = None
        self.size_box: QSpinBox | None = None
        self.pose_box: QComboBox | None = None
        self.cell_edit: QLineEdit | None = None
        self.absent: QCheckBox | None = None
        if what == "card":
            self.card_box = QComboBox()
            self.card_box.setEditable(True)
            self.card_box.addItems(list(card_ids))
            if card is not None:
                self.card_box.setCurrentText(card)
            form.addRow("the card is", self.card_box)
        else:
            colour, size, pose = pyramid or ("red", 1, "U")
            self.color_box = QComboBox()
            self.color_box.addItems(list(colors) or list(PLAYER_COLORS))
            self.color_box.setCurrentText(colour)
            self.size_box = QSpinBox()
            self.size_box.setRange(1, 3)
            self.size_box.setValue(size)
            self.pose_box = QComboBox()
            self.pose_box.addItems(list(self.POSES))
            self.pose_box.setCurrentText(pose)
            self.cell_edit = QLineEdit(cell)
            self.cell_edit.setPlaceholderText("i,j (where it stands)")
            self.absent = QCheckBox("there is no pyramid there (a false sighting)")
            form.addRow("colour", self.color_box)
            form.addRow("size (pips)", self.size_box)
            form.addRow("pose (U upright, or pointing N/E/S/W)", self.pose_box)
            form.addRow("cell", self.cell_edit)
            form.addRow(self.absent)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(buttons)

    def values(self) -> dict[str, object]:
        if self.card_box is not None:
            return {"card": self.card_box.currentText().strip()}
        assert self.color_box is not None and self.size_box is not None
        assert self.pose_box is not None and self.cell_edit is not None and self.absent is not None
        return {"absent": self.absent.isChecked(), "color": self.color_box.currentText(),
                "size": self.size_box.value(), "pose": self.pose_box.currentText(),
                "cell": self.cell_edit.text().strip()}


__all__ = ["Banner", "ButtonRow", "CARD_OUTLINE", "CorrectionDialog", "FinalScoring",
           "ILLEGAL", "MoveLog", "PLAYER_COLORS", "ScoreChart", "ScoresPanel", "VideoView",
           "player_color"]
