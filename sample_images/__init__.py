"""The bundled sample tables (data only): found with ``importlib.resources`` so that
``companion demo`` works from a checkout, an editable install and an installed wheel alike."""
