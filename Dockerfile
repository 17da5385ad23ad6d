# One image for the worker, the bridge, the chat API and the one-shots that run this project's code
# (docker-compose.yml builds it once, as tg-confidence-agent:local, and picks each service's command).
FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml requirements.lock requirements-meaning.lock README.md ./
# Every package pyproject.toml installs (tests/integration/test_compose.py checks the list stays complete).
COPY contracts ./contracts
COPY cypher ./cypher
COPY questions ./questions
COPY confidence ./confidence
COPY planning ./planning
COPY overrides ./overrides
COPY actions ./actions
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
RUN pip install --no-cache-dir --constraint requirements.lock . \
    && pip install --no-cache-dir --no-deps -r requirements-meaning.lock
# A user of its own, and the directory of the audit trail's default path (~/.tg-confidence/audit.jsonl)
# owned by it: a named volume mounted there starts with this owner and mode (Docker copies them into an
# empty volume), so the worker can write the trail without any setting.
RUN groupadd --system --gid 10001 tgca \
    && useradd --system --uid 10001 --gid tgca --create-home --home-dir /home/tgca --shell /usr/sbin/nologin tgca \
    && install -d -o tgca -g tgca -m 0700 /home/tgca/.tg-confidence
# Numeric, so an orchestrator can tell it is not root without reading /etc/passwd; HOME spelled out for the
# same reason (the audit path's default is under it).
ENV HOME=/home/tgca
USER 10001:10001
CMD ["tg-confidence-agent"]
