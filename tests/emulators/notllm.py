"""A plain web server (nginx-like) that is not an LLM server at all."""
from __future__ import annotations

from ._base import Engine
from ._http import Request, Response, text_response

INDEX = ("<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>\n<body>\n"
         "<h1>Welcome to nginx!</h1>\n<p>If you see this page, the nginx web server is successfully installed and\n"
         "working. Further configuration is required.</p>\n</body>\n</html>\n")


def _page(code: int, phrase: str) -> str:
    return (f"<html>\r\n<head><title>{code} {phrase}</title></head>\r\n<body>\r\n<center><h1>{code} {phrase}</h1>"
            f"</center>\r\n<hr><center>nginx/1.24.0</center>\r\n</body>\r\n</html>\r\n")


class NotLLM(Engine):
    name = "not-llm"
    default_version = "1.24.0"
    default_model = ""
    health_paths = ()
    lowercase_headers = False

    @property
    def server_header(self) -> str:
        return f"nginx/{self.version}"

    def handle(self, req: Request) -> Response:
        if self.has("dead"):
            return text_response(_page(502, "Bad Gateway"), status=502, content_type="text/html")
        if req.path in ("/", "/index.html"):
            if req.method in ("GET", "HEAD"):
                return text_response(INDEX, content_type="text/html")
            return text_response(_page(405, "Not Allowed"), status=405, content_type="text/html")
        return text_response(_page(404, "Not Found"), status=404, content_type="text/html")


ENGINE_CLASSES = {"not-llm": NotLLM}
