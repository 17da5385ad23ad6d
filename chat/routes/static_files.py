"""GET /static/{name}: the chat page's scripts and style sheet (chat/static/), served without a token as the
page itself is. Only the files that ship in that directory are answered: a name is looked up, never joined
into a path."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from chat.routes.page import STATIC

router = APIRouter()
MEDIA_TYPES = {".js": "text/javascript", ".css": "text/css"}
# The page and its parts change together: a browser asks again rather than mixing an old script with a new page.
HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


@router.get("/static/{name}", include_in_schema=False)
async def static_file(name: str) -> FileResponse:
    shipped = {p.name: p for p in STATIC.iterdir() if p.is_file() and p.suffix in MEDIA_TYPES}
    if name not in shipped:
        raise HTTPException(404, f"no static file {name}")
    path = shipped[name]
    return FileResponse(path, media_type=MEDIA_TYPES[path.suffix], headers=HEADERS)
