"""Fathom: self-hosted knowledge-base Q&A, visual workflows and tool-using agents."""

__version__ = "0.1.0"
