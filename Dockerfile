# One image for the worker, the bridge and the chat API (docker-compose.yml picks the command).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
# Every package pyproject.toml installs (tests/integration/test_compose.py checks the list stays complete).
COPY contracts ./contracts
COPY confidence_core ./confidence_core
COPY tools ./tools
COPY backends ./backends
COPY workflows ./workflows
COPY activities ./activities
COPY service ./service
COPY worker ./worker
COPY bridge ./bridge
COPY embedded ./embedded
COPY cli ./cli
COPY chat ./chat
RUN pip install --no-cache-dir --constraint requirements.lock .
USER nobody
CMD ["tg-confidence-agent"]
