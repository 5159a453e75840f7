"""Detectors: the learned card finder and its table view."""
