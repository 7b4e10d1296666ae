"""lintloader: find and fix code that throws away a PyTorch DataLoader's worker pool."""

__version__ = "0.1.0"
