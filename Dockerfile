# syntax=docker/dockerfile:1
# Portico's container image: compiled with the full toolchain, run on slim Node.js 24 with
# production dependencies only, as an unprivileged user. Build: `docker build -t portico .`
# Operations (replicas, Redis, probes, shutdown): docs/operations.md.

ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Build: every dependency (TypeScript, Vite), then tsc into dist/ and the admin console into
#    dist/console/app/ (docs/console.md).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json vite.config.ts ./
COPY src ./src
RUN npm run build

# 2. Production dependencies only, resolved from the same lockfile.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# 3. Optional stdio MCP servers shipped beside Portico (docs/upstream-mcp.md "stdio upstreams"):
#    npm packages installed into /opt/mcp-servers, which `stdio` providers of the bootstrap file
#    run, e.g. "command": "/opt/mcp-servers/node_modules/.bin/mcp-server-everything". None by default:
#    `docker build --build-arg STDIO_NPM_PACKAGES="@modelcontextprotocol/server-everything@2026.8.31" .`
#    (a Python server: install it with pip or uv into a venv in a stage like this one).
FROM ${NODE_IMAGE} AS stdio-servers
ARG STDIO_NPM_PACKAGES=""
WORKDIR /opt/mcp-servers
RUN echo '{"private": true}' > package.json \
 && if [ -n "$STDIO_NPM_PACKAGES" ]; then \
      npm install --omit=dev --no-audit --no-fund $STDIO_NPM_PACKAGES && npm cache clean --force; \
    fi

# 4. Runtime: dist/, production node_modules and package.json (read at boot for the version).
FROM ${NODE_IMAGE} AS runtime
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="portico" \
      org.opencontainers.image.description="A multi-tenant gateway for the Model Context Protocol" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.documentation="docs/operations.md"
WORKDIR /app
# Files stay owned by root and read-only to the process: the root filesystem can be mounted
# read-only (Kubernetes readOnlyRootFilesystem); Portico writes nothing to disk.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The stdio servers of stage 3 (an empty folder unless STDIO_NPM_PACKAGES named some).
COPY --from=stdio-servers /opt/mcp-servers /opt/mcp-servers
# Bind every interface inside the container; PORTICO_PUBLIC_URL must then name the public URL
# (its host is the one Host that /mcp accepts besides PORTICO_ALLOWED_HOSTS).
ENV HOST=0.0.0.0 \
    PORT=8080
EXPOSE 8080
# The image's `node` user, by number so that Kubernetes runAsNonRoot can verify it.
USER 1000:1000
# No curl in slim images: Node's own fetch probes the liveness endpoint.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node as PID 1 is fine: Portico handles SIGTERM/SIGINT itself (graceful close, then exit).
# The `portico` command: `serve` (the default) runs the server as dist/main.js does; `connect <url>`
# runs the stdio bridge (`docker run --rm -i <image> connect <url>`, docs/connect.md).
ENTRYPOINT ["node", "dist/cli.js"]
CMD ["serve"]
