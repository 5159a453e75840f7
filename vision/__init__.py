"""Vision side of the companion: the synthetic scene renderer (``vision.synth``) and,
later, the recognisers that read real camera frames."""
