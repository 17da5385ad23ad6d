"""The chat API's same-site checks compare the whole Host and the whole Origin. A Host read through a URL
parser let `evil.example@localhost` and `localhost#.evil.example` pass as "localhost", and the Origin check
compared only `name:port`, so a page on `https://` (or any other scheme) at the API's name and port passed
as the API's own `http://` page. Each is refused now, against the real chat app over the real stack, while
the API's own names, its own origin and the configured ones are still answered."""

from __future__ import annotations

from embedded import demo_graph
from tests.chat_server import chat_server
from tests.integration.test_action_path import DomainModel
from tests.scripted_llm import ScriptedLLM


async def test_a_host_or_origin_that_only_parses_as_ours_is_refused(make_stack, demo_copy, unique: str) -> None:
    graph_name, _ = demo_copy
    with ScriptedLLM(DomainModel({})) as llm:
        stack = await make_stack(llm.base_url, graph_name=graph_name, ontology_path=str(demo_graph.ONTOLOGY_PATH))
        async with chat_server(stack, origins=["https://ops.example"]) as server, server.client() as http:
            port = server.url.rsplit(":", 1)[1]
            hosts = [
                f"evil.example@localhost:{port}",
                f"evil.example@127.0.0.1:{port}",
                "localhost#.evil.example",
                f"127.0.0.1:{port}#.evil.example",
                "localhost/.evil.example",
                f"localhost:{port}?.evil.example",
                f"localhost:{port} .evil.example",
            ]
            by_host = {host: await http.get("/actions", headers={"Host": host}) for host in hosts}
            origins = [
                f"https://127.0.0.1:{port}",
                f"ws://127.0.0.1:{port}",
                f"ftp://127.0.0.1:{port}",
                f"http://evil.example@127.0.0.1:{port}",
                f"http://127.0.0.1:{port}/.evil.example",
                "http://ops.example",
            ]  # the configured origin, on another scheme
            by_origin = {
                origin: await http.post("/actions/no-such-action/undo", headers={"Origin": origin})
                for origin in origins
            }
            # What is ours is still answered: the API's names, its own origin, the configured one.
            answered = [
                await http.get("/actions", headers=headers)
                for headers in (
                    {},
                    {"Host": f"localhost:{port}"},
                    {"Host": "localhost"},
                    {"Host": f"[::1]:{port}"},
                    {"Origin": server.url},
                    {"Origin": "https://ops.example"},
                )
            ]

    for host, response in by_host.items():
        assert response.status_code == 403, (host, response.status_code, response.text)
        assert "does not answer to the host name" in response.json()["detail"], host
    for origin, response in by_origin.items():
        assert response.status_code == 403, (origin, response.status_code, response.text)
        assert f"cross-site requests from {origin!r} are refused" in response.json()["detail"]
    assert [r.status_code for r in answered] == [200] * len(answered), [r.text for r in answered]
