"""The package's version (setup.cfg says the same)."""
__version__ = "0.1.0"
