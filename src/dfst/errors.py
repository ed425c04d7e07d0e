"""The one exception type the CLI turns into a one-line message and exit code 2.

It stands at the top of the package because every layer raises it and a user's script catches it
(`except dfst.errors.DfstError`); it imports nothing.
"""


class DfstError(Exception):
    """A problem with the user's input (a bad operand, a damaged file, an unwritable path)."""
