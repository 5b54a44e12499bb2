class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2. Never a traceback."""
