# One image for the worker and the bridge (docker-compose.yml picks the command).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY confidence_core ./confidence_core
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY bridge ./bridge
COPY embedded ./embedded
COPY cli ./cli
RUN pip install --no-cache-dir --constraint requirements.lock .
USER nobody
CMD ["tg-confidence-agent"]
