"""Exit codes and the exceptions that carry them.

Every user-caused failure is raised as a DoctorError (or mapped to one by
``describe_exception``) so the CLI can print one line and exit with the
documented code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2
EXIT_UNREACHABLE = 3
EXIT_AUTH = 4

EXIT_CODES = {
    EXIT_OK: "ok: nothing failed",
    EXIT_PROBLEMS: "problems found (a check failed, a model file is stale, a token ID could not be decoded)",
    EXIT_USAGE: "usage error: bad arguments, unreadable input, invalid knowledge base",
    EXIT_UNREACHABLE: "a server or the Hub could not be reached",
    EXIT_AUTH: "authentication required or rejected",
}


class DoctorError(Exception):
    """A failure with a one-line message and an exit code."""

    exit_code = EXIT_USAGE
    kind = "error"

    def __init__(self, message: str, *, hint: str | None = None, exit_code: int | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(DoctorError):
    exit_code = EXIT_USAGE
    kind = "usage"


class UnreachableError(DoctorError):
    exit_code = EXIT_UNREACHABLE
    kind = "unreachable"


class AuthError(DoctorError):
    exit_code = EXIT_AUTH
    kind = "auth"


def describe_exception(exc: BaseException) -> DoctorError | None:
    """Map a foreign exception to a DoctorError, or None when it is a bug.

    The table is checked by class name so that httpx / huggingface_hub need
    not be imported here (they are heavy and only some commands use them).
    """
    if isinstance(exc, DoctorError):
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if names & {"GatedRepoError"}:
        return AuthError(f"the repository is gated: accept its terms on the Hub and set HF_TOKEN ({text})")
    if names & {"RepositoryNotFoundError", "RevisionNotFoundError", "EntryNotFoundError"}:
        return UsageError(f"not found on the Hub: {text}")
    if names & {"OfflineModeIsEnabled"}:
        return UnreachableError("HF_HUB_OFFLINE is set: the Hub cannot be asked (unset it to compare with the Hub)")
    if names & {"ConnectError", "ConnectTimeout", "ReadTimeout", "TimeoutException", "NetworkError", "RemoteProtocolError"}:
        return UnreachableError(f"network error: {text}")
    if names & {"InvalidURL", "UnsupportedProtocol"}:
        return UsageError(f"invalid URL: {text}")
    if isinstance(exc, UnicodeDecodeError):
        return UsageError("input is not valid UTF-8 text")
    if isinstance(exc, PermissionError):
        return UsageError(f"permission denied: {exc.filename or text}")
    if isinstance(exc, FileNotFoundError):
        return UsageError(f"no such file: {exc.filename or text}")
    if isinstance(exc, IsADirectoryError):
        return UsageError(f"is a directory: {exc.filename or text}")
    if isinstance(exc, OSError) and getattr(exc, "errno", None) == 28:
        return UsageError(f"disk full: {exc.filename or text}")
    return None
