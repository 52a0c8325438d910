"""codefu_launcher."""

__version__ = "0.1.0"
