"""The local LLM server: llama-cpp-python's OpenAI-compatible server, with grammar-constrained output sampled
the way llama.cpp's own server samples it (embedded/grammar_sampling.py) and the written tokens'
log-probabilities on request (embedded/token_logprobs.py). Takes the server's own flags:
`python -m embedded.llm_server --model M.gguf --port 8080 ...` (`python -m llama_cpp.server --help`)."""

from __future__ import annotations

import logging


def main() -> None:
    from llama_cpp.server.__main__ import main as serve

    from embedded import grammar_sampling, token_logprobs

    logging.basicConfig(level=logging.INFO)
    log = logging.getLogger(__name__)
    if grammar_sampling.install():
        log.info("grammar_sampling: the grammar checks the sampled token first")
    if token_logprobs.install():  # after grammar_sampling: it records whichever sampler that one builds
        log.info("token_logprobs: chat completions answer logprobs: true")
    serve()


if __name__ == "__main__":
    main()
