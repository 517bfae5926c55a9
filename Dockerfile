# The Sluice server image (docs/guide/container.md, which also shows a build without Docker Hub):
#   podman build --format docker -t sluice .     (or: docker build -t sluice .)
#   podman run -d --name sluice -p 127.0.0.1:9324:9324 -v sluice-data:/data sluice
# --format docker keeps the HEALTHCHECK (podman's default OCI format drops it); -p 127.0.0.1:... publishes the
# port on this machine's loopback only: the server in the image has no access keys unless you give it some.
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
# (no access keys) unless you give it some, and then prints a WARNING block at every start. Keys: mount a
# config file and name it in SLUICE_CONFIG (-v ./sluice.json:/etc/sluice/config.json:ro
# -e SLUICE_CONFIG=/etc/sluice/config.json). SLUICE_IN_CONTAINER makes the start lines say that the address
# is the container's, not the host's. Any flag given to `serve` wins over these. See docs/guide/container.md.
ENV PATH=/opt/sluice/node_modules/.bin:$PATH \
  SLUICE_HOST=0.0.0.0 \
  SLUICE_DATA=/data \
  SLUICE_INSECURE=1 \
  SLUICE_IN_CONTAINER=1
RUN mkdir /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 9324
# The image has no curl: Node asks /health itself (127.0.0.1 is a Host the server always accepts).
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9324/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["sluice"]
CMD ["serve"]
