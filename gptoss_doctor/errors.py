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


def describe_exception(exc: BaseException, *, repo_id: str | None = None, revision: str = "main") -> DoctorError | None:
    """The one exception table: a foreign exception as a DoctorError (kind, message, hint, exit code), or None when
    it is a bug. With ``repo_id`` the exception came from talking to the Hub about that repo, and the messages say so.

    The table is checked by class name so that httpx / huggingface_hub need not be imported here (they are heavy
    and only some commands use them).
    """
    if isinstance(exc, DoctorError):
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    if repo_id is not None:
        hub = _hub(exc, names, repo_id, revision)
        if hub is not None:
            return hub
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


def _hub(exc: BaseException, names: set, repo_id: str, revision: str) -> DoctorError | None:
    """The rows for an exception raised while talking to the Hub about ``repo_id``@``revision``."""
    from gptoss_doctor import settings
    from gptoss_doctor.redact import redact

    first = redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    endpoint = settings.hub_endpoint_shown()
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if "OfflineModeIsEnabled" in names or settings.hub_offline():
        return UnreachableError(
            "HF_HUB_OFFLINE is set: cannot compare with the Hub",
            hint="unset HF_HUB_OFFLINE (and TRANSFORMERS_OFFLINE) to check and refresh the files; nothing was changed",
        )
    if "GatedRepoError" in names:
        return AuthError(
            f"{repo_id} is gated: accept its terms on the Hub and set HF_TOKEN",
            hint="nothing was changed",
        )
    if "RevisionNotFoundError" in names:
        return UsageError(f"revision {revision!r} not found in {repo_id} on {endpoint}")
    if "RemoteEntryNotFoundError" in names or "EntryNotFoundError" in names:
        return UsageError(f"a file is missing on the Hub for {repo_id}@{revision}: {first}", hint="nothing was changed")
    if "RepositoryNotFoundError" in names or status in (401, 403):
        resp = getattr(exc, "response", None)
        headers = getattr(resp, "headers", None) or {}
        code = headers.get("X-Error-Code", "") if hasattr(headers, "get") else ""
        emsg = headers.get("X-Error-Message", "") if hasattr(headers, "get") else ""
        if status in (401, 403):
            if "invalid" in emsg.lower() or "credential" in emsg.lower() or (settings.hf_token_set() and code != "RepoNotFound"):
                return AuthError(f"{endpoint} answered {status} for {repo_id}: the token in HF_TOKEN was rejected",
                                 hint="check HF_TOKEN (it is never printed); nothing was changed")
            if code == "RepoNotFound" and revision not in ("", "main", None):
                # the Hub (and mirrors) answer an unknown revision of a public repo like an unknown repo
                return UsageError(f"{endpoint} found no {repo_id}@{revision}: the revision does not exist (or the "
                                  "repository is private and HF_TOKEN is missing)",
                                  hint="check --revision (a branch, tag or full commit id); nothing was changed")
            if code == "RepoNotFound":
                return AuthError(f"{endpoint} answered {status} for {repo_id}@{revision}: not found, or private and HF_TOKEN is missing or lacks access",
                                 hint="check the repo id and --revision, or set HF_TOKEN; nothing was changed")
            return AuthError(f"{endpoint} answered {status} for {repo_id}: authentication required, set HF_TOKEN", hint="nothing was changed")
        return UsageError(f"repository {repo_id} not found on {endpoint}")
    if names & {"ConnectError", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutException",
                "NetworkError", "RemoteProtocolError", "ReadError", "ConnectionError", "TransportError",
                "LocalEntryNotFoundError", "ProtocolError"}:
        return UnreachableError(f"the Hub at {endpoint} could not be reached: {first}", hint="nothing was changed")
    if "HfHubHTTPError" in names:
        if status is not None and status >= 500:
            return UnreachableError(f"the Hub at {endpoint} failed ({status}): {first}", hint="nothing was changed")
        return UsageError(f"Hub error for {repo_id}: {first}")
    if isinstance(exc, OSError) and getattr(exc, "errno", None) is None and not isinstance(exc, (PermissionError, FileNotFoundError)):
        return UnreachableError(f"download from {endpoint} failed: {first}", hint="nothing was changed")
    return None
