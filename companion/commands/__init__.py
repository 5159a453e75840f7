"""Sub-commands of the ``companion`` CLI. Each module has ``register(subparsers)``.

Modules import their heavy dependencies (OpenCV, onnxruntime, Qt) inside the command
function, so ``companion --help`` and the pure-Python commands start fast.
"""

#: Modules whose ``register`` adds a sub-command, in the order ``--help`` lists them.
COMMAND_MODULES: tuple[str, ...] = (
    "companion.commands.play",
    "vision.synth.command",
    "companion.commands.print_mat",
    "companion.commands.calibrate_camera",
    "companion.commands.enroll_deck",
    "companion.commands.train",
    "companion.commands.games",
    "companion.commands.export",
    "companion.commands.observe",
    "companion.commands.demo",
    "companion.commands.run",
    "companion.commands.replay",
    "companion.commands.calibrate_colors",
)
