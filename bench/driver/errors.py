"""The one exception the command line turns into a one-line message and exit code 2."""


class BadInput(Exception):
    """Bad input from the user: unknown names, unusable directories, too little space."""
