"""`explain --online`: ask GitHub's issue search for the normalised message when no known issue matches.

Off by default. The hits are unverified leads (titles written by strangers), listed with their links; nothing
from them enters the knowledge base. No token is sent: the search API answers unauthenticated requests (at a
lower rate), and a token must never travel to a host the user did not choose. The API base can be pointed at
another server that speaks the same documented shapes with GPTOSS_DOCTOR_GITHUB_API (the tests use a loopback one).
GitHub's documented search endpoint: https://docs.github.com/en/rest/search/search#search-issues-and-pull-requests
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import asdict, dataclass
from urllib.parse import quote

DEFAULT_API = "https://api.github.com"
MAX_REPOS = 4
PER_REPO = 5
DEADLINE = 12.0  # seconds for the whole search, whatever the server does


@dataclass
class Lead:
    repo: str
    number: int
    title: str
    url: str
    state: str
    updated_at: str

    def to_json(self) -> dict:
        return asdict(self)


def api_base() -> str:
    return os.environ.get("GPTOSS_DOCTOR_GITHUB_API", DEFAULT_API).rstrip("/")


def _printable(text: str) -> str:
    """Control characters shown as escapes: a stranger's title must not drive the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _leads(repo: str, data) -> list[Lead]:
    items = data.get("items") if isinstance(data, dict) else None
    out: list[Lead] = []
    for it in (items if isinstance(items, list) else [])[:PER_REPO]:
        if not isinstance(it, dict):
            continue
        url, title = it.get("html_url"), it.get("title")
        if not (isinstance(url, str) and url.startswith("https://") and isinstance(title, str)):
            continue
        num = it.get("number")
        out.append(Lead(repo, num if isinstance(num, int) else 0, _printable(title[:200]), _printable(url[:300]),
                        _printable(str(it.get("state") or "")[:20]), _printable(str(it.get("updated_at") or "")[:40])))
    return out


async def _search(query: str, repos: list[str], phrase: bool = True) -> tuple[list[Lead], list[str]]:
    from gptoss_doctor.net.http import Client

    leads: list[Lead] = []
    problems: list[str] = []
    async with Client(api_base(), timeout=8.0, json_limit=512 * 1024) as client:
        async def one(repo: str) -> None:
            terms = f'"{query[:120]}"' if phrase else " ".join(query.replace('"', " ").split()[:8])
            q = quote(f"{terms} repo:{repo}", safe="")
            r = await client.get(f"/search/issues?q={q}&per_page={PER_REPO}", auth=False)
            if not r.ok:
                problems.append(f"{repo}: {r.describe()}")
                return
            data = r.json()
            if data is None:
                problems.append(f"{repo}: the answer is not JSON")
            elif not (isinstance(data, dict) and isinstance(data.get("items"), list)):
                problems.append(f"{repo}: the answer has no list of items (not GitHub's issue-search shape)")
            else:
                leads.extend(_leads(repo, data))

        await asyncio.wait_for(asyncio.gather(*(one(r) for r in repos[:MAX_REPOS])), timeout=DEADLINE)
    return leads, problems


def search(query: str, repos: list[str], phrase: bool = True) -> tuple[list[Lead], list[str]]:
    """(leads, problems) for ``query`` in ``repos`` (as one quoted phrase, or with ``phrase=False`` as words);
    never raises for network trouble. The query goes through the one redactor first: a key pasted with the error
    never travels to the search API."""
    from gptoss_doctor.redact import redact

    try:
        return asyncio.run(_search(redact(query), repos, phrase))
    except asyncio.TimeoutError:
        return [], [f"the issue search did not finish within {DEADLINE:g} s"]
