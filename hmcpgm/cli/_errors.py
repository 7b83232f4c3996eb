"""The command line's own error: a one-line message for the user, printed without a traceback."""

__all__ = ["UserError"]


class UserError(Exception):
    """A mistake in the command line's arguments or files, reported in one line."""
