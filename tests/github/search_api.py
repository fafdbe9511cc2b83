"""A loopback server that speaks GitHub's issue-search API shape (GET /search/issues?q=…), for `explain --online`.

Shape from https://docs.github.com/en/rest/search/search#search-issues-and-pull-requests: a JSON object with
total_count, incomplete_results and items, each item with number, title, html_url, state, updated_at.
"""

from __future__ import annotations

from emulators._http import HTTPApp, Request, Response, json_response


class SearchAPI(HTTPApp):
    server_header = "GitHub.com"

    def __init__(self, items_by_repo: dict[str, list[dict]] | None = None, status: int = 200):
        super().__init__()
        self.items_by_repo = items_by_repo or {}
        self.status = status

    def handle(self, req: Request) -> Response:
        if req.path != "/search/issues":
            return json_response({"message": "Not Found"}, 404)
        if self.status != 200:
            return json_response({"message": "API rate limit exceeded"}, self.status)
        q = req.query.get("q") or ""
        repo = q.rsplit("repo:", 1)[-1].strip() if "repo:" in q else ""
        items = self.items_by_repo.get(repo, [])
        return json_response({"total_count": len(items), "incomplete_results": False, "items": items})
