"""The main window's layout: video with banners on the left, the game on the right.

Only layout lives here; :mod:`companion.ui.controllers` fills the widgets and wires their
signals to the session (live) or to a recorded game (replay).
"""

from __future__ import annotations

import companion.ui.qtcompat  # noqa: F401  (before any Qt call: see its notes)
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMainWindow,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from companion.ui.widgets import Banner, ButtonRow, FinalScoring, MoveLog, ScoresPanel, VideoView

#: the title of the box of moves the camera cannot see (the controller adds whose turn it is)
MANUAL_TITLE = "Moves the camera cannot see"


class MainWindow(QMainWindow):
    """The companion's window. ``read_only`` (a replay) hides the controls that change the
    game; the log, the back/forward buttons and the scores stay."""

    def __init__(self, title: str = "Arcana Table Companion", *, read_only: bool = False) -> None:
        super().__init__()
        self.setWindowTitle(title)
        self.read_only = read_only
        self.resize(1400, 820)

        # ---- left: banners over the video, then the position navigation
        self.question = Banner()
        self.question.setObjectName("question")
        self.alert = Banner()
        self.alert.setObjectName("alert")
        self.video = VideoView()
        self.back_button = QPushButton("\u25c0 Back")
        self.back_button.setToolTip("show the position before the shown move (Left)")
        self.back_button.setShortcut(QKeySequence(Qt.Key.Key_Left))
        self.forward_button = QPushButton("Forward \u25b6")
        self.forward_button.setToolTip("show the position after the next move (Right)")
        self.forward_button.setShortcut(QKeySequence(Qt.Key.Key_Right))
        self.live_button = QPushButton("\u25cf Live" if not read_only else "Last move")
        self.live_button.setToolTip("back to the game as it stands (End)")
        self.live_button.setShortcut(QKeySequence(Qt.Key.Key_End))
        self.zoom_button = QPushButton("Zoom to the game")
        self.zoom_button.setCheckable(True)
        self.zoom_button.setChecked(True)
        self.zoom_button.setToolTip("show only the part of the table where the game is")
        self.position_label = QLabel("")
        self.position_label.setObjectName("position")
        nav = QHBoxLayout()
        for b in (self.back_button, self.forward_button, self.live_button, self.zoom_button):
            nav.addWidget(b)
        nav.addWidget(self.position_label, 1)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(4, 4, 4, 4)
        lv.addWidget(self.question)
        lv.addWidget(self.alert)
        lv.addWidget(self.video, 1)
        lv.addLayout(nav)

        # ---- right: the game
        self.scores = ScoresPanel()
        self.selection = QLabel("Click a pyramid to see its legal moves; click a card or "
                                "pyramid to correct its reading.")
        self.selection.setObjectName("selection")
        self.selection.setWordWrap(True)
        self.targets = QListWidget()
        self.targets.setObjectName("targets")
        self.targets.setMaximumHeight(110)
        self.manual = ButtonRow(columns=3)
        manual_box = QGroupBox(MANUAL_TITLE)
        mb = QVBoxLayout(manual_box)
        mb.addWidget(self.manual)
        self.manual_box = manual_box

        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setShortcut(QKeySequence(Qt.Key.Key_Space))
        self.correct_button = QPushButton("Correct reading\u2026")
        self.correct_button.setToolTip("fix how the camera read the selected card or pyramid")
        self.override_button = QPushButton("Accept anyway")
        self.override_button.setToolTip("accept the flagged change although the rules refuse it")
        self.undo_button = QPushButton("Take back move")
        self.undo_button.setToolTip("undo the last accepted move (a wrong reading was accepted)")
        self.end_button = QPushButton("End game")
        self.save_button = QPushButton("Save\u2026")
        self.save_button.setShortcut(QKeySequence.StandardKey.Save)
        controls = QGridLayout()
        for k, b in enumerate((self.pause_button, self.correct_button, self.override_button,
                               self.undo_button, self.end_button, self.save_button)):
            controls.addWidget(b, k // 3, k % 3)

        self.log = MoveLog()
        game = QWidget()
        gv = QVBoxLayout(game)
        gv.setContentsMargins(4, 4, 4, 4)
        gv.addWidget(self.scores, 3)
        gv.addWidget(self.selection)
        gv.addWidget(self.targets)
        gv.addWidget(manual_box)
        gv.addLayout(controls)
        gv.addWidget(QLabel("Move log"))
        gv.addWidget(self.log, 2)

        self.final = FinalScoring()
        self.tabs = QTabWidget()
        self.tabs.addTab(game, "Game")
        self.tabs.addTab(self.final, "Scoring and chart")
        self.tabs.setMinimumWidth(420)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.tabs)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([900, 500])
        self.setCentralWidget(split)
        self.statusBar().showMessage("starting\u2026")
        # kept at the status bar's right while it lasts: a passing status line would be
        # gone with the next move's
        self.picture = QLabel("")
        self.picture.setStyleSheet("color: #d46b00; font-weight: bold;")
        self.statusBar().addPermanentWidget(self.picture)

        if read_only:
            for w in (manual_box, self.pause_button, self.correct_button, self.override_button,
                      self.undo_button, self.end_button, self.save_button):
                w.hide()
            self.selection.setText("Click a pyramid to see the moves it had in the shown position.")

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(text)

    def show_picture_warning(self, text: str | None) -> None:
        """A standing warning about the camera's picture (None: the picture is fine)."""
        self.picture.setText(text or "")
        self.picture.setToolTip(text or "")


__all__ = ["MainWindow"]
