"""The one exception type the CLI turns into a one-line message and exit code 2."""


class DfstError(Exception):
    """A problem with the user's input (a bad operand, a damaged file, an unwritable path)."""
