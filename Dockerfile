# Palisade: multi-stage build on Debian (uWebSockets.js binaries need glibc: no Alpine).
FROM node:20-bookworm AS build
WORKDIR /app
# node-gyp builds against the image's own Node headers (nothing is downloaded).
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json binding.gyp tsconfig.json ./
COPY native ./native
COPY src ./src
COPY scripts ./scripts
COPY test ./test
COPY bench ./bench
COPY eval ./eval
COPY console ./console
# Builds the addon (install script), the TypeScript and the console (prepare), then drops dev dependencies.
RUN npm ci && npm prune --omit=dev

FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data && chown node:node /data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/build/Release/palisade.node ./build/Release/palisade.node
COPY --from=build --chown=node:node /app/build/pglite-template ./build/pglite-template
COPY --from=build --chown=node:node /app/dist/src ./dist/src
COPY --from=build --chown=node:node /app/dist/console ./dist/console
ENV NODE_ENV=production DATA_DIR=/data PORT=8080
VOLUME ["/data"]
EXPOSE 8080
USER node
# tini is PID 1: it forwards SIGTERM to the primary (which drains the workers) and reaps zombies.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 CMD ["node", "dist/src/healthcheck.js"]
