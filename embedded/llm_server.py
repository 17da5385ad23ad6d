"""The local LLM server: llama-cpp-python's OpenAI-compatible server, with grammar-constrained output sampled
the way llama.cpp's own server samples it (embedded/grammar_sampling.py). Takes the server's own flags:
`python -m embedded.llm_server --model M.gguf --port 8080 ...` (`python -m llama_cpp.server --help`)."""

from __future__ import annotations

import logging


def main() -> None:
    from llama_cpp.server.__main__ import main as serve

    from embedded.grammar_sampling import install

    logging.basicConfig(level=logging.INFO)
    if install():
        logging.getLogger(__name__).info("grammar_sampling: the grammar checks the sampled token first")
    serve()


if __name__ == "__main__":
    main()
