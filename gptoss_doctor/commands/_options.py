"""Options several commands share, declared once (Typer reads ``Annotated`` metadata)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
OfflineFlag = Annotated[bool, typer.Option("--offline", help="Never download the vocabulary.")]
UrlModel = Annotated[Optional[str], typer.Option("--model", metavar="NAME", help="Model name for --url.")]
