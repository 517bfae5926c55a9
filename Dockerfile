# The Sluice server image: podman build -t sluice .   (or docker build)
# Then: podman run -p 9324:9324 -v sluice-data:/data sluice   (docs/guide/container.md)
ARG NODE_IMAGE=node:22-bookworm-slim

# 1. The two packages built to JavaScript and packed, exactly as npm publishes them.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/client/package.json packages/client/
COPY packages/server/package.json packages/server/
# TypeScript is all this stage runs: no install scripts, so nothing is compiled here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.base.json ./
COPY packages/client packages/client
COPY packages/server packages/server
RUN mkdir /packs && npm pack --workspace sluice-client --workspace sluice --pack-destination /packs

# 2. The server installed from those tarballs with its production dependencies, as a user installs it:
# better-sqlite3's native module is compiled here (node-gyp, on every core), against the runtime's Node.
FROM ${NODE_IMAGE} AS install
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/sluice
COPY --from=build /packs /packs
RUN echo '{ "private": true, "allowScripts": { "better-sqlite3": true } }' > package.json \
  && JOBS=max npm install --omit=dev --no-audit --no-fund /packs/sluice-client-*.tgz /packs/sluice-[0-9]*.tgz

# 3. The runtime: Node, the installed server and a data volume; no compiler, no npm cache, no sources.
FROM ${NODE_IMAGE}
COPY --from=install /opt/sluice /opt/sluice
# Inside a container, 127.0.0.1 is unreachable from the host: the image binds every address and is open
# (no credentials) unless you configure some; the server prints that SLUICE_INSECURE is on when it starts.
# Any flag given to `serve` wins over these. See docs/guide/container.md.
ENV PATH=/opt/sluice/node_modules/.bin:$PATH \
  SLUICE_HOST=0.0.0.0 \
  SLUICE_DATA=/data \
  SLUICE_INSECURE=1
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 9324
# The image has no curl: Node asks /health itself (127.0.0.1 is a Host the server always accepts).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9324/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["sluice"]
CMD ["serve"]
