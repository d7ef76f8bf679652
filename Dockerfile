# syntax=docker/dockerfile:1
# loopd: build with the dev dependencies, run with the production ones only.
#   docker build -t loopd .
#   docker run -p 3000:3000 -v loopd-data:/app/data loopd        # embedded Postgres (PGlite) in /app/data
#   docker run -p 3000:3000 -e DATABASE_URL=postgres://… loopd   # a Postgres server
# The container listens on all of its interfaces, so API keys are required: the first start
# prints one (tenant `default`) in the log; `node dist/cli/keys.js create --tenant <name>` makes more.
# `docker compose up` starts it with a Postgres server (docker-compose.yml).

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data \
    WORKSPACE_DIR=/app/workspace
WORKDIR /app
# run_command and stdio MCP servers run under bubblewrap (TOOL_SANDBOX): it needs user namespaces, which Docker's default
# seccomp profile refuses; run with --security-opt seccomp=unconfined (or a profile allowing them), or set TOOL_SANDBOX=none.
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
COPY --from=prod-deps --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# dist/store/db.js reads ../../migrations, i.e. /app/migrations, and applies them at start.
COPY --chown=node:node migrations ./migrations
COPY --chown=node:node package.json ./
RUN mkdir -p /app/data /app/workspace && chown node:node /app/data /app/workspace
USER node
EXPOSE 3000
# Liveness: /healthz asks no database and is never shed under load (readiness is /readyz).
# The slim image has no curl: ask it with Node's own fetch.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node directly (not npm start, whose prestart would rebuild): signals reach loopd, which shuts down gracefully.
CMD ["node", "dist/main.js"]
