"""codefu_trainer."""

__version__ = "0.1.0"
